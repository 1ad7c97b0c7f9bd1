"""Line diffs of documents: which lines a change keeps, adds and removes, as difflib's opcodes
with the common head and tail matched first (a change of a few lines in a long document costs
a scan, not a full diff). Every line diff in Yak is computed here."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

Opcode = tuple[str, int, int, int, int]
"""``(tag, i1, i2, j1, j2)`` as ``difflib.SequenceMatcher.get_opcodes`` gives it: ``old[i1:i2]``
becomes ``new[j1:j2]``; ``tag`` is ``"equal"``, ``"replace"``, ``"delete"`` or ``"insert"``."""


def line_opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
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
    ops: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
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


def line_edits(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    """The opcodes of :func:`line_opcodes` that change something (every tag but ``"equal"``), in
    order."""
    return [op for op in line_opcodes(old, new) if op[0] != "equal"]


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


def diff_rows(old: str, new: str, *, context: int = 3) -> list[tuple[str, str]]:
    """The line diff from ``old`` to ``new`` as rows for a diff view.

    Args:
        old: the text on the left (removed lines come from it).
        new: the text on the right (added lines come from it).
        context: unchanged lines shown around each change.

    Returns:
        ``(kind, text)`` pairs, ``kind`` one of ``"hunk"`` (``text`` is the ``@@ -a,b +c,d @@``
        header), ``"removed"``, ``"added"`` or ``"context"`` (``text`` is the document's line,
        without a diff marker); empty when the texts have the same lines.
    """
    kinds = {"-": "removed", "+": "added", " ": "context"}
    rows = []
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=context)
    for number, line in enumerate(lines):
        if number < 2:  # the ---/+++ file header: the view's label names both sides
            continue
        if line.startswith("@@"):
            rows.append(("hunk", line))
        else:
            rows.append((kinds[line[:1]], line[1:]))
    return rows
