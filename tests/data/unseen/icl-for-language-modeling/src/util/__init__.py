from .lightning import *
from .checkpoints import *
from .training import *
from .evaluation import *