"""Provenance and tombstones: the pure rules that make the memory trustworthy ("Provenance",
"Hand lines are authoritative" and "Tombstones" in docs/memory.md). No I/O; the memory service
and the refresher call these.

- :func:`blame` walks the revision chain oldest first and diffs each revision's lines against
  the previous one (:func:`yak.linediff.line_opcodes`): a line in an unchanged run keeps its
  origin, every inserted or replaced line takes the origin of the revision that wrote it, with
  that revision's evidence for the same line text. So an origin is exact for a line untouched
  since it was written. A restore gives back the origins (and evidence) the restored
  revision's lines had.
- :func:`fold_line` is how a returning line is recognised: case, spacing and end punctuation
  folded.
- :func:`write_effects` says what a write does to the tombstones: a hand save buries the lines
  it removed and lifts the ones typed again; an import, a restore or an accepted proposal lift
  the lines they bring; a refresh touches nothing.

Why a rewrite waits for review is judged in ``yak.memory.judging.pipeline``
(:mod:`~yak.memory.judging.review_rules`, :mod:`~yak.memory.judging.per_line`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from yak.domain import LineOrigin, Revision, RevisionSource, WriteEffects
from yak.evidence import Evidence
from yak.linediff import line_changes, line_opcodes
from yak.memory.lines import fold

_PERSON_SOURCES = frozenset({RevisionSource.HAND, RevisionSource.IMPORT, RevisionSource.COPY})
_END_PUNCTUATION = ".,;:!?…"


def fold_line(text: str) -> str:
    """A line's identity for tombstones: case folded, runs of whitespace made one space, and
    trailing punctuation removed (``"- Lint with  ruff."`` and ``"- lint with ruff"`` are the
    same line). ``""`` for a blank line."""
    return fold(text).rstrip(_END_PUNCTUATION + " ")


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
        for tag, i1, i2, j1, j2 in line_opcodes(lines, new_lines):
            if tag == "equal":
                new_origins[j1:j2] = origins[i1:i2]
        restored = by_revision.get(revision.restored_from or "")
        if revision.source is RevisionSource.RESTORE and restored is not None:
            old_lines, old_origins = restored
            for tag, i1, _i2, j1, j2 in line_opcodes(old_lines, new_lines):
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
    "session_id", "message_id", "speaker", "quote"}`` (speaker ``user``, ``assistant``,
    ``tool_call``, or ``workspace`` with empty ids), or ``None``."""
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
    for tag, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
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
    for tag, _i1, _i2, j1, j2 in line_opcodes(old_lines, new_lines):
        if tag != "equal":
            found += [line for line in new_lines[j1:j2] if line.strip()]
    return found
