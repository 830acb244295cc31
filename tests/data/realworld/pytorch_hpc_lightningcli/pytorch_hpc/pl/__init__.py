from .pl_data import *
from .pl_model import *
from .input_expansions import *
