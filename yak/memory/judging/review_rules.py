"""Why a rewrite judged as a whole waits for review: an agent's proposal, and the share of
removed lines that holds a refresh too ("Review" and "Hand lines are authoritative" in
docs/memory.md). Pure; a refresh's lines are decided one by one in
:mod:`yak.memory.judging.per_line`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from yak.domain import LineOrigin, ReviewMode
from yak.held import REMOVAL_SHARE, HeldKind, HeldLine, held_line_words
from yak.linediff import Opcode, line_opcodes
from yak.memory.history.provenance import fold_line
from yak.memory.judging.dangerous import capability
from yak.memory.judging.kinds import is_instruction


def removal_held(
    old_lines: Sequence[str],
    opcodes: Sequence[Opcode],
    *,
    spared: Collection[int] = (),
) -> HeldLine | None:
    """Why a rewrite that removes (or changes) more than ``REMOVAL_SHARE`` of the previous
    non-blank lines waits whole (``HeldKind.REMOVES_SHARE``), else ``None``; ``opcodes``: its
    line diff; ``spared``: indices of previous lines the rewrite removes that stay all the
    same (their removal waits on its own), not counted."""
    removed = tuple(
        old_lines[index]
        for tag, i1, i2, _j1, _j2 in opcodes
        if tag != "equal"
        for index in range(i1, i2)
        if old_lines[index].strip() and index not in spared
    )
    before = sum(1 for line in old_lines if line.strip())
    if before and len(removed) > REMOVAL_SHARE * before:
        return HeldLine("", HeldKind.REMOVES_SHARE, str(before), removed)
    return None


def review_held(
    previous: str,
    new: str,
    origins: Sequence[LineOrigin],
    tombstones: Collection[str],
    mode: ReviewMode = ReviewMode.AUTO,
) -> list[HeldLine]:
    """Why a rewrite that passed the hard guards must wait for review (``[]``: apply it).

    A rewrite waits when the workspace is in review mode, or when it removes or alters lines a
    person wrote, brings back a tombstoned line (matched by ``provenance.fold_line``), removes
    more than ``REMOVAL_SHARE`` of the previous non-blank lines, or adds a line that gives the
    agent a dangerous capability (:func:`yak.memory.judging.dangerous.capability`, judged
    against ``previous``) or another standing instruction
    (:func:`yak.memory.judging.kinds.is_instruction`).
    A rewrite identical to ``previous`` never waits.

    Args:
        previous: the document the rewrite is based on.
        new: the cleaned, normalized rewrite.
        origins: ``provenance.blame`` of ``previous`` (one per line; fewer when unknown).
        tombstones: the folded keys of the workspace's tombstones.
        mode: the workspace's review mode.

    Returns:
        One reason per cause, in the order above (``yak.held.held_line_words`` words each).
    """
    if new == previous:
        return []
    held = [HeldLine("", HeldKind.REVIEW_MODE)] if mode is ReviewMode.REVIEW else []
    old_lines, new_lines = previous.splitlines(), new.splitlines()
    person = {origin.line - 1 for origin in origins if origin.by_person}
    touched: list[str] = []
    inserted: list[str] = []
    opcodes = line_opcodes(old_lines, new_lines)
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        touched += [old_lines[i] for i in range(i1, i2) if i in person and old_lines[i].strip()]
        inserted += [line for line in new_lines[j1:j2] if line.strip()]
    if touched:
        held.append(HeldLine("", HeldKind.TOUCHED, lines=tuple(touched)))
    returning = tuple(line for line in inserted if fold_line(line) in tombstones)
    if returning:
        held.append(HeldLine("", HeldKind.RETURNING, lines=returning))
    removal = removal_held(old_lines, opcodes)
    if removal:
        held.append(removal)
    known = {fold_line(line) for line in old_lines}
    for line in inserted:
        found = capability(line, document=previous) if fold_line(line) not in known else None
        if found is not None:
            held.append(HeldLine(line, HeldKind.DANGEROUS, str(found)))
        elif is_instruction(line):
            held.append(HeldLine(line, HeldKind.INSTRUCTION))
    return held


def review_reasons(
    previous: str,
    new: str,
    origins: Sequence[LineOrigin],
    tombstones: Collection[str],
    mode: ReviewMode = ReviewMode.AUTO,
) -> list[str]:
    """:func:`review_held`, each reason in words (``yak.held.held_line_words``)."""
    return [held_line_words(held) for held in review_held(previous, new, origins, tombstones, mode)]
