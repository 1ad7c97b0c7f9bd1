"""A refresh's rewrite decided per line ("What a rewrite may add" in docs/memory.md). Pure.

The guards judge a reply as a whole (empty, not a document, placeholder, ceiling, floor). A
reply that passes them is then taken apart line by line against the document it was based on
(line hunks, :func:`yak.linediff.line_opcodes`):

1. new lines that say nothing (only ``[REDACTED:…]`` markers, "None yet.") are **dropped**:
   never stored, never proposed (the form's reader has already dropped lines that are Yak's
   own request or edit syntax: ``yak.memory.forms``);
2. every other line the rewrite adds or changes is checked for a dangerous capability
   (:func:`yak.memory.judging.dangerous.capability`: such a line waits whoever typed it), against
   the folded conversations (:func:`yak.memory.judging.grounding.check_lines`: not said, only asked
   about, already said, an instruction no one typed) and against the workspace's tombstones;
   it gets its evidence;
3. a hunk that removes or changes a line a person wrote waits whole; a line of the model's that
   it removes without cause (:class:`yak.memory.judging.removals.Removals`: replaced by lines about
   something else, nothing said touches it) stays, and its removal waits;
4. what passes is **applied** (the rewrite's supported part), and what does not **waits** as one
   proposal based on that applied text, with one reason (:class:`yak.held.HeldLine`) per held
   line.

Two reasons hold the whole rewrite instead, as before: the workspace is in review mode, or the
rewrite removes more than ``yak.held.REMOVAL_SHARE`` of the previous lines (those that stay
aside).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from yak.domain import MAX_CHARS, MAX_LINES, LineOrigin, ReviewMode
from yak.evidence import Evidence
from yak.held import HeldKind, HeldLine, held_line_words
from yak.linediff import Opcode, line_opcodes
from yak.memory.freshness.workspace import WorkspaceFacts
from yak.memory.history.provenance import fold_line
from yak.memory.judging import dangerous, grounding
from yak.memory.judging.guards import normalize_document
from yak.memory.judging.kinds import is_structure, says_nothing
from yak.memory.judging.removals import (
    Removals,
    Supersession,
    names_term,
    new_value_of,
    restated,
    supersessions,
)
from yak.memory.judging.review_rules import removal_held
from yak.memory.judging.said import Passage
from yak.memory.judging.words import unmarked


@dataclass(frozen=True)
class Decision:
    """What becomes of a rewrite.

    Attributes:
        applied: the document to store now: the previous document with the rewrite's lines
            that pass (equal to the previous document when none does).
        held: the document to propose on top of ``applied`` when some lines wait (the rewrite
            without its dropped lines), else ``None``.
        held_lines: why it waits: one reason per held line or hunk (or the whole rewrite's
            reasons); ``()`` when nothing waits.
        evidence: the backing passage of each line added (applied or held) that has one.
        duplicates: ``(line number in the previous document, new line)`` per restatement
            held (what the edits retry tells the model).
    """

    applied: str
    held: str | None
    held_lines: tuple[HeldLine, ...]
    evidence: tuple[Evidence, ...]
    duplicates: tuple[tuple[int, str], ...] = ()

    @property
    def reasons(self) -> tuple[str, ...]:
        """One sentence per reason it waits (``yak.held.held_line_words``)."""
        return tuple(held_line_words(held) for held in self.held_lines)


def decide_lines(
    previous: str,
    new: str,
    *,
    origins: Sequence[LineOrigin],
    tombstones: Collection[str],
    passages: Sequence[Passage],
    mode: ReviewMode = ReviewMode.AUTO,
    known: str = "",
    workspace: WorkspaceFacts | None = None,
) -> Decision:
    """Decide a rewrite that passed the guards, line by line.

    Args:
        previous: the document the rewrite is based on.
        new: the normalized rewrite (request lines already dropped by the form's reader).
        origins: ``provenance.blame`` of ``previous`` (fewer than its lines when unknown).
        tombstones: the folded keys of the workspace's tombstones.
        passages: the folded conversations (``yak.memory.judging.said.passages``).
        mode: the workspace's review mode.
        known: what the request itself tells the model besides the document (the project
            folder's name): its words count as said.
        workspace: what the workspace folder shows: a token it shows is observed.

    A line ``new`` adds that says nothing (:func:`yak.memory.judging.kinds.says_nothing`: only
    ``[REDACTED:…]`` markers, or filler such as "None yet.") is dropped, neither applied nor
    held: a person reviewing it could only reject it. The lines ``previous`` had are kept,
    except one the conversations say is superseded that ``new`` keeps beside a line it adds
    in its place (:func:`superseded_kept`): the added line takes its place; when Yak cannot
    tell which line the added one replaces, the added line waits (``superseded_unclear``).

    When what passes changes only structure (blank lines, headings: the 1.5B model deleted
    lines after chit-chat; their removal waited, and the blank line among them went), nothing
    is applied: ``applied`` is ``previous``, byte for byte.

    Returns:
        The :class:`Decision`; ``applied == previous`` and ``held is None`` when ``new`` is
        ``previous`` (or adds only lines that say nothing, or changes only structure).
    """
    old_lines, new_lines = previous.splitlines(), new.splitlines()
    stated = supersessions(passages)  # read once: the removal check asks it again
    gone, unclear = superseded_kept(old_lines, new_lines, stated)
    if gone:  # a supersession the conversations state, carried out: the new line in its place
        moved = set(gone.values())
        new = normalize_document(
            "".join(
                f"{new_lines[gone.get(j, j)]}\n" for j in range(len(new_lines)) if j not in moved
            )
        )
        new_lines = new.splitlines()
    opcodes = line_opcodes(old_lines, new_lines)
    new_at = _added_lines(old_lines, new_lines, opcodes)
    empty = {j for j in new_at if says_nothing(new_lines[j])}
    if empty:  # nothing to remember: never stored, never proposed
        new = normalize_document(
            "".join(f"{line}\n" for j, line in enumerate(new_lines) if j not in empty)
        )
        new_lines = new.splitlines()
        opcodes = line_opcodes(old_lines, new_lines)
        new_at = _added_lines(old_lines, new_lines, opcodes)
    # The previous document's lines still in the rewrite, in place or moved: a new line that
    # restates a moved one is a duplicate too.
    kept = {j + 1: line for j, line in enumerate(new_lines) if j not in new_at}
    added = [new_lines[j] for j in new_at]
    checks = {
        check.line: check
        for check in grounding.check_lines(
            added,
            document=f"{previous}\n{known}" if known else previous,
            kept=kept,
            passages=passages,
            workspace=workspace,
        )
    }
    evidence = tuple(check.evidence for check in checks.values() if check.evidence is not None)
    risky = {
        line: HeldLine(line, HeldKind.DANGEROUS, str(found))
        for line in added
        if (found := dangerous.capability(line, document=previous)) is not None
    }
    person = {origin.line - 1 for origin in origins if origin.by_person}
    spared = _removed_without_cause(old_lines, new_lines, opcodes, person, passages, stated)
    changed = _given_new_values(old_lines, new_lines, opcodes, spared)
    removal = removal_held(old_lines, opcodes, spared=spared | changed)
    whole = [HeldLine("", HeldKind.REVIEW_MODE)] if mode is ReviewMode.REVIEW else []
    whole += [removal] if removal else []
    applied: list[str] = []
    reasons: list[HeldLine] = list(whole)
    duplicates: list[tuple[int, str]] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            applied += old_lines[i1:i2]
            continue
        touched = [old_lines[i] for i in range(i1, i2) if i in person and old_lines[i].strip()]
        held_here: list[str] = []
        passing: list[str] = []
        for line in new_lines[j1:j2]:
            why = risky.get(line) or unclear.get(line) or _line_reason(line, checks, tombstones)
            if why is None:
                passing.append(line)
                continue
            held_here.append(line)
            reasons.append(why)
            check = checks.get(line)
            if check is not None and check.duplicate_of is not None:
                number = _old_number(check.duplicate_of, opcodes, old_lines, new_lines)
                duplicates.append((number, line))
        if touched:
            reasons.append(HeldLine("", HeldKind.TOUCHED, lines=tuple(touched)))
        stays = [old_lines[i] for i in range(i1, i2) if i in spared]
        reasons += [HeldLine(line, HeldKind.WITHOUT_CAUSE) for line in stays]
        substantive = [line for line in passing if line.strip()]
        if touched or (held_here and not substantive and i2 > i1):
            applied += old_lines[i1:i2]  # the hunk waits whole: nothing it removes goes yet
        elif not held_here:
            applied += stays + new_lines[j1:j2]
        else:
            applied += stays + (passing if substantive else [])
    if whole:
        held_text: str | None = new if new != previous else None
        return Decision(previous, held_text, tuple(reasons), evidence, tuple(duplicates))
    applied_text = "".join(line + "\n" for line in applied)
    if applied_text != previous and _content(applied_text) == _content(previous):
        applied_text = previous  # only structure changed: nothing to remember, no revision
    held = new if reasons and new != applied_text else None
    return Decision(
        applied_text,
        held,
        tuple(reasons) if held is not None else (),
        evidence,
        tuple(duplicates),
    )


def _given_new_values(
    old_lines: Sequence[str], new_lines: Sequence[str], opcodes: Sequence[Opcode], spared: set[int]
) -> set[int]:
    """The indices of the previous lines a replacement gives a new value in place, for a cause
    the conversations state (not ``spared``): the new line at the same place in the hunk is a
    new value of it (:func:`yak.memory.judging.removals.new_value_of`: "Redis on port 6379." to
    "… 6380.", and the URL using the port). They are changed, not removed: the quarter of the
    lines that holds a rewrite whole does not count them (the 1.5B model's port, moved in two
    lines of a seven-line document, waited whole)."""
    return {
        i1 + k
        for tag, i1, i2, j1, j2 in opcodes
        if tag == "replace"
        for k in range(min(i2 - i1, j2 - j1))
        if i1 + k not in spared and new_value_of(old_lines[i1 + k], new_lines[j1 + k])
    }


def _content(text: str) -> list[str]:
    """``text``'s lines that are not structure (blank lines, headings, section titles:
    :func:`is_structure`), in order."""
    return [line for line in text.splitlines() if not is_structure(line)]


def superseded_kept(
    old_lines: Sequence[str], new_lines: Sequence[str], stated: Sequence[Supersession]
) -> tuple[dict[int, int], dict[str, HeldLine]]:
    """A supersession the conversations state that a rewrite did not carry out: it keeps a
    line naming what is gone ("- Package manager: npm.", after "we switched from npm to
    pnpm") beside a line it adds in its place ("- Package manager: pnpm.").

    The line added takes the place of the one kept line it restates and is restated by
    (:func:`yak.memory.judging.removals.restated`: the same subject, a new value). A line added that
    names the new name ("- We use pnpm.") but restates none of the kept lines, or several,
    could replace any of them (or be about something else: "- The docs site uses pnpm."):
    Yak cannot tell, so nothing is removed and that line waits. A line added that records the
    change itself, naming both ("- We moved deploys from Heroku to Fly.io."), takes the place of
    the one kept line naming what is gone (several: it waits).

    Args:
        old_lines: the previous document's lines.
        new_lines: the rewrite's lines.
        stated: :func:`yak.memory.judging.removals.supersessions` of the folded conversations.

    Returns:
        By index in ``new_lines`` of a superseded line, the index of the added line that takes
        its place; and, by added line, why it waits when Yak cannot tell which kept line it
        replaces (none of them removed).
    """
    if not stated:
        return {}, {}
    before = {fold_line(line) for line in old_lines}
    kept = [
        j
        for j, line in enumerate(new_lines)
        if fold_line(line) in before and line.strip() and not is_structure(line)
    ]
    added = [
        j
        for j, line in enumerate(new_lines)
        if line.strip() and fold_line(line) not in before and not is_structure(line)
    ]
    gone: dict[int, int] = {}
    unclear: dict[str, HeldLine] = {}
    for supersession in stated:
        olds = [j for j in kept if supersession.outdates(new_lines[j])]
        if not olds:
            continue
        for j in added:
            line = new_lines[j]
            if supersession.outdates(line) or line in unclear or j in gone.values():
                continue
            pairs = [o for o in olds if _restate(new_lines[o], line)]
            names_new = bool(supersession.new) and Supersession(supersession.new).outdates(line)
            if not pairs and not names_new:
                continue  # a line about something else
            if not pairs and names_new and len(olds) == 1 and names_term(line, supersession.old):
                pairs = olds  # the change itself ("moved deploys from Heroku to Fly.io")
            if len(pairs) == 1 and pairs[0] not in gone:
                gone[pairs[0]] = j
                continue
            named = tuple(new_lines[o] for o in (pairs or olds))
            unclear[line] = HeldLine(
                line, HeldKind.SUPERSEDED_UNCLEAR, supersession.old, lines=named
            )
    return gone, unclear


def _restate(old: str, new: str) -> bool:
    """Whether two lines restate each other: the same subject, a new value."""
    return restated(old, [new]) and restated(new, [old])


def _removed_without_cause(
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    opcodes: Sequence[Opcode],
    person: Collection[int],
    passages: Sequence[Passage],
    stated: Sequence[Supersession],
) -> set[int]:
    """The indices of the previous lines the rewrite removes or changes without cause
    (:class:`yak.memory.judging.removals.Removals`): they stay in the applied document, their
    removal waits. Blank lines, structure, a person's lines (their hunk waits whole) and lines the
    rewrite keeps elsewhere are not judged. None at all when keeping them would take the
    document past the ceiling (a condensed rewrite drops lines to fit)."""
    after = {fold_line(line) for line in new_lines}
    before = {fold_line(line) for line in old_lines}
    added = [line for line in new_lines if line.strip() and fold_line(line) not in before]
    removals = Removals(passages, stated=stated)
    spared: set[int] = set()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        for i in range(i1, i2):
            line = old_lines[i]
            if i in person or fold_line(line) in after or is_structure(line):
                continue
            if removals.without_cause(line, new_lines[j1:j2], added):
                spared.add(i)
    kept = [old_lines[i] for i in spared]
    lines = len(new_lines) + len(kept)
    chars = sum(len(line) + 1 for line in new_lines) + sum(len(line) + 1 for line in kept)
    return spared if lines <= MAX_LINES and chars <= MAX_CHARS else set()


def _added_lines(
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    opcodes: Sequence[Opcode],
) -> list[int]:
    """The indices in ``new_lines`` of the rewrite's lines that are new, in order: a line the
    previous document held (list markers aside: ``- - x`` is ``- x`` moved) is moved, and
    needs no backing, only as many times as the rewrite no longer keeps it in place; a second
    copy of a line still there is new (and a duplicate). Blank lines are never new."""
    spare = Counter(  # the previous lines the rewrite took out of their place
        unmarked(fold_line(line))
        for tag, i1, i2, _j1, _j2 in opcodes
        if tag != "equal"
        for line in old_lines[i1:i2]
        if line.strip()
    )
    added: list[int] = []
    for tag, _i1, _i2, j1, j2 in opcodes:
        for j in range(j1, j2) if tag != "equal" else ():
            key = unmarked(fold_line(new_lines[j]))
            if not new_lines[j].strip():
                continue
            if spare[key] > 0:
                spare[key] -= 1
            else:
                added.append(j)
    return added


def _line_reason(
    line: str, checks: dict[str, grounding.LineCheck], tombstones: Collection[str]
) -> HeldLine | None:
    if not line.strip():
        return None
    if fold_line(line) in tombstones:
        return HeldLine(line, HeldKind.TOMBSTONED)
    check = checks.get(line)
    return check.held if check is not None else None


def _old_number(
    candidate_line: int,
    opcodes: Sequence[Opcode],
    old_lines: Sequence[str],
    new_lines: Sequence[str],
) -> int:
    """The previous document's number of a line kept or moved to ``candidate_line`` (1-based)
    in the rewrite (what the model's numbered document showed); the number itself when the
    previous document did not have it."""
    index = candidate_line - 1
    for tag, i1, _i2, j1, j2 in opcodes:
        if tag == "equal" and j1 <= index < j2:
            return i1 + (index - j1) + 1
    key = unmarked(fold_line(new_lines[index])) if index < len(new_lines) else None
    moved = (i for i, line in enumerate(old_lines) if unmarked(fold_line(line)) == key)
    return next(moved, index) + 1
