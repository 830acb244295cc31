"""Everything a check may know about the job, besides live node facts: the Job
(context.py), the job scripts and the shell layer (sbatch.py, shell.py), the
effective environment (env.py), how the program is launched (launch.py), the
training configs (configs.py) and their DataLoader specs (loaders.py), the
repo's Python (sources.py), the platform (rocm.py) and torch versions
(versions.py). A check imports from here; if two checks need it, it lives here."""
