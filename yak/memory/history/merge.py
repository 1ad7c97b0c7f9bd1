"""A line-level three-way merge: a proposal made on one version of the document, moved onto
a newer version ("The inbox" in docs/memory.md). Pure rules, no I/O.

The proposal's changes (base → proposal) and the document's changes since (base → current)
are taken as line hunks (:func:`yak.linediff.line_edits`); the merge applies both when no two
hunks touch. Two hunks touch when their base ranges overlap or meet: there the order of the
lines cannot be known, so the merge gives up and the proposal waits, marked as conflicting.
The same change made on both sides is taken once. A proposal's pure addition (it changes no
line) touches only a change whose range holds its place strictly inside: added where the
document added too, its lines go after the document's; at the edge of a changed range, beside
it.
"""

from __future__ import annotations

from yak.linediff import line_edits

Hunk = tuple[int, int, tuple[str, ...]]
"""``(start, end, lines)``: base lines ``start``..``end`` (0-based, end excluded) become
``lines`` (an insertion when ``start == end``)."""


def hunks(base: list[str], changed: list[str]) -> list[Hunk]:
    """The changes from ``base`` to ``changed``, in base order."""
    return [(i1, i2, tuple(changed[j1:j2])) for _tag, i1, i2, j1, j2 in line_edits(base, changed)]


def _touch(ours: Hunk, theirs: Hunk) -> bool:
    if ours[0] == ours[1]:  # a pure addition: only a range changed around it is unclear
        return theirs[0] < ours[0] < theirs[1]
    return ours[0] <= theirs[1] and theirs[0] <= ours[1]


def merge3(base: str, proposal: str, current: str) -> str | None:
    """``proposal``'s changes to ``base`` applied to ``current`` (documents with LF line
    endings), or ``None`` when they touch lines ``current`` changed too (a conflict).

    Examples: base ``"a\\nb\\nc\\n"``, proposal ``"a\\nx\\nb\\nc\\n"`` (adds x after a), current
    ``"a\\nb\\nc\\nd\\n"`` (adds d at the end) → ``"a\\nx\\nb\\nc\\nd\\n"``; proposal
    ``"a\\nb\\nc\\ny\\n"`` (adds y at the end) → ``"a\\nb\\nc\\nd\\ny\\n"`` (the document's
    addition first).
    """
    if proposal == base or current == proposal:
        return current
    if current == base:
        return proposal
    lines = base.splitlines(keepends=True)
    ours = hunks(lines, proposal.splitlines(keepends=True))
    theirs = hunks(lines, current.splitlines(keepends=True))
    taken = list(theirs)
    for hunk in ours:
        same = [t for t in theirs if t == hunk]
        if same:
            continue  # the document already made exactly this change
        if any(_touch(hunk, t) for t in theirs):
            return None
        start, end, new = hunk
        if start == end:  # a line the document added at the same place is not added twice
            beside = {line for t in theirs if t[0] == t[1] == start for line in t[2]}
            new = tuple(line for line in new if line not in beside)
        if new or start != end:
            taken.append((start, end, new))
    # Stable: at one place, the document's additions (taken first) come before the proposal's.
    taken.sort(key=lambda h: (h[0], h[1]))
    merged: list[str] = []
    at = 0
    for start, end, new in taken:
        merged.extend(lines[at:start])
        merged.extend(new)
        at = end
    merged.extend(lines[at:])
    text = "".join(merged)
    if text and not text.endswith("\n"):
        text += "\n"
    return text
