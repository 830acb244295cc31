"""The torch probe (doctor/probes/gpu.py's TORCH_PROBE) as a module, for the zygote to fork:
the smokes' torch process has imported torch already, so the probe's answer costs a fork
instead of one more import of torch (1.1-1.7 s of CPU). Its output names the torch file it
imported, which the probe compares with the installed torch it would import in isolation.
"""
from __future__ import annotations

if __name__ == "__main__":   # doctor.probes imports nothing of this; only the fork runs it
    from doctor.probes.gpu import TORCH_PROBE

    exec(compile(TORCH_PROBE, "<torch probe>", "exec"))
