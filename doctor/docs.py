"""Documentation from the registry: `doctor explain` and docs/checks/*.md."""
from __future__ import annotations

from doctor.registry import CheckSpec


def check_markdown(spec: CheckSpec) -> str:
    """The page for one check: metadata, the docstring's sections, the options."""
    lines = [f"# {spec.id}", "", f"**{spec.title}**", "",
             "| severity | tags | needs | static (CI gate) | timeout |",
             "|---|---|---|---|---|",
             f"| {spec.severity} | {', '.join(spec.tags) or '—'} | "
             f"{', '.join(spec.needs) or '—'} | {'yes' if spec.static else 'no'} | "
             f"{'settings' if callable(spec.timeout) else f'{spec.timeout:g}s'} |", "",
             spec.doc, ""]
    if spec.options:
        lines += ["## Options", "", "Set in the settings under "
                  f"`options: {{{spec.id}: {{NAME: VALUE}}}}`.", "",
                  "| option | default |", "|---|---|"]
        lines += [f"| `{name}` | `{default!r}` |" for name, default in spec.options.items()]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
