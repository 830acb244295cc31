/lustre/fs0/scratch/shujun/miniconda3/envs/torch/bin/accelerate launch --config_file FSDP.yaml run.py
