from .ravd_metric import RavdMetric
from .dice import dice_coefficient_batch, dice_coefficient
from .acc import compute_acc, compute_acc_batch, compute_f1, compute_f1_batch
