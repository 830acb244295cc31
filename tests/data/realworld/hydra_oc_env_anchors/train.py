import hydra
