"""Run the real `doctor run` CLI on fixtures/demo in a few node states; keep every report.

For the GPU node's record (tests/data/gpu/README.md): the DDP smoke with smoke.backend auto
and nccl, `--no-smoke`, and `--no-smoke` with CUDA_VISIBLE_DEVICES="" and =1 (an index one
GPU does not have). Each entry holds the argv, the environment change, torch's
device_count() under it, the exit code, the table the user sees (stdout+stderr) and the JSON
report (`--json`). One output file, as the device tool brings back at most eight.

    python3 benchmarks/gpu/record_doctor_runs.py --output doctor_reports.json
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "fixtures" / "demo"
COUNT = ("import json, torch; print(json.dumps([torch.cuda.is_available(), "
         "torch.cuda.device_count()]))")

# name, environment changes, arguments after `doctor run --repo fixtures/demo`
RUNS = [
    ("smoke_auto", {}, []),
    ("smoke_nccl", {}, ["--only", "ddp-smoke", "--settings", "{nccl}"]),
    ("nosmoke", {}, ["--no-smoke"]),
    ("nosmoke_cvd_empty", {"CUDA_VISIBLE_DEVICES": ""}, ["--no-smoke"]),
    ("nosmoke_cvd_1", {"CUDA_VISIBLE_DEVICES": "1"}, ["--no-smoke"]),
    ("smoke_auto_cvd_1", {"CUDA_VISIBLE_DEVICES": "1"}, ["--only", "ddp-smoke"]),
]


def nccl_settings(tmp: Path) -> Path:
    """The demo's own settings with smoke.backend: nccl."""
    text = (DEMO / "doctor.yaml").read_text()
    assert "\nsmoke:\n" in text, "fixtures/demo/doctor.yaml has no smoke: section"
    path = tmp / "nccl.yaml"
    path.write_text(text.replace("\nsmoke:\n", "\nsmoke:\n  backend: nccl\n", 1))
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", required=True)
    ap.add_argument("--runs", default=",".join(r[0] for r in RUNS))
    args = ap.parse_args(argv)
    wanted = args.runs.split(",")
    doc: dict = {"recorded_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ"), "command": " ".join([Path(sys.executable).name] + sys.argv),
        "runs": []}
    with tempfile.TemporaryDirectory(prefix="doctor-gpu-record-") as tmp:
        settings = nccl_settings(Path(tmp))
        for name, env_change, extra in RUNS:
            if name not in wanted:
                continue
            env = dict(os.environ, PYTHONPATH=str(ROOT), **env_change)
            report = Path(tmp) / f"{name}.json"
            argv_ = [sys.executable, "-m", "doctor", "run", "--repo", str(DEMO),
                     "--json", str(report)] + [a.replace("{nccl}", str(settings))
                                                for a in extra]
            count = subprocess.run([sys.executable, "-c", COUNT], env=env,
                                   capture_output=True, text=True, timeout=120)
            t0 = time.time()
            proc = subprocess.run(argv_, env=env, cwd=ROOT, capture_output=True, text=True,
                                  timeout=400)
            entry = {"name": name, "env": env_change,
                     "argv": ["python3", "-m", "doctor", "run", "--repo", "fixtures/demo",
                              "--json", f"{name}.json"] + extra,
                     "torch_cuda": (json.loads(count.stdout) if count.returncode == 0
                                    else count.stderr[-1000:]),
                     "exit_code": proc.returncode, "wall_s": round(time.time() - t0, 2),
                     "stdout": proc.stdout, "stderr": proc.stderr[-20000:],
                     "report": json.loads(report.read_text()) if report.exists() else None}
            if name == "smoke_nccl":
                entry["settings"] = settings.read_text()
            doc["runs"].append(entry)
            print(f"== {name} {env_change} exit {proc.returncode} "
                  f"({entry['wall_s']} s), torch.cuda {entry['torch_cuda']}", flush=True)
            print(proc.stdout[-6000:], proc.stderr[-3000:], flush=True)
    Path(args.output).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
