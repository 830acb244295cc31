#!/usr/bin/env bash

# This script rsync's top level files from local project
# to remote hpc, and queue's an sbatch job.

src="$HOME/Documents/ifcb"
proj_name=$(basename "$src")
host="user@poseidon.example.edu"
hpc_scratch="/vortexfs1/scratch/user/$proj_name"

flags=(-ruptv --exclude='*).py' --include='*.py' --include='batches/' --include='*.sbatch' --exclude='*')
# r recursivly send files; u don't overwrite newer files

echo ">> rsync ${flags[@]} $src/ $host:$hpc_scratch"
rsync ${flags[@]} $src/ $host:$hpc_scratch

ssh $host << EOF
    cd $hpc_scratch
    sbatch batches/train.sbatch "$@"
EOF
