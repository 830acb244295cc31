# Motion Transformer (MTR): https://arxiv.org/abs/2209.13508
# Published at NeurIPS 2022


import os
import subprocess

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


def get_git_commit_number():
    try:
        cmd_out = subprocess.run(["git", "rev-parse", "HEAD"], stdout=subprocess.PIPE)
        git_commit_number = cmd_out.stdout.decode("utf-8")[:7]
        return git_commit_number
    except Exception:
        return "0000000"


def make_cuda_ext(name, module, sources):
    cuda_ext = CUDAExtension(
        name=f"{module}.{name}",
        sources=[os.path.join(*module.split("."), src) for src in sources],
        # extra_compile_args={"cxx": ["-std=c++11"], "nvcc": ["-std=c++11"]},
    )
    return cuda_ext


def write_version_to_file(version, target_file):
    with open(target_file, "w") as f:
        print('__version__ = "%s"' % version, file=f)


if __name__ == "__main__":
    version = "0.1.0+%s" % get_git_commit_number()
    write_version_to_file(version, "mtr/version.py")

    setup(
        name="MotionTransformer",
        version=version,
        description="Motion Transformer (MTR), published at NeurIPS 2022",
        author="Shaoshuai Shi",
        author_email="shaoshuaics@gmail.com",
        license="Apache License 2.0",
        packages=find_packages(exclude=["tools", "data", "output"]),
        cmdclass={
            "build_ext": BuildExtension,
        },
        ext_modules=[
            make_cuda_ext(
                name="knn_cuda",
                module="mtr.ops.knn",
                sources=[
                    "src/knn.cpp",
                    "src/knn_gpu.cu",
                    "src/knn_api.cpp",
                ],
            ),
            make_cuda_ext(
                name="attention_cuda",
                module="mtr.ops.attention",
                sources=[
                    "src/attention_api.cpp",
                    "src/attention_func_v2.cpp",
                    "src/attention_func.cpp",
                    "src/attention_value_computation_kernel_v2.cu",
                    "src/attention_value_computation_kernel.cu",
                    "src/attention_weight_computation_kernel_v2.cu",
                    "src/attention_weight_computation_kernel.cu",
                ],
            ),
        ],
    )
