#!/bin/bash

# make sure only first task per node installs stuff, others wait
DONEFILE="/netscratch/$USER/mnist_1/install_done_${SLURM_JOBID}"
if [[ $SLURM_LOCALID == 0 ]]; then
  
  # put your install commands here:
#   apt update
#   apt install -y [...]
#   apt clean
#   conda install -y [...]
  pip install -r requirements.txt
  
  # Tell other tasks we are done installing
  touch "${DONEFILE}"
else
  # Wait until packages are installed
  while [[ ! -f "${DONEFILE}" ]]; do sleep 1; done
fi

# This runs your wrapped command
"$@"