"""Built-in site profiles (doctor/sites/<name>.yaml) and which one applies (docs/site-profiles.md).

A profile holds what a login node cannot always tell: shared and local paths, whether
compute nodes reach the internet, container binds and libraries, and partition limits
in scontrol's field names. The settings choose one (`site: lumi`, or `site: {profile:
lumi, ...}` whose other keys override the profile's key by key); without a choice it is
detected from `scontrol show config`'s ClusterName or the hostname.
"""
from __future__ import annotations

import re
import socket
from typing import Callable, Optional

from doctor.proc import run_cmd
from doctor.settings import NO_PROFILE, SITES_DIR, known_profiles, parse_settings

known = known_profiles  # the built-in profiles' names (they live in settings: it checks `site:`)

SCONTROL_TIMEOUT_S = 3.0
# the keys of a profile that are site values (the rest: name, summary, detect)
VALUE_KEYS = ("shared_paths", "local_paths", "compute_network", "gpus_per_node",
              "symlinked_paths", "default_binds", "fabric_binds", "gpu_libraries", "partitions",
              "modules")


def load(name: str) -> dict:
    """A built-in profile as written (name, summary, detect and its values); its values
    pass the same checks as the settings' `site:` keys."""
    import yaml   # (here: a run that names no profile never parses YAML for one)

    data = yaml.safe_load((SITES_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    parse_settings({"site": {k: data[k] for k in VALUE_KEYS if k in data}},
                   f"site profile {name}")
    return data


def slurm_config(run: Callable = run_cmd) -> Optional[dict]:
    """`scontrol show config` as {key: value}, or None when Slurm does not answer in 3 s.
    (A run reads it once: Job.slurm_config; ClusterName, KillOnBadExit come from it.)"""
    res = run(["scontrol", "show", "config"], timeout=SCONTROL_TIMEOUT_S)
    if res.returncode != 0:
        return None
    return {m[1]: m[2].strip() for m in re.finditer(r"^\s*(\w+)\s*=[ \t]*(.*)$", res.stdout,
                                                    re.M)}


def cluster_name(run: Callable = run_cmd,
                 config: Optional[Callable[[], Optional[dict]]] = None) -> Optional[str]:
    """ClusterName from `scontrol show config` (`config`: what gives the run's one reading
    of it), or None when Slurm does not answer in 3 s."""
    conf = config() if config is not None else slurm_config(run)
    return (conf or {}).get("ClusterName") or None


def match_hostname(hostname: str) -> Optional[str]:
    """The profile whose login-node name pattern matches the hostname."""
    for name in known():
        for pattern in (load(name).get("detect") or {}).get("hostnames") or ():
            if re.fullmatch(pattern, hostname, re.I):
                return name
    return None


def detect(run: Callable = run_cmd, hostname: Optional[str] = None,
           config: Optional[Callable[[], Optional[dict]]] = None) -> tuple:
    """(profile, how) from this login node, or (None, None)."""
    cluster = cluster_name(run, config)
    if cluster:
        for name in known():
            if cluster in ((load(name).get("detect") or {}).get("cluster_names") or ()):
                return name, f"scontrol show config: ClusterName = {cluster}"
    host = hostname if hostname is not None else socket.gethostname()
    name = match_hostname(host)
    return (name, f"hostname {host}") if name else (None, None)


def effective(settings_site: dict, detect_now: Callable[[], tuple]) -> dict:
    """The site as the checks see it: the profile's values, overridden key by key by the
    settings' site keys, plus `profile`, `source` (settings|detected|none) and how it was
    detected. `detect_now` is only called when the settings name no profile."""
    chosen = settings_site.get("profile")
    if chosen is not None:
        name, source, how = (None if chosen == NO_PROFILE else chosen), "settings", None
    else:
        name, how = detect_now()
        source = "detected" if name else "none"
    values: dict = {}
    if name is not None:
        data = load(name)
        values = {k: data[k] for k in VALUE_KEYS if k in data}
        values["name"] = data.get("name", name)
    overrides = sorted(k for k in settings_site if k != "profile")
    values.update({k: settings_site[k] for k in overrides})
    out = {"profile": name, "source": source, **values}
    if how:
        out["detected_by"] = how
    if overrides:
        out["overrides"] = overrides
    return out


def module_env(site: dict, argv: list) -> Optional[list]:
    """What `module load A B/1.2` (or `ml A`) sets, as [(variable, value, module)], when
    the site profile knows every module it loads (`modules:`); None otherwise (the
    command may set variables the doctor cannot see)."""
    from doctor.job.platform import loaded_modules

    known = site.get("modules") or {}
    names = loaded_modules(argv)
    if not names or not known:
        return None
    out = []
    for name in names:
        env = known.get(name) if name in known else known.get(name.split("/")[0])
        if env is None:
            return None
        out += [(var, value, name) for var, value in env.items()]
    return out
