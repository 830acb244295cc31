#!/bin/bash
set -euo pipefail

export PYTHONPATH="/scratch/project_465002500/vcloud/code/src:/projappl/project_465002500/pylibs:${PYTHONPATH:-}"
export WANDB_MODE=disabled
export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True

python3 scripts/train.py --stage 0 --config config/model_full.yaml
