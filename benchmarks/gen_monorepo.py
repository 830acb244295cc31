"""Generate a monorepo shaped like a large ML codebase, tracked in git (issue 17).

Packages of small modules (a few use DataLoader, wandb, torch.distributed, os._exit or
os.environ, as real code does), Hydra-style configs in groups with top-level experiment
configs that compose them through `defaults:` lists, and Slurm job scripts that
`srun python -m <pkg>.train` an experiment with overrides. The same seed gives the same
tree, byte for byte.

    python benchmarks/gen_monorepo.py DIR [--py 90000] [--configs 1000] [--scripts 200]
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path

GROUPS = ("model", "data", "optim", "trainer", "logger")


def plain_module(rng: random.Random, pkg: str, sub: str, i: int) -> str:
    sibling = rng.randrange(100)
    fn = f"f{i}"
    lines = [f'"""{pkg}.{sub}.mod_{i}: helpers."""', "from __future__ import annotations", "",
             "import math", f"from {pkg}.{sub} import mod_{sibling} as other", "", "",
             f"def {fn}(x, scale={rng.randrange(1, 9)}):",
             '    """Scale and shift."""',
             f"    y = x * scale + {rng.random():.4f}",
             "    if y > 1e6:",
             "        raise ValueError(f'too big: {y}')",
             "    return math.sqrt(abs(y))", "", "",
             f"class Block{i}:",
             "    def __init__(self, dim=64):",
             "        self.dim = dim",
             f"        self.name = '{pkg}-{sub}-{i}'", "",
             "    def forward(self, x):",
             f"        return [{fn}(v) for v in x][: self.dim]", ""]
    return "\n".join(lines)


def dataloader_module(rng: random.Random, pkg: str, i: int) -> str:
    alias = rng.choice(["DataLoader", "DL"])
    imp = "from torch.utils.data import DataLoader" + (" as DL" if alias == "DL" else "")
    workers = rng.choice(["0", "4", "cfg.get('num_workers', 8)", "args.workers"])
    return "\n".join([
        f'"""{pkg}: data loading ({i})."""', "import os", "", "import torch", imp, "", "",
        "def build_loader(dataset, cfg, args):",
        f"    return {alias}(dataset, batch_size=cfg.get('batch_size', 32),",
        f"                   num_workers={workers}, pin_memory=True,",
        "                   persistent_workers=True, prefetch_factor=2)", ""])


def dist_module(rng: random.Random, pkg: str, i: int) -> str:
    return "\n".join([
        f'"""{pkg}: distributed helpers ({i})."""', "import datetime", "import os", "",
        "import torch", "import torch.distributed as dist", "", "",
        "def setup():",
        "    dist.init_process_group('nccl', timeout=datetime.timedelta(minutes=30))",
        "    torch.cuda.set_device(int(os.environ.get('LOCAL_RANK', 0)))", "", "",
        "def sync(loss):",
        "    if dist.get_rank() == 0:",
        "        print(loss)",
        "    dist.barrier()",
        "    return loss", ""])


def wandb_module(rng: random.Random, pkg: str, i: int) -> str:
    return "\n".join([
        f'"""{pkg}: experiment logging ({i})."""', "import wandb", "", "",
        "def start(cfg):",
        "    return wandb.init(project=cfg.get('project', 'research'), config=dict(cfg))", ""])


def exit_module(rng: random.Random, pkg: str, i: int) -> str:
    return "\n".join([
        f'"""{pkg}: a launcher with a hard exit ({i})."""', "import os", "import sys", "", "",
        "def run(fn):",
        "    try:",
        "        fn()",
        "    except Exception as exc:",
        "        print(exc, file=sys.stderr)",
        "        os._exit(1)", ""])


def train_module(pkg: str) -> str:
    return "\n".join([
        f'"""{pkg}.train: the entry point."""', "import os", "",
        "os.environ.setdefault('OMP_NUM_THREADS', '4')", "",
        "import hydra", "import torch", "",
        f"from {pkg}.core import mod_0", "", "",
        '@hydra.main(config_path="../../configs", config_name="base", version_base=None)',
        "def main(cfg):",
        "    model = torch.nn.Linear(4, 4)",
        "    print(mod_0.f0(1.0), model)", "", "",
        'if __name__ == "__main__":',
        "    main()", ""])


def group_config(rng: random.Random, group: str, i: int) -> str:
    lines = [f"# {group} option {i}", f"name: {group}_{i}"]
    if group == "data":
        lines += ["num_workers: %d" % rng.choice([0, 4, 8, 16]), "batch_size: 64",
                  "pin_memory: true", "prefetch_factor: 2", "persistent_workers: true"]
    for j in range(44 - len(lines)):
        if j % 9 == 0:
            lines += [f"section_{j}:", f"  depth: {rng.randrange(1, 48)}",
                      f"  width: {rng.choice([256, 512, 1024])}"]
        else:
            lines.append(f"param_{j}: {rng.choice(['0.1', '1e-4', 'true', 'relu', '[1, 2, 3]'])}")
    return "\n".join(lines) + "\n"


def experiment_config(rng: random.Random, per_group: int, i: int) -> str:
    lines = ["defaults:"]
    lines += [f"  - {g}: {g}_{rng.randrange(per_group)}" for g in GROUPS]
    lines += ["  - _self_", "", f"seed: {i}", "trainer:", "  max_epochs: 10",
              "  devices: 4", "  num_nodes: 2", f"experiment: exp_{i}"]
    lines += [f"note_{j}: {rng.random():.3f}" for j in range(50 - len(lines))]
    return "\n".join(lines) + "\n"


def job_script(rng: random.Random, pkg: str, exp: int, i: int) -> str:
    nodes = rng.choice([1, 2, 4])
    return "\n".join([
        "#!/bin/bash", f"#SBATCH --job-name=job{i}", f"#SBATCH --nodes={nodes}",
        "#SBATCH --ntasks-per-node=4", "#SBATCH --gpus-per-node=4",
        "#SBATCH --cpus-per-task=8", "#SBATCH --time=24:00:00", "set -euo pipefail", "",
        "module load cuda/12.1", "export NCCL_DEBUG=WARN", "export OMP_NUM_THREADS=8",
        'cd "$SLURM_SUBMIT_DIR"', "",
        f"srun python -m {pkg}.train --config-name exp_{exp} "
        f"trainer.max_epochs={rng.randrange(5, 50)} seed={i}", ""])


def generate(root: Path, n_py: int, n_configs: int, n_scripts: int, seed: int) -> None:
    rng = random.Random(seed)
    packages = [f"proj{p:02d}" for p in range(30)]
    subs = [f"sub{s:02d}" for s in range(30)] + ["core"]
    per_sub = max(1, n_py // (len(packages) * len(subs)))
    written = 0
    for pkg in packages:
        (root / "src" / pkg).mkdir(parents=True)
        (root / "src" / pkg / "__init__.py").write_text("")
        (root / "src" / pkg / "train.py").write_text(train_module(pkg))
        written += 2
        for sub in subs:
            d = root / "src" / pkg / sub
            d.mkdir()
            (d / "__init__.py").write_text("")
            written += 1
            for i in range(per_sub):
                if written >= n_py:
                    break
                roll = rng.random()
                text = (dataloader_module(rng, pkg, i) if roll < 0.01 else
                        dist_module(rng, pkg, i) if roll < 0.02 else
                        wandb_module(rng, pkg, i) if roll < 0.025 else
                        exit_module(rng, pkg, i) if roll < 0.027 else
                        plain_module(rng, pkg, sub, i))
                (d / f"mod_{i}.py").write_text(text)
                written += 1
    n_exp = max(1, n_configs // 5)
    per_group = max(1, (n_configs - n_exp) // len(GROUPS))
    for g in GROUPS:
        (root / "configs" / g).mkdir(parents=True, exist_ok=True)
        for i in range(per_group):
            (root / "configs" / g / f"{g}_{i}.yaml").write_text(group_config(rng, g, i))
    for i in range(n_exp):
        (root / "configs" / f"exp_{i}.yaml").write_text(experiment_config(rng, per_group, i))
    (root / "configs" / "base.yaml").write_text(experiment_config(rng, per_group, 0))
    (root / "jobs").mkdir()
    for i in range(n_scripts):
        (root / "jobs" / f"job_{i}.sbatch").write_text(
            job_script(rng, rng.choice(packages), rng.randrange(n_exp), i))
    (root / ".gitignore").write_text("__pycache__/\n*.pyc\noutputs/\nwandb/\n")
    (root / "README.md").write_text("# monorepo\n")
    env = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.org",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.org",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
           "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(root)}
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                ["git", "commit", "-q", "-m", "monorepo"]):
        subprocess.run(cmd, cwd=root, env=env, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path, help="an empty or missing directory")
    ap.add_argument("--py", type=int, default=90_000)
    ap.add_argument("--configs", type=int, default=1_000)
    ap.add_argument("--scripts", type=int, default=200)
    ap.add_argument("--seed", type=int, default=17)
    args = ap.parse_args()
    if args.dir.exists() and any(args.dir.iterdir()):
        print(f"gen_monorepo: {args.dir} is not empty", file=sys.stderr)
        return 2
    args.dir.mkdir(parents=True, exist_ok=True)
    generate(args.dir, args.py, args.configs, args.scripts, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
