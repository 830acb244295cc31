ml purge
ml Stages/2020 GCC/9.3.0 OpenMPI/4.1.0rc1 PyTorch/1.8.1-Python-3.8.5 torchvision/0.9.1-Python-3.8.5
source $HOME/venvs/covid/bin/activate
