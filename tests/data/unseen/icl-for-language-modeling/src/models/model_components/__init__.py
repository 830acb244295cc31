from .transformer_components import *
from .icl_components import *
from .model_util import *
