"""Record what the doctor's DDP smoke saw on this node, raw, for each requested backend.

The launcher removes the ranks' files when it ends; this keeps them: per backend, every
rank's exit code, events (phases, the exception with its frames), faulthandler dumps and
output tail, next to the doctor's own classification of them (doctor/smoke/classify.py) and
the node's GPU facts. tests/test_gpu_facts.py classifies the recorded ranks again, so a
change to the classifier that would judge a recorded real failure differently is seen in CI
without the node.

    python3 benchmarks/gpu/record_smoke.py --backends auto,nccl --output smoke_raw.json

Run from the repository root (the demo's model, fixtures/demo, is the smoke's model).
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from doctor.smoke.classify import classify, smoke_facts  # noqa: E402
from doctor.smoke.launcher import SmokePlan, run_smoke  # noqa: E402

SCHEMA = "doctor-smoke-record/1"
DEMO = ROOT / "fixtures" / "demo"
GPU_FACTS = r"""
import json, os, torch
n = torch.cuda.device_count() if torch.cuda.is_available() else 0
print(json.dumps({"torch": torch.__version__, "torch_cuda": torch.version.cuda,
    "cuda_available": torch.cuda.is_available(), "device_count": n,
    "devices": [torch.cuda.get_device_name(i) for i in range(n)],
    "nccl": ".".join(map(str, torch.cuda.nccl.version())) if n else None,
    "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES")}))
"""


def gpu_facts() -> dict:
    """torch's view of the GPUs, in a child (this process never initialises CUDA)."""
    out = subprocess.run([sys.executable, "-c", GPU_FACTS], capture_output=True, text=True,
                         timeout=120)
    if out.returncode != 0:
        return {"error": out.stderr.strip()[-2000:]}
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30)
        facts["nvidia_smi"] = smi.stdout.strip() or smi.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        facts["nvidia_smi"] = f"not run: {e}"
    return facts


def record(backend: str, timeout_s: float) -> dict:
    plan = SmokePlan(repo=DEMO.resolve(), model="demo_pkg.model:build", timeout_s=timeout_s,
                     world_size=2, backend=backend)
    run = run_smoke(plan)
    failures = classify(run)
    return {
        "backend_requested": backend,
        "plan": {"model": plan.model, "world_size": plan.world_size,
                 "timeout_s": plan.timeout_s, "pg_timeout_s": plan.pg_timeout_s},
        "ranks": [dataclasses.asdict(o) for o in run.ranks],
        "deadline_hit": run.deadline_hit,
        "facts": smoke_facts(run),
        "classified": [{"rank": f.rank, "kind": f.kind, "message": f.message,
                        "root_cause": f.root_cause, "fix": f.fix} for f in failures],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="auto,nccl")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--output", required=True)
    args = ap.parse_args(argv)
    doc = {"schema": SCHEMA,
           "recorded_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
               "%Y-%m-%dT%H:%M:%SZ"),
           "command": " ".join([Path(sys.executable).name] + sys.argv),
           "python": platform.python_version(), "cpu_count": os.cpu_count(),
           # the paths the ranks' frames carry: a replay elsewhere maps them to its own
           "doctor_root": str(ROOT), "repo": str(DEMO.resolve()),
           "gpu": gpu_facts(), "runs": []}
    for backend in args.backends.split(","):
        rec = record(backend, args.timeout)
        doc["runs"].append(rec)
        for c in rec["classified"] or [{"message": "passed"}]:
            print(f"[{backend}] {c['message']}", flush=True)
    Path(args.output).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
