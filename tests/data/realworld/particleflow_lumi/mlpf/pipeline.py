import os

import torch
import yaml
from mlpf.model.training import device_agnostic_run


def main():
    loader = torch.utils.data.DataLoader([], num_workers=8, prefetch_factor=100)
    return loader, device_agnostic_run
