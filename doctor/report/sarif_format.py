"""SARIF 2.1.0: for GitHub code scanning and other SARIF viewers.

Rules come from the registry (id, title, docstring as help); one result per
finding, level from the effective severity, located at the finding's file and
line relative to the repo (%SRCROOT%). Checks that could not complete are
tool execution notifications, not results. Validated in the tests against the
official SARIF 2.1.0 JSON schema.
"""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from doctor.report import REPO_URL, docs_url, printable, summary_counts

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _rule(result: dict) -> dict:
    from doctor.registry import get

    spec = get(result["id"])
    rule: dict = {"id": result["id"], "name": _camel(result["id"]),
                  "shortDescription": {"text": printable(result["title"])}}
    url = docs_url(result["id"])
    if url:
        rule["helpUri"] = url
    if spec is not None:
        rule["fullDescription"] = {"text": spec.summary}
        # GitHub code scanning shows `help` and not helpUri: the link goes in both
        more = f"\n\n{url}" if url else ""
        rule["help"] = {"text": spec.doc + more,
                        "markdown": spec.doc + (f"\n\n[The check's page]({url})" if url else "")}
        rule["defaultConfiguration"] = {"level": LEVELS[str(spec.severity)]}
        rule["properties"] = {"tags": list(spec.tags), "needs": list(spec.needs),
                              "static": spec.static}
    return rule


def _camel(check_id: str) -> str:
    return "".join(part.capitalize() for part in check_id.split("-"))


def _uri(path: str) -> tuple:
    """(uri, uriBaseId or None): repo-relative paths hang off %SRCROOT%."""
    if Path(path).is_absolute():
        return Path(path).as_uri(), None
    return quote(path.replace("\\", "/")), "%SRCROOT%"


def _location(loc: dict) -> dict:
    uri, base = _uri(loc["path"])
    artifact = {"uri": uri}
    if base:
        artifact["uriBaseId"] = base
    physical: dict = {"artifactLocation": artifact}
    if loc.get("line"):
        physical["region"] = {"startLine": int(loc["line"])}
    return {"physicalLocation": physical}


def _fallback_location(doc: dict) -> list:
    """Code scanning wants a location: a finding without one points at the job script,
    else the first config, else the settings file that selected the check."""
    inputs = doc["inputs"]
    for path in list(inputs.get("sbatch") or []) + list(inputs.get("configs") or []) + \
            [inputs.get("settings")]:
        if path:
            return [_location({"path": path, "line": None})]
    return []


def _message(f: dict, url: "str | None") -> str:
    """The finding as a viewer shows it: message, fix and commands on lines of their own,
    each escaped (printable) so that none can start another or hide in control codes;
    then the check's docs page."""
    text = printable(f["message"])
    if f.get("fix"):
        text += f"\nFix: {printable(f['fix'])}"
    if f.get("commands"):
        text += "\n" + "\n".join(f"$ {printable(c)}" for c in f["commands"])
    if url:
        text += f"\nDocs: {url}"
    return text


def _fix(f: dict) -> dict:
    """A finding's edits as one SARIF fix. Whole lines: the deleted region runs from
    column 1 of start_line to column 1 of the line after end_line (an insertion is the
    empty region at column 1 of start_line), so line breaks go with their lines."""
    changes: dict = {}
    for e in f["edits"]:
        uri, base = _uri(e["path"])
        artifact = {"uri": uri, **({"uriBaseId": base} if base else {})}
        change = changes.setdefault(e["path"], {"artifactLocation": artifact,
                                                "replacements": []})
        region = {"startLine": e["start_line"], "startColumn": 1,
                  "endLine": e["end_line"] + 1, "endColumn": 1}
        change["replacements"].append({"deletedRegion": region,
                                       "insertedContent": {"text": e["new"]}})
    titles = "; ".join(dict.fromkeys(printable(e["title"]) for e in f["edits"]))
    return {"description": {"text": titles}, "artifactChanges": list(changes.values())}


def render(report) -> str:
    doc = report.doc()
    rules: list = []
    index: dict = {}
    results: list = []
    notifications: list = []
    for r in doc["results"]:
        index[r["id"]] = len(rules)
        rules.append(_rule(r))
        if r["status"] == "fail":
            url = rules[-1].get("helpUri")
            for f in r["findings"]:
                res = {"ruleId": r["id"], "ruleIndex": index[r["id"]],
                       "level": LEVELS.get(f.get("severity") or r["severity"], "warning"),
                       "message": {"text": _message(f, url)}}
                locs = [_location(f["location"])] if f.get("location") else \
                    _fallback_location(doc)
                if locs:
                    res["locations"] = locs
                if f.get("data"):
                    res["properties"] = {"data": f["data"]}
                if f.get("edits"):
                    res["fixes"] = [_fix(f)]
                results.append(res)
        elif r["status"] == "error":
            notifications.append({"level": "error",
                                  "message": {"text": printable(r["reason"] or "error")},
                                  "associatedRule": {"id": r["id"], "index": index[r["id"]]}})
    repo = doc["inputs"].get("repo")
    run: dict = {
        "tool": {"driver": {"name": "doctor", "version": doc["tool"]["version"],
                            "semanticVersion": doc["tool"]["version"],
                            "informationUri": REPO_URL, "rules": rules}},
        "invocations": [{"executionSuccessful": not notifications,
                         "exitCode": doc["summary"]["exit_code"],
                         "startTimeUtc": doc["started_at"],
                         "toolExecutionNotifications": notifications}],
        "results": results,
        "properties": {"summary": {**doc["summary"], "counts": summary_counts(doc)},
                       "host": doc["host"]},
    }
    if repo:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": Path(repo).as_uri() + "/"}}
    sarif = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(sarif, indent=2, default=str) + "\n"
