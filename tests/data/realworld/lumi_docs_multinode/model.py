import lightning.pytorch as pl
import wandb


class LitModel(pl.LightningModule):
    pass
