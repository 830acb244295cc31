#!/usr/bin/env bash
# The one device call that records tests/data/gpu/ on a GPU node (README.md there):
#   run(command="bash benchmarks/gpu/device_run.sh", timeout_s=420)
# Writes six files under $OUT (the device tool brings back at most eight): log.txt,
# env.txt, memory_cuda.json, memory_cpu_device.json, smoke_raw.json, doctor_reports.json.
# MODELS=mlp,cnn limits the memory cases (a quick try on a CPU machine).
# Each step goes on when an earlier one fails, so one call records whatever it can; the
# steps' own limits add up to 400 s, the CPU figures (the least needed) last.
set -u
export PYTHONUNBUFFERED=1
: "${OUT:?set OUT to the folder the results go to}"
cd "$(dirname "$0")/../.."
exec > >(tee -a "$OUT/log.txt") 2>&1
step() { echo "== $(date -u +%H:%M:%S) $*"; }
step env
{ date -u; uname -a; nvidia-smi; nproc
  python3 -c 'import torch, sys; print(sys.version); print(torch.__version__, torch.version.cuda,
torch.cuda.is_available(), torch.cuda.device_count(), torch.backends.cudnn.version())'
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
step memory cuda
timeout 100 python3 benchmarks/gpu/record_memory.py --device cuda ${MODELS:+--models $MODELS} \
  --output "$OUT/memory_cuda.json" || echo "memory cuda: exit $?"
step smoke raw
timeout 90 python3 benchmarks/gpu/record_smoke.py --backends auto,nccl --timeout 40 \
  --output "$OUT/smoke_raw.json" || echo "smoke raw: exit $?"
step doctor runs
timeout 150 python3 benchmarks/gpu/record_doctor_runs.py \
  --output "$OUT/doctor_reports.json" || echo "doctor runs: exit $?"
step memory cpu
timeout 60 python3 benchmarks/gpu/record_memory.py --device cpu ${MODELS:+--models $MODELS} \
  --output "$OUT/memory_cpu_device.json" || echo "memory cpu: exit $?"
step done
ls -la "$OUT"
