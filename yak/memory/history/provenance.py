"""Provenance, tombstones and review: the pure rules that make the memory trustworthy
("Provenance", "Hand lines are authoritative", "Tombstones" and "Review" in
docs/memory.md). No I/O; the memory service and the refresher call these.

- :func:`blame` walks the revision chain oldest first and diffs each revision's lines against
  the previous one (``difflib``): a line in an unchanged run keeps its origin, every inserted or
  replaced line takes the origin of the revision that wrote it, with that revision's evidence
  for the same line text. So an origin is exact for a line untouched since it was written. A
  restore gives back the origins (and evidence) the restored revision's lines had.
- :func:`fold_line` is how a returning line is recognised: case, spacing and end punctuation
  folded.
- :func:`write_effects` says what a write does to the tombstones: a hand save buries the lines
  it removed and lifts the ones typed again; an import, a restore or an accepted proposal lift
  the lines they bring; a refresh touches nothing.
- :func:`review_held` says why an agent's proposal (judged whole) must wait for review
  (:func:`review_reasons` in words); a refresh is decided per line instead
  (``yak.memory.judging.per_line``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace

from yak.domain import LineOrigin, ReviewMode, Revision, RevisionSource, WriteEffects
from yak.evidence import Evidence
from yak.held import REMOVAL_SHARE, HeldKind, HeldLine, held_line_words
from yak.linediff import line_changes, line_opcodes
from yak.memory.judging.dangerous import capability
from yak.memory.judging.said import is_instruction

_PERSON_SOURCES = frozenset({RevisionSource.HAND, RevisionSource.IMPORT, RevisionSource.COPY})
_END_PUNCTUATION = ".,;:!?…"


def fold_line(text: str) -> str:
    """A line's identity for tombstones: case folded, runs of whitespace made one space, and
    trailing punctuation removed (``"- Lint with  ruff."`` and ``"- lint with ruff"`` are the
    same line). ``""`` for a blank line."""
    folded = " ".join(text.split()).casefold()
    return folded.rstrip(_END_PUNCTUATION + " ")


def _opcodes(old: Sequence[str], new: Sequence[str]) -> Sequence[tuple[str, int, int, int, int]]:
    return line_opcodes(old, new)


def _by_person(revision: Revision) -> bool:
    return revision.source in _PERSON_SOURCES or (
        revision.source is RevisionSource.PROPOSAL and "edited" in revision.flags
    )


def blame(
    revisions: Iterable[Revision], *, start: tuple[list[str], list[LineOrigin]] | None = None
) -> list[LineOrigin]:
    """The origin of every line of the newest revision.

    Args:
        revisions: the workspace's revisions, **oldest first** (the last one is the current
            document).
        start: the lines and origins of the revision just before the first one given (an
            earlier answer, so only the revisions written since are walked); a restore among
            ``revisions`` then only finds the origins of a revision also given.

    Returns:
        One :class:`LineOrigin` per line of the last revision's content (``[]`` when there is
        none or it is empty), with 1-based line numbers; ``evidence`` is the writing
        revision's entry for the line's text, if it kept one.
    """
    lines, origins = start if start is not None else ([], [])
    by_revision: dict[str, tuple[list[str], list[LineOrigin]]] = {}
    for revision in revisions:
        new_lines = revision.content.splitlines()
        new_origins: list[LineOrigin | None] = [None] * len(new_lines)
        for tag, i1, i2, j1, j2 in _opcodes(lines, new_lines):
            if tag == "equal":
                new_origins[j1:j2] = origins[i1:i2]
        restored = by_revision.get(revision.restored_from or "")
        if revision.source is RevisionSource.RESTORE and restored is not None:
            old_lines, old_origins = restored
            for tag, i1, _i2, j1, j2 in _opcodes(old_lines, new_lines):
                if tag == "equal":
                    for offset in range(j2 - j1):
                        if new_origins[j1 + offset] is None:
                            new_origins[j1 + offset] = old_origins[i1 + offset]
        own = LineOrigin(
            line=0,
            text="",
            version=revision.version,
            source=revision.source,
            created_at=revision.created_at,
            revision_id=revision.id,
            sessions=revision.session_ids,
            model=revision.model,
            by_person=_by_person(revision),
        )
        # A line this revision wrote carries its evidence, matched by the line's text.
        backed = {entry.line: entry for entry in reversed(revision.evidence)}
        origins = [
            _at(origin if origin is not None else _backed(own, backed, text), number, text)
            for number, (origin, text) in enumerate(zip(new_origins, new_lines, strict=True), 1)
        ]
        lines = new_lines
        by_revision[revision.id] = (lines, origins)
    return origins


def evidence_kept(evidence: Iterable[Evidence], text: str) -> tuple[Evidence, ...]:
    """The entries of ``evidence`` whose line is a line of ``text`` exactly, one per line
    (the first given), in the order given: what a write of ``text`` stores ("Evidence" in
    docs/memory.md)."""
    present = set(text.splitlines())
    kept: dict[str, Evidence] = {}
    for entry in evidence:
        if entry.line in present and entry.line not in kept:
            kept[entry.line] = entry
    return tuple(kept.values())


def evidence_json(evidence: Evidence | None) -> dict[str, str] | None:
    """A line's evidence as ``blame --json`` and MCP ``memory_blame`` give it: ``{"line",
    "session_id", "message_id", "speaker", "quote"}`` (speaker ``user``, ``assistant`` or
    ``tool_call``), or ``None``."""
    if evidence is None:
        return None
    return {
        "line": evidence.line,
        "session_id": evidence.session_id,
        "message_id": evidence.message_id,
        "speaker": str(evidence.speaker),
        "quote": evidence.quote,
    }


def _backed(own: LineOrigin, backed: dict[str, Evidence], text: str) -> LineOrigin:
    entry = backed.get(text)
    return own if entry is None else replace(own, evidence=entry)


def _at(origin: LineOrigin, number: int, text: str) -> LineOrigin:
    if origin.line == number and origin.text == text:
        return origin
    return replace(origin, line=number, text=text)


def write_effects(
    base: str, new: str, source: RevisionSource, *, buries_removed: bool | None = None
) -> WriteEffects:
    """What a write of ``new`` over ``base`` does: its line counts and its tombstones.

    A ``hand`` write buries every non-blank line it removes or rewords (unless the same line,
    folded, is still in ``new``) and lifts every line it adds; ``import``, ``restore`` and
    ``proposal`` (the person chose them) lift the lines they add; ``refresh`` and ``clear``
    change no tombstone.

    Args:
        base: the text the write replaces.
        new: the text written.
        source: the write's source.
        buries_removed: override whether removed lines are buried (default: only ``hand``).
    """
    added, removed = line_changes(base, new)
    if source in (RevisionSource.REFRESH, RevisionSource.CLEAR):
        return WriteEffects(added=added, removed=removed)
    old_lines, new_lines = base.splitlines(), new.splitlines()
    kept = {fold_line(line) for line in new_lines}
    bury: dict[str, str] = {}
    lift: list[str] = []
    buries = source is RevisionSource.HAND if buries_removed is None else buries_removed
    for tag, i1, i2, j1, j2 in _opcodes(old_lines, new_lines):
        if tag == "equal":
            continue
        if buries:
            for line in old_lines[i1:i2]:
                key = fold_line(line)
                if key and key not in kept:
                    bury.setdefault(key, line)
        for line in new_lines[j1:j2]:
            key = fold_line(line)
            if key and key not in lift:
                lift.append(key)
    return WriteEffects(added=added, removed=removed, bury=tuple(bury.items()), lift=tuple(lift))


def added_lines(base: str, new: str) -> list[str]:
    """The non-blank lines ``new`` inserts or writes in place of others, in order."""
    old_lines, new_lines = base.splitlines(), new.splitlines()
    found: list[str] = []
    for tag, _i1, _i2, j1, j2 in _opcodes(old_lines, new_lines):
        if tag != "equal":
            found += [line for line in new_lines[j1:j2] if line.strip()]
    return found


# --- review ---------------------------------------------------------------------------------------


def removal_held(
    old_lines: Sequence[str],
    opcodes: Sequence[tuple[str, int, int, int, int]],
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
    person wrote, brings back a tombstoned line (matched by :func:`fold_line`), removes more than
    ``REMOVAL_SHARE`` of the previous non-blank lines, or adds a line that gives the agent a
    dangerous capability (:func:`yak.memory.judging.dangerous.capability`, judged against
    ``previous``) or another standing instruction (:func:`yak.memory.judging.said.is_instruction`).
    A rewrite identical to ``previous`` never waits.

    Args:
        previous: the document the rewrite is based on.
        new: the cleaned, normalized rewrite.
        origins: :func:`blame` of ``previous`` (one per line; fewer when unknown).
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
    opcodes = _opcodes(old_lines, new_lines)
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
