export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
if [ "$SYSTEMNAME" = juwelsbooster ]; then
    MASTER_ADDR="${MASTER_ADDR}i"
fi
export MASTER_PORT=54123
export NCCL_TIMEOUT=1800
