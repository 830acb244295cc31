"""The JSON report (schema_version 1, DESIGN.md §4; docs/report-schema.json)."""
from __future__ import annotations

import json


def render(report) -> str:
    return json.dumps(report.doc(), indent=2, default=str) + "\n"
