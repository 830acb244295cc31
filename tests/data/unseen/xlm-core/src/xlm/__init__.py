"""xlm"""

from .version import VERSION as __version__

__author__ = "Dhruvesh Patel"
__email__ = "1793dnp@gmail.com"
