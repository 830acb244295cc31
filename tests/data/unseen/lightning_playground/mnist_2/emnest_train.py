import os
import torch

import pytorch_lightning as pl
import torchvision.transforms as transforms

from emnest_autoencoder import Emnest_AutoEncoder

from lib.parser import parse_arguments


def main():
    args = parse_arguments()

    

    return

if __name__ == '__main__':
    main()