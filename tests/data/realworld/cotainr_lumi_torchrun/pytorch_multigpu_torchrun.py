import os
import torch.distributed as dist

if __name__ == "__main__":
    dist.init_process_group(backend="nccl")
    print(os.environ["LOCAL_RANK"])
