from signjoey.training import train

train('configs/phoenix.yaml', sweep=True)