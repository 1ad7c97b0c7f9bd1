"""Line diffs of documents: which lines a change keeps, adds and removes, as difflib's opcodes
with the common head and tail matched first (a change of a few lines in a long document costs
a scan, not a full diff)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def line_opcodes(old: Sequence[str], new: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """``difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()`` with the
    common head and tail matched first, so a change of a few lines in a long document costs a
    scan, not a full diff (the blame of a long history diffs every revision)."""
    n, m = len(old), len(new)
    head = 0
    while head < n and head < m and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and old[n - 1 - tail] == new[m - 1 - tail]:
        tail += 1
    ops: list[tuple[str, int, int, int, int]] = [("equal", 0, head, 0, head)] if head else []
    if head < n - tail or head < m - tail:
        middle = difflib.SequenceMatcher(
            None, old[head : n - tail], new[head : m - tail], autojunk=False
        )
        ops += [
            (tag, i1 + head, i2 + head, j1 + head, j2 + head)
            for tag, i1, i2, j1, j2 in middle.get_opcodes()
            if i1 != i2 or j1 != j2
        ]
    if tail:
        ops.append(("equal", n - tail, n, m - tail, m))
    return ops


def line_changes(old: str, new: str) -> tuple[int, int]:
    """How many lines ``new`` adds and removes against ``old`` (a line diff; a changed line
    counts once in each): ``("a\\nb\\n", "a\\nc\\nd\\n")`` is ``(2, 1)``."""
    added = removed = 0
    for tag, i1, i2, j1, j2 in line_opcodes(old.splitlines(), new.splitlines()):
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def unified_diff(old: str, new: str, *, old_name: str, new_name: str) -> str:
    """A unified line diff of two documents (``""`` when they are equal)."""
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=old_name,
            tofile=new_name,
        )
    )
