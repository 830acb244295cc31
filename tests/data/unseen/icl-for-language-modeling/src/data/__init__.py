from .tinystories_dataset import *
from .wikitext_dataset import *
from .tokenizer import *
from .goodwiki_dataset import *