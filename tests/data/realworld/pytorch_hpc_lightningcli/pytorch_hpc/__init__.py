from .nn import *
from .pl import *
