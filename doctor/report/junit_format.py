"""JUnit XML: one testsuite, one testcase per check (GitLab, Jenkins, most CI UIs).

fail at error severity → <failure>, error → <error>, skip (and waived) → <skipped>
with the reason. A warning (a failure below error severity) is a passing testcase whose
findings are its <system-out>: a CI UI counts every <failure> as a failed test, and a
warning must not turn a green merge request's tests red. <system-out>, not properties:
Jenkins shows it as the test's standard output, and GitLab parses it (no testcase
<properties>), though it shows a passing test's output nowhere yet (docs/report.md).
Validated in the tests against Jenkins' junit-10.xsd.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from doctor.report import printable_doc, summary_counts, where

# XML 1.0 cannot carry these even escaped (printable_doc shows every control character).
_INVALID_XML = re.compile("[\ufffe\uffff]")


def _text(value: object) -> str:
    return _INVALID_XML.sub("?", "" if value is None else str(value))


def _details(result: dict) -> str:
    """The body of a <failure>: every finding with its fix and commands."""
    lines = []
    for f in result["findings"]:
        lines.append(where(f) + f["message"])
        if f.get("fix"):
            lines.append(f"  fix: {f['fix']}")
        lines += [f"  $ {c}" for c in f.get("commands") or []]
    lines.append(f"(`doctor explain {result['id']}` says why this matters)")
    return "\n".join(lines)


def render(report) -> str:
    doc = printable_doc(report.doc())
    counts = summary_counts(doc)
    total = str(len(doc["results"]))
    time_s = f"{doc['duration_s']:.3f}"
    root = ET.Element("testsuites", name="doctor", tests=total,
                      failures=str(counts["fail"]), errors=str(counts["error"]), time=time_s)
    suite = ET.SubElement(root, "testsuite", name="doctor", tests=total,
                          failures=str(counts["fail"]), errors=str(counts["error"]),
                          skipped=str(counts["skip"]), time=time_s,
                          timestamp=doc["started_at"].rstrip("Z"),
                          hostname=_text(doc["host"].get("hostname") or ""))
    props = ET.SubElement(suite, "properties")
    for name, value in (("doctor.version", doc["tool"]["version"]),
                        ("repo", doc["inputs"].get("repo")),
                        ("summary.status", doc["summary"]["status"]),
                        ("exit_code", doc["summary"]["exit_code"]),
                        ("warnings", counts["warning"]),
                        ("slurm_job_id", doc["host"].get("slurm_job_id"))):
        if value is not None:
            ET.SubElement(props, "property", name=name, value=_text(value))
    for r in doc["results"]:
        case = ET.SubElement(suite, "testcase", name=r["id"], classname="doctor",
                             time=f"{r['duration_s']:.3f}")
        if r["status"] == "fail" and r["severity"] != "error":
            out = ET.SubElement(case, "system-out")
            out.text = _text(f"{r['severity']}: {r['title']}\n{_details(r)}")
        elif r["status"] == "fail":
            first = r["findings"][0]["message"] if r["findings"] else r["title"]
            more = len(r["findings"]) - 1
            message = first + (f" (+{more} more)" if more > 0 else "")
            el = ET.SubElement(case, "failure", type=r["severity"], message=_text(message))
            el.text = _text(_details(r))
        elif r["status"] == "error":
            el = ET.SubElement(case, "error", type="error", message=_text(r["reason"]))
            el.text = _text(r["reason"])
        elif r["status"] == "skip":
            ET.SubElement(case, "skipped", message=_text(r["reason"] or "skipped"))
    ET.indent(root)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            + ET.tostring(root, encoding="unicode") + "\n")
