from lightning.pytorch.cli import LightningCLI

if __name__ == "__main__":
    LightningCLI()
