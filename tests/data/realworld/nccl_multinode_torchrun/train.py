import datetime
import os

import torch.distributed as dist


def main():
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    print(os.environ.get("LOCAL_RANK"))


if __name__ == "__main__":
    main()
