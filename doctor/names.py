"""Names a user types (check ids, tags, a model factory): did-you-mean and word prefixes.

One vocabulary for the CLI and the settings, as ruff has it: `--select`/`--ignore` and
`select:`/`ignore:` take a check id, a tag, or a prefix of whole dash-separated words of
ids (`rsync` is every `rsync-…` check, `git` every `git-…` check but not
`gitignore-hides-source`), and a name that is none of these is exit 2 with the nearest
known names.
"""
from __future__ import annotations

import difflib
from typing import Iterable


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """` (did you mean 'x'?)`, ` (did you mean 'x' or 'y'?)`, or '' when nothing is close:
    the nearest names, and those nearly as near (`--selet` is `--select`, not `--baseline`)."""
    close = difflib.get_close_matches(word, sorted(set(known)), n=3, cutoff=0.6)
    if not close:
        return ""
    best = difflib.SequenceMatcher(None, word, close[0]).ratio()
    close = [c for c in close if difflib.SequenceMatcher(None, word, c).ratio() >= best - 0.1]
    said = [repr(c) for c in close]
    return f" (did you mean {', '.join(said[:-1]) + ' or ' if said[:-1] else ''}{said[-1]}?)"


def is_word_prefix(item: str, check_id: str) -> bool:
    """`item` is the first whole words of `check_id`: `rsync`, `git-tracked` of
    `git-tracked-core-file`; `git` is no prefix of `gitignore-hides-source`."""
    return check_id.startswith(item + "-")


def selects(item: str, spec) -> bool:
    """Whether a selection `item` (an id, a tag, a word prefix of ids, or `all`) names
    the check `spec`."""
    return item == "all" or item == spec.id or item in spec.tags or is_word_prefix(item, spec.id)


def unknown_names(items: Iterable[str], specs: list) -> list:
    """The items that name no check of `specs`."""
    return [i for i in items if not any(selects(i, s) for s in specs)]


def vocabulary(specs: list) -> set:
    """What a selection may name, for did_you_mean: the ids, the tags and `all`."""
    return {s.id for s in specs} | {t for s in specs for t in s.tags} | {"all"}
