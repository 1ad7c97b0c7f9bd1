"""A proposal's changes one hunk at a time, so a person can take some and leave the others
("Review" in docs/memory.md; the review dialog in docs/ui.md).

A hunk is one change of the line diff (:func:`yak.linediff.line_edits`) (a run of lines replaced,
removed or inserted), shown with up to ``context`` unchanged lines around it; context shown
after one hunk is not repeated before the next. :func:`take` builds the document with only the
chosen hunks applied to the base, byte for byte: lines are compared with their endings. Pure
functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from yak.domain import LineOrigin
from yak.linediff import line_edits

CONTEXT = 3  # unchanged lines shown around a change


@dataclass(frozen=True)
class Hunk:
    """One group of nearby changes.

    Attributes:
        number: its place among the proposal's hunks, from 1.
        header: the unified diff's ``@@ -a,b +c,d @@`` line for it.
        rows: ``(kind, text)`` to show, ``kind`` one of ``"context"``, ``"removed"`` and
            ``"added"`` (``text`` without its line ending), as :func:`yak.linediff.diff_rows`.
        added: lines it adds.
        removed: lines of the base it removes (a changed line counts in both).
        hand_removed: the removed lines a person wrote (among ``hand`` given to :func:`hunks`).
    """

    number: int
    header: str
    rows: tuple[tuple[str, str], ...]
    added: int
    removed: int
    hand_removed: tuple[str, ...] = ()


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _span(start: int, length: int) -> str:
    return f"{start + 1 if length else start},{length}"


def hunks(
    base: str, proposed: str, *, hand: Collection[int] = (), context: int = CONTEXT
) -> list[Hunk]:
    """The hunks that turn ``base`` into ``proposed``, in document order (``[]``: same text).

    Args:
        base: the version the proposal was made on.
        proposed: the proposed document.
        hand: the 0-based numbers of the base's lines a person wrote (from the blame; see
            ``LineOrigin.by_person``); a hunk removing one names it in ``hand_removed``.
        context: unchanged lines shown around each change.
    """
    old, new = _lines(base), _lines(proposed)
    person = set(hand)
    changes = line_edits(old, new)
    found = []
    shown_until = 0  # the old lines before this were shown already (as context)
    for number, (_tag, i1, i2, j1, j2) in enumerate(changes, start=1):
        next_i1 = changes[number][1] if number < len(changes) else len(old)
        before = max(i1 - context, shown_until)
        after = min(i2 + context, next_i1)
        shown_until = after
        rows = [("context", line.rstrip("\r\n")) for line in old[before:i1]]
        rows += [("removed", line.rstrip("\r\n")) for line in old[i1:i2]]
        rows += [("added", line.rstrip("\r\n")) for line in new[j1:j2]]
        rows += [("context", line.rstrip("\r\n")) for line in old[i2:after]]
        new_before = j1 - (i1 - before)
        header = (
            f"@@ -{_span(before, after - before)} "
            f"+{_span(new_before, (after - i2) + (j2 - new_before))} @@"
        )
        touched = tuple(old[i].rstrip("\r\n") for i in range(i1, i2) if i in person)
        found.append(Hunk(number, header, tuple(rows), j2 - j1, i2 - i1, touched))
    return found


def take(base: str, proposed: str, chosen: Collection[int]) -> str:
    """``base`` with only the hunks numbered in ``chosen`` (from 1, as :func:`hunks` numbers
    them) applied: every hunk chosen gives ``proposed``; none gives ``base``."""
    old, new = _lines(base), _lines(proposed)
    wanted = set(chosen)
    out: list[str] = []
    at = 0  # the next old line to copy
    for number, (_tag, i1, i2, j1, j2) in enumerate(line_edits(old, new), start=1):
        out += old[at:i1]
        out += new[j1:j2] if number in wanted else old[i1:i2]
        at = i2
    out += old[at:]
    return "".join(out)


def hand_lines(base: str, origins: Sequence[LineOrigin], *, current: bool) -> list[int]:
    """The 0-based numbers of ``base``'s lines a person wrote (``LineOrigin.by_person``).

    Args:
        base: the text a proposal was made on.
        origins: the blame of the current document.
        current: whether ``base`` is the current document (then the blame's line numbers
            are ``base``'s); otherwise a line counts as the person's when its text is that of
            a line of theirs in the current document.
    """
    if current:
        return [origin.line - 1 for origin in origins if origin.by_person]
    theirs = {origin.text for origin in origins if origin.by_person}
    return [number for number, line in enumerate(base.splitlines()) if line in theirs]
