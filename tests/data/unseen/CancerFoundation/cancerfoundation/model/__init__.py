from .module import (
    TransformerModule,
    GeneEncoder,
    AdversarialDiscriminator,
    MVCDecoder,
)
from .grad_reverse import *