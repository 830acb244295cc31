import json
import os
import sys
from typing import Optional

sys.path.insert(0, "../")
import pytorch_lightning as pl
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint
from pytorch_lightning.loggers import WandbLogger

from cancerfoundation.callbacks import (
    CellTypeProbeCallback,
    MeanBaselineCallback,
    ScibMetricsCallback,
)
from cancerfoundation.data.data_module import SingleCellDataModule
from cancerfoundation.model.model import CancerFoundation
from utils import MyProgressBar, get_args


def train_model(
    model: CancerFoundation,
    datamodule: pl.LightningDataModule,
    max_epochs: int,
    save_dir: str,
    precision: str,
    num_nodes: int,
    gpus: int,
    wandb_project: Optional[str],
    wandb_entity: Optional[str],
    wandb_name: Optional[str],
    resume_from_checkpoint: Optional[str],
    strategy: str,
    gradient_clip_val: float,
    accumulate_grad_batches: int,
    val_check_interval: float,
    log_interval: int,
    save_every: bool,
    extra_callbacks: Optional[list] = None,
):
    """
    Train the model using PyTorch Lightning Trainer

    Args:
        lightning_module: The LightningModule to train
        max_epochs: Maximum number of epochs
        save_dir: Directory to save checkpoints
        wandb_project: Wandb project name for logging
        resume_from_checkpoint: Path to checkpoint to resume from
        accelerator: Accelerator type ('cpu', 'gpu', 'tpu', 'auto')
        devices: Number of devices to use ('auto', int, or list)
        strategy: Training strategy ('auto', 'ddp', 'deepspeed', etc.)
        precision: Precision ('16-mixed', '32', 'bf16-mixed')
        accumulate_grad_batches: Number of batches to accumulate gradients
        gradient_clip_val: Gradient clipping value
        val_check_interval: Validation frequency
        pretrained_model_path: Path to pretrained model weights
    """

    # Setup callbacks
    callbacks = []
    callbacks.append(MyProgressBar(refresh_rate=log_interval))
    # Model checkpointing
    checkpoint_callback = ModelCheckpoint(
        dirpath=save_dir,
        filename="epoch_{epoch:02d}",
        every_n_epochs=1,
        save_top_k=-1 if save_every else 1,
    )
    callbacks.append(checkpoint_callback)

    # Learning rate monitoring
    lr_monitor = LearningRateMonitor(logging_interval="step")
    callbacks.append(lr_monitor)

    if extra_callbacks:
        callbacks.extend(extra_callbacks)

    logger = None

    # logger = None
    global_rank = int(os.environ.get("GLOBAL_RANK", os.environ.get("RANK", "0")))
    if wandb_project and global_rank == 0:
        logger = WandbLogger(
            entity=wandb_entity,
            project=wandb_project,
            name=wandb_name,
            save_dir=save_dir,
        )
        # Set epoch as x-axis for all evaluation metrics
        import wandb

        _ = logger.experiment  # ensure wandb.init() has been called
        wandb.define_metric("val/*", step_metric="epoch")
        wandb.define_metric("scib/*", step_metric="epoch")
        wandb.define_metric("celltype_probe/*", step_metric="epoch")

    # Create trainer
    trainer = pl.Trainer(
        max_epochs=max_epochs,
        accelerator="gpu",
        devices=gpus,
        num_nodes=num_nodes,
        strategy=strategy,
        precision=precision,
        accumulate_grad_batches=accumulate_grad_batches,
        gradient_clip_val=gradient_clip_val,
        val_check_interval=val_check_interval,
        callbacks=callbacks,
        logger=logger,
        log_every_n_steps=log_interval,
        enable_progress_bar=True,
        enable_model_summary=True,
        use_distributed_sampler=False,
    )

    # Start training (pre-training baseline validation runs via on_fit_start
    # inside fit(), which is DDP-safe unlike a standalone trainer.validate())
    trainer.fit(model, datamodule=datamodule, ckpt_path=resume_from_checkpoint)

    return trainer


