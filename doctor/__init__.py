"""doctor: pre-flight checks for distributed PyTorch jobs on Slurm clusters."""
from __future__ import annotations

__version__ = "0.3.0"


def _map_source_checks() -> None:
    """In the source tree the built-in checks are the top-level checks/ folder beside
    doctor/; installed, they are doctor/checks/ (pyproject's package-dir). Map the folder
    to doctor.checks when the doctor runs from a tree that is not installed as it is (a
    clone on PYTHONPATH, or `python -m doctor` in a clone with a regular install
    elsewhere), so that no top-level `checks` is ever imported: any project's would
    shadow it."""
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    folder = os.path.join(os.path.dirname(here), "checks")
    init = os.path.join(folder, "__init__.py")
    if "doctor.checks" in sys.modules or os.path.isdir(os.path.join(here, "checks")) \
            or not os.path.isfile(init):
        return
    spec = importlib.util.spec_from_file_location("doctor.checks", init,
                                                  submodule_search_locations=[folder])
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["doctor.checks"] = module
    spec.loader.exec_module(module)
    globals()["checks"] = module   # the attribute an import of doctor.checks sets


_map_source_checks()

from doctor.model import Finding, Location, Result, Report, Severity, Skip, Status  # noqa: E402
from doctor.registry import check  # noqa: E402

__all__ = ["check", "Finding", "Location", "Result", "Report", "Severity", "Skip", "Status",
           "__version__"]
