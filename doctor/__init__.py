"""doctor: pre-flight checks for distributed PyTorch jobs on Slurm clusters."""
from __future__ import annotations

__version__ = "0.3.0"

from doctor.model import Finding, Location, Result, Report, Severity, Skip, Status  # noqa: E402
from doctor.registry import check  # noqa: E402

__all__ = ["check", "Finding", "Location", "Result", "Report", "Severity", "Skip", "Status",
           "__version__"]
