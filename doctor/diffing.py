"""`doctor diff`: what changed between two report documents (docs/diff.md).

Three parts: the checks whose status changed, the findings that are new or gone,
and the facts that changed, ranked by how often each kind explains a new failure
(torch, driver and GPU runtime first, then the environment, the nodes, the
packages, the rest). Facts are compared generically, as flattened key paths, so
a fact added to the report is diffed without a change here. Values are shown as
the report holds them: a secret is `***` in both reports and stays `***` here (the
reports are read through doctor.secrets.redact, so one from elsewhere is masked too).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Optional

from doctor.model import Severity

DIFF_VERSION = 1

# first key of a fact path → (rank, area); lower ranks explain new failures more often
RANKS = {
    **{k: (0, "versions") for k in (
        "torch_build", "torch_installed", "torch_version", "torch_cuda", "torch_hip",
        "driver", "gpu_count", "gpu_models", "smi", "devices", "python", "container",
        "triton")},
    "env": (1, "environment"), "script_env": (1, "environment"),
    "nodes": (2, "nodes"),
    "packages": (3, "packages"),
}
OTHER = (4, "other")
# timings, process ids and free space change on every run and explain nothing
VOLATILE = {"duration_s", "startup_s", "import_s", "init_s", "model_s", "ddp_s",
            "first_step_s", "total_s", "pid", "port", "free_bytes", "job_id", "step_id"}
# facts that restate others: the merged node list (the report's `nodes`), the site lookup
SKIPPED_FACTS = {"gathered_nodes"}
# data keys that name what a finding is about, tried in order (else its message)
SUBJECT_KEYS = ("variable", "fact", "kind", "pattern", "path", "key", "keys", "config",
                "check", "rank")


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _pinned(value: Any) -> Optional[dict]:
    """A list of `name==version` (facts.packages) as {name: version}, else None."""
    if not isinstance(value, list) or not value or \
            not all(isinstance(v, str) and "==" in v for v in value):
        return None
    return dict(v.split("==", 1) for v in value)


def flatten(facts: Any, prefix: tuple = ()) -> dict:
    """{key path: leaf value}; a dict is walked, a list of `name==version` too, any other
    list is one leaf (compared whole)."""
    out: dict = {}
    facts = _pinned(facts) if _pinned(facts) is not None else facts
    if isinstance(facts, dict) and (facts or not prefix):
        for key, value in facts.items():
            if key in VOLATILE:
                continue
            out.update(flatten(value, prefix + (str(key),)))
    else:
        out[prefix] = _clean(facts)
    return out


def fact_changes(old: dict, new: dict, node: Optional[str] = None) -> list:
    a, b = flatten(old), flatten(new)
    out = []
    for path in sorted(set(a) | set(b)):
        if path[0] in SKIPPED_FACTS:
            continue
        was, now = a.get(path), b.get(path)
        if was == now:
            continue
        rank, area = RANKS.get(path[0], OTHER)
        out.append({"rank": rank, "area": area, "node": node, "path": list(path),
                    "change": "added" if path not in a else
                    "removed" if path not in b else "changed",
                    "old": was, "new": now})
    return out


def node_names(doc: dict) -> dict:
    """{node: status} of a report: its `nodes` when gathered, else its own node."""
    if isinstance(doc.get("nodes"), list):
        return {n.get("slurm_node"): n.get("status") for n in doc["nodes"]}
    host = doc.get("host") or {}
    name = host.get("slurm_node") or host.get("hostname")
    return {name: doc["summary"].get("status")} if name else {}


def _node_changes(old: dict, new: dict) -> list:
    was, now = node_names(old), node_names(new)
    out = []
    for name in sorted(set(was) | set(now), key=str):
        present_was = name in was and was[name] != "missing"
        present_now = name in now and now[name] != "missing"
        if present_was == present_now:
            continue
        change = "added" if present_now else "missing" if name in now else "removed"
        out.append({"rank": 2, "area": "nodes", "node": name, "path": ["nodes"],
                    "change": change, "old": was.get(name), "new": now.get(name)})
    return out


def all_fact_changes(old: dict, new: dict) -> list:
    """Facts and nodes, ranked. In two gathered reports the per-node facts are compared
    node by node (each change names its node), and the top-level copy of a fact every
    node reports is left out (it is task 0's node's, already named)."""
    fa, fb = dict(old.get("facts") or {}), dict(new.get("facts") or {})
    na, nb = fa.pop("nodes", None), fb.pop("nodes", None)
    out = []
    if isinstance(na, dict) and isinstance(nb, dict):
        per_node = {k for n in list(na.values()) + list(nb.values())
                    if isinstance(n, dict) for k in n}
        fa = {k: v for k, v in fa.items() if k not in per_node}
        fb = {k: v for k, v in fb.items() if k not in per_node}
        for name in sorted(set(na) & set(nb)):
            out += fact_changes(na[name] or {}, nb[name] or {}, node=name)
    out += fact_changes(fa, fb) + _node_changes(old, new)
    return sorted(out, key=lambda c: (c["rank"], c["node"] or "", c["path"]))


def _subject(finding: dict) -> str:
    data = finding.get("data") or {}
    for key in SUBJECT_KEYS:
        if data.get(key) not in (None, "", []):
            return f"{key}={json.dumps(data[key], sort_keys=True, default=str)}"
    # a message may embed numbers that change between runs (a limit, a size, a line)
    return "message=" + re.sub(r"\d+", "#", str(finding.get("message", "")))


def finding_key(check_id: str, finding: dict) -> tuple:
    """What makes two findings the same one across runs: the check, the file (not the
    line, which moves), the node, and the subject its data names, else its message with
    the numbers left out."""
    loc = finding.get("location") or {}
    node = (finding.get("data") or {}).get("node")
    return (check_id, loc.get("path"), node, _subject(finding))


def _findings(doc: dict) -> dict:
    out: dict = {}
    for r in doc.get("results") or []:
        if r.get("status") != "fail":
            continue
        for f in r.get("findings") or []:
            out.setdefault(finding_key(r["id"], f), []).append(
                {"check": r["id"], "message": f.get("message"), "location": f.get("location"),
                 "node": (f.get("data") or {}).get("node"),
                 "severity": f.get("severity") or r.get("severity")})
    return out


def finding_changes(old: dict, new: dict) -> dict:
    a, b = _findings(old), _findings(new)
    ca, cb = Counter({k: len(v) for k, v in a.items()}), Counter({k: len(v) for k, v in b.items()})
    return {"new": [f for k in b for f in b[k][ca[k]:]],
            "gone": [f for k in a for f in a[k][cb[k]:]]}


def _state(r: Optional[dict]) -> Optional[dict]:
    return {"status": r.get("status"), "severity": r.get("severity")} if r else None


def _fails(state: Optional[dict], fail_on: Severity) -> bool:
    return bool(state and state["status"] == "fail"
                and Severity.parse(state["severity"] or "error") >= fail_on)


def check_changes(old: dict, new: dict, fail_on: Severity) -> list:
    a = {r["id"]: r for r in old.get("results") or []}
    b = {r["id"]: r for r in new.get("results") or []}
    out = []
    for cid in list(b) + [c for c in a if c not in b]:
        was, now = _state(a.get(cid)), _state(b.get(cid))
        if was == now:
            continue
        failed, fails = bool(was and was["status"] == "fail"), bool(now and now["status"] == "fail")
        change = ("started-failing" if fails and not failed else
                  "started-passing" if failed and now and now["status"] == "pass" else "changed")
        out.append({"id": cid, "change": change, "old": was, "new": now,
                    "newly_fails": _fails(now, fail_on) and not _fails(was, fail_on)})
    order = {"started-failing": 0, "started-passing": 1, "changed": 2}
    return sorted(out, key=lambda c: order[c["change"]])


def _side(doc: dict, name: str) -> dict:
    s = doc.get("summary") or {}
    return {"report": name, "started_at": doc.get("started_at"), "status": s.get("status"),
            "exit_code": s.get("exit_code"), "nodes": sorted(map(str, node_names(doc)))}


def diff(old: dict, new: dict, *, fail_on: Severity = Severity.ERROR,
         names: tuple = ("OLD", "NEW")) -> dict:
    """The diff document (docs/diff.md): stable keys, ranked fact changes."""
    checks = check_changes(old, new, fail_on)
    newly = [c["id"] for c in checks if c["newly_fails"]]
    return {"diff_version": DIFF_VERSION, "old": _side(old, names[0]),
            "new": _side(new, names[1]), "fail_on": str(fail_on), "checks": checks,
            "findings": finding_changes(old, new), "facts": all_fact_changes(old, new),
            "newly_failing": newly, "exit_code": 1 if newly else 0}


# ---- rendering: table (the default), markdown; json is the document itself ----------

WIDTH = 120


def _value(value: Any, width: int = WIDTH) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= width else text[:width - 1] + "…"


def fact_line(c: dict, width: int = WIDTH) -> str:
    """`n2: env NCCL_DEBUG: INFO -> WARN`, `n3: added`, `packages numpy: 1.26.4 -> 2.0.1`."""
    node = f"{c['node']}: " if c["node"] else ""
    if c["area"] == "nodes":
        return f"{node}{c['change']}"
    old = "(absent)" if c["change"] == "added" else _value(c["old"], width)
    new = "(absent)" if c["change"] == "removed" else _value(c["new"], width)
    return f"{node}{' '.join(c['path'])}: {old} -> {new}"


def _shown(state: Optional[dict]) -> str:
    if state is None:
        return "(absent)"
    if state["status"] == "fail":
        return "fail" if state["severity"] == "error" else "warn"
    return state["status"]


def check_line(c: dict) -> str:
    label = c["change"].replace("-", " ")
    if c["change"] == "started-failing":
        return f"{label}: {c['id']} ({c['new']['severity']})"
    if c["change"] == "started-passing":
        return f"{label}: {c['id']}"
    return f"changed: {c['id']}: {_shown(c['old'])} -> {_shown(c['new'])}"


def finding_line(f: dict) -> str:
    from doctor.report import where

    return f"{f['check']}: {where(f)}{f['message']}"


def verdict(d: dict) -> str:
    if d["newly_failing"]:
        n = len(d["newly_failing"])
        return (f"{n} check{'s' if n > 1 else ''} newly fail{'' if n > 1 else 's'} at or above "
                f"{d['fail_on']}: {', '.join(d['newly_failing'])} (exit 1)")
    if not (d["checks"] or d["findings"]["new"] or d["findings"]["gone"] or d["facts"]):
        return "nothing changed (exit 0)"
    return f"no check newly fails at or above {d['fail_on']} (exit 0)"


def render_table(d: dict) -> str:
    from doctor.report import printable_doc

    d = printable_doc(d)
    o, n = d["old"], d["new"]
    out = [f"doctor diff: {o['report']} ({o['status']}, {o['started_at']}) -> "
           f"{n['report']} ({n['status']}, {n['started_at']})"]
    if d["checks"]:
        out += ["", "Checks:"] + [f"  {check_line(c)}" for c in d["checks"]]
    for kind, sign in (("new", "+"), ("gone", "-")):
        if d["findings"][kind]:
            out += ["", f"{kind.capitalize()} findings:"]
            out += [f"  {sign} {finding_line(f)}" for f in d["findings"][kind]]
    if d["facts"]:
        out += ["", "Changed facts, most likely causes first:"]
        out += [f"  {c['area']:<12} {fact_line(c)}" for c in d["facts"]]
    out += ["", verdict(d)]
    return "\n".join(out) + "\n"


def _code(text: str) -> str:
    """A Markdown code span that no backtick in text can close early."""
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_markdown(d: dict) -> str:
    from doctor.report import printable_doc

    d = printable_doc(d)
    o, n = d["old"], d["new"]
    out = [f"## doctor diff: {_code(o['report'])} → {_code(n['report'])}", "",
           f"{o['status']} → {n['status']}: {verdict(d)}", ""]
    if d["checks"]:
        out += ["### Checks", ""] + [f"- {_cell(check_line(c))}" for c in d["checks"]] + [""]
    for kind, sign in (("new", "➕"), ("gone", "➖")):
        if d["findings"][kind]:
            out += [f"### {kind.capitalize()} findings", ""]
            out += [f"- {sign} {_code(f['check'])} {_cell(finding_line(f)[len(f['check']) + 2:])}"
                    for f in d["findings"][kind]] + [""]
    if d["facts"]:
        out += ["### Changed facts, most likely causes first", "",
                "| area | node | fact | old | new |", "|---|---|---|---|---|"]
        for c in d["facts"]:
            fact = " ".join(c["path"]) if c["area"] != "nodes" else ""
            old = "" if c["change"] == "added" else _value(c["old"])
            new = "" if c["change"] == "removed" else _value(c["new"])
            if c["area"] == "nodes":
                old, new = str(c["old"] or ""), f"{c['change']} ({c['new'] or 'absent'})"
            out.append(f"| {c['area']} | {_cell(c['node'] or '')} | {_cell(fact)} | "
                       f"{_cell(old)} | {_cell(new)} |")
    return "\n".join(out).rstrip() + "\n"


def render(fmt: str, d: dict) -> str:
    if fmt == "json":
        return json.dumps(d, indent=2, default=str) + "\n"
    return render_markdown(d) if fmt == "markdown" else render_table(d)
