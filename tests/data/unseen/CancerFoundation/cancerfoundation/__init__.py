
from . import model
from cancerfoundation.data.data_collator import AnnDataCollator
from cancerfoundation.data.data_sampler import get_balanced_sampler
from cancerfoundation.data.dataset import SingleCellDataset
from .loss import LossType

from .utils import load_pretrained
from .gene_tokenizer import GeneVocab