from __main__ import *
