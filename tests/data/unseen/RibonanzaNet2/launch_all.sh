#!/bin/bash

sbatch slurm_scripts/job_0.sh
sbatch slurm_scripts/job_1.sh
sbatch slurm_scripts/job_2.sh
sbatch slurm_scripts/job_3.sh
sbatch slurm_scripts/job_4.sh
sbatch slurm_scripts/job_5.sh
sbatch slurm_scripts/job_6.sh
sbatch slurm_scripts/job_7.sh
sbatch slurm_scripts/job_8.sh
sbatch slurm_scripts/job_9.sh
sbatch slurm_scripts/job_10.sh
sbatch slurm_scripts/job_11.sh
sbatch slurm_scripts/job_12.sh
sbatch slurm_scripts/job_13.sh
sbatch slurm_scripts/job_14.sh
sbatch slurm_scripts/job_15.sh
