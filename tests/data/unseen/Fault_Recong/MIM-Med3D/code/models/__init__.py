from .mae import MAE
from .simmim import ViTSimMIM, SwinSimMIM, SwinUNETR_SimMIM
from .unetr import UNETR
from .swin_unetr import SwinUNETR
from .swin_unetr_special_ssl import SSLHead, SSLHead_2Task
from .swin_unetr_multi_scale_decoder import SwinUNETR_Multi_Decoder
from .swin_unetr_seg_cls import SwinUNETR_Seg_Cls
from .swin_unetr_multi_scale_decoder_fusion import SwinUNETR_Multi_Decoder_Fusion
