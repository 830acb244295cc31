from .Fault_dataset import FaultDataset
from .Fault_dataset_multi_decode import FaultDataset_Multi_Decode
from .ops import rot_rand, aug_rand
