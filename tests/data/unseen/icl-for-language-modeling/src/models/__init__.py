from .transformer import *
from .icl import *