def main():
    args = get_args()
    if args.seed is not None:
        pl.seed_everything(args.seed, workers=True)

    datamodule = SingleCellDataModule(
        data_path=args.train_path,
        zero_percentages=args.zero_percentages,
        batch_size=args.batch_size,
        conditions=args.conditions,
        balance_primary=args.balance_primary,
        balance_secondary=args.balance_secondary,
        max_seq_len=args.max_seq_len,
        input_style=args.input_style,
        mask_ratio=args.mask_ratio,
        TRUNC_BY_SAMPLE=args.trunc_by_sample,
        training_tasks=args.training_tasks,
        n_bins=args.n_bins,
        normalise_bins=args.normalise_bins,
        condition_token=args.where_condition == "begin",
        num_workers=args.num_workers,
    )
    datamodule.setup(stage="fit")

    if args.resume_from_checkpoint:
        model = CancerFoundation.load_from_checkpoint(
            args.resume_from_checkpoint, vocab=datamodule.vocab
        )
    else:
        model = CancerFoundation(
            n_bins=args.n_bins,
            vocab=datamodule.vocab,
            input_emb_style=args.input_emb_style,
            max_seq_len=args.max_seq_len,
            input_style=args.input_style,
            mask_ratio=args.mask_ratio,
            TRUNC_BY_SAMPLE=args.trunc_by_sample,
            training_tasks=args.training_tasks,
            embsize=args.embsize,
            nheads=args.nheads,
            d_hid=args.d_hid,
            nlayers=args.nlayers,
            dropout=args.dropout,
            lr=args.lr,
            epochs=args.epochs,
            warmup_ratio_or_step=args.warmup_ratio_or_step,
            scheduler_interval=args.scheduler_interval,
            scheduler_factor=args.scheduler_factor,
            loss_type=args.loss,
            do_dat=args.do_dat,
            no_invert_dat=args.no_invert_dat,
            conditions=args.conditions,
            conditions_nums=datamodule.conditions_nums if args.conditions else None,
            mvc_decoder_style=args.mvc_decoder_style,
            scale_zero_expression=args.scale_zero_expression,
            data_path=args.train_path,
            do_mvc=args.do_mvc,
            zero_percentages=args.zero_percentages,
            balance_primary=args.balance_primary,
            balance_secondary=args.balance_secondary,
            compile_model=args.compile,
            activation=args.activation,
            norm_first=args.norm_first,
            cell_emb_style=args.cell_emb_style,
            batchnorm=args.batchnorm,
            explicit_zero_prob=args.explicit_zero_prob,
            dat_scale=args.dat_scale,
            normalise_bins=args.normalise_bins,
            where_condition=args.where_condition,
            gen_method=args.gen_method,
            their_init_weights=args.their_init_weights,
        )

    if args.pretrained:
        print(f"Loading pretrained weights from {args.pretrained}.")
        vocab_pretrained = json.load(open(args.pretrained / "vocab.json", "r"))
        gene_mapping = {}
        for key, value in datamodule.vocab.items():
            if key in vocab_pretrained:
                gene_mapping[value] = vocab_pretrained[key]
        model.load_pretrained_weights(args.pretrained / "best_model.pt", gene_mapping=gene_mapping)

    # Setup extra callbacks
    extra_callbacks = []

    # Mean baseline callback
    n_genes = len(datamodule.vocab)
    extra_callbacks.append(
        MeanBaselineCallback(
            n_genes=n_genes,
            pad_value=model.pad_value,
            mask_value=model.mask_value,
        )
    )

    # ScibMetrics callback
    if args.eval_every_n_epochs is not None:
        extra_callbacks.append(
            ScibMetricsCallback(
                eval_every_n_epochs=args.eval_every_n_epochs,
                dataset_paths=args.eval_datasets,
                max_seq_len=args.max_seq_len,
                seed=args.seed,
            )
        )
        extra_callbacks.append(
            CellTypeProbeCallback(
                eval_every_n_epochs=args.eval_every_n_epochs,
                seed=args.seed,
            )
        )

    train_model(
        model=model,
        datamodule=datamodule,
        max_epochs=args.epochs,
        num_nodes=args.num_nodes,
        gpus=args.gpus,
        save_dir=args.save_dir,
        resume_from_checkpoint=args.resume_from_checkpoint,
        val_check_interval=args.val_check_interval,
        wandb_project=args.wandb,
        wandb_entity=args.wandb_entity,
        wandb_name=args.wandb_name,
        accumulate_grad_batches=args.grad_accu_steps,
        strategy=args.strategy,
        precision=args.precision,
        gradient_clip_val=args.gradient_clip_val,
        log_interval=args.log_interval,
        save_every=args.save_every,
        extra_callbacks=extra_callbacks,
    )


if __name__ == "__main__":
    main()
