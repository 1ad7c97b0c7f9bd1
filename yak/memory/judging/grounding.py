"""Grounding: which passage of the folded conversations backs each line a rewrite adds, and
why a line may not be applied without review ("Evidence" and "What a rewrite may add" in
docs/memory.md, where "Grounding" describes these rules). Pure functions: no I/O. What was said
(passages) is cut in :mod:`yak.memory.judging.said`; lines are compared by
:mod:`yak.memory.judging.words` through :mod:`yak.memory.judging.index`.

- :func:`check_lines` scores every passage against every new line (distinctive tokens weigh
  most, then content words with light stemming and compound words) and says, per line, which
  passage backs it and, when the line must wait for review, why (a :class:`yak.held.HeldLine`).

The passages are indexed once per call (content word → passages).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from yak.evidence import EVIDENCE_QUOTE_CHARS, Evidence, Speaker
from yak.held import HeldKind, HeldLine, held_line_words
from yak.memory.freshness.workspace import WorkspaceFacts
from yak.memory.judging.index import (
    TOKEN_WEIGHT,
    Entry,
    Index,
    Line,
    compared_line,
    document_line,
    index_passages,
)
from yak.memory.judging.kinds import BULLET, is_instruction, is_structure
from yak.memory.judging.said import Passage
from yak.memory.judging.words import (
    content_words,
    distinctive_tokens,
    found_in,
    matched_words,
    split_sentences,
    token_key,
    unmarked,
)

SUPPORT_SHARE = 0.5  # of a line's weighted words, the share a passage must hold to back it
SHORT_LINE = 3  # a line of at most this many words (no token) is backed by one of them
SHORT_SHARE = 1 / 3
DOCUMENT_SHARE = 0.8  # of a line's weighted words, the share of a rewording of the document
_DOCUMENT_CANDIDATES = 6  # document lines compared in full with a line (the most alike)
DUPLICATE_SHARE = 0.8  # of a new line's content words, the share found in a line it restates

# The reasons as a line's status shows them (``yak.held`` words them).
NOTHING_SAYS = held_line_words(HeldLine("", HeldKind.NOTHING_SAYS), line_shown=True)
ONLY_ASKED = held_line_words(HeldLine("", HeldKind.ONLY_ASKED), line_shown=True)
NOT_TYPED = held_line_words(HeldLine("", HeldKind.NOT_TYPED), line_shown=True)

# Which speaker's backing passage is the evidence (the person first; a tool call is an
# observation, above the assistant's talk when the line names a command or a path, below it
# otherwise; the workspace folder last: what was said about it tells more).
_RANK = {Speaker.USER: 4, Speaker.ASSISTANT: 2, Speaker.WORKSPACE: 0}
_TOOL_RANK_WITH_TOKENS = 3
_TOOL_RANK_WITHOUT = 1


@dataclass(frozen=True)
class LineCheck:
    """The verdict on one line a rewrite adds or changes.

    Attributes:
        line: the line, as given.
        evidence: the passage that backs it best (``None``: none does, or the line is
            structure, or only the previous document backs it).
        held: ``None`` when the line may be applied; else why it waits for review.
        duplicate_of: the 1-based number, in the candidate, of the line it restates.
    """

    line: str
    evidence: Evidence | None
    held: HeldLine | None
    duplicate_of: int | None = None

    @property
    def reason(self) -> str | None:
        """Why the line waits, in words, without its quote (``None``: it may be applied)."""
        return None if self.held is None else held_line_words(self.held, line_shown=True)


# --- scores and evidence --------------------------------------------------------------------


@dataclass(frozen=True)
class _Score:
    share: float
    entry: Entry
    anchor: str


def _scores(line: Line, index: Index) -> list[_Score]:
    """The passages that back ``line``: each holds at least ``SUPPORT_SHARE`` of its weight,
    two of its words (one for a one-word line) or a token, and, for a "label: value" line,
    a word of the value or a token; a line of at most ``SHORT_LINE`` words needs only one of
    them (``SHORT_SHARE``): a terse "Use pytest." backs "- Tests run with pytest."."""
    scores: list[_Score] = []
    short = line.total <= SHORT_LINE  # "Use pytest." backs "- Tests run with pytest."
    for entry, tokens, words in index.near(line, SHORT_SHARE if short else SUPPORT_SHARE):
        if not tokens and len(words) < (1 if short else min(2, len(line.words.stems))):
            continue
        if line.value and not (words & line.value) and not tokens:
            continue
        share = (TOKEN_WEIGHT * len(tokens) + len(words)) / line.total
        anchor = next((key for key in line.keys if key in tokens), "")
        if not anchor and words:
            anchor = min(words, key=lambda stem: _position(entry.line.folded, stem))
        scores.append(_Score(share, entry, anchor))
    return scores


def _position(folded: str, stem: str) -> int:
    at = folded.find(stem)
    return at if at >= 0 else len(folded)


def _rank(score: _Score, line: Line) -> tuple[bool, int, float, int]:
    """Decided before wondering, then the speaker (the person; a tool call for a line with
    tokens; the assistant; a tool call for a line without), then the share, then the latest."""
    speaker = score.entry.passage.speaker
    if speaker is Speaker.TOOL_CALL:
        weight = _TOOL_RANK_WITH_TOKENS if line.keys else _TOOL_RANK_WITHOUT
    else:
        weight = _RANK[speaker]
    return (not score.entry.passage.wondering, weight, score.share, score.entry.order)


def _quote(passage: Passage, anchor: str) -> str:
    text = " ".join(passage.text.split())
    if len(text) <= EVIDENCE_QUOTE_CHARS:
        return text
    at = max(0, text.casefold().find(anchor)) if anchor else 0
    room = EVIDENCE_QUOTE_CHARS - 2  # two ellipses at most
    start = max(0, min(at - room // 3, len(text) - room))
    end = min(len(text), start + room)
    head = "…" if start > 0 else ""
    tail = "…" if end < len(text) else ""
    return f"{head}{text[start:end].strip()}{tail}"


def _evidence(line: str, score: _Score) -> Evidence:
    passage = score.entry.passage
    return Evidence(
        line=line,
        session_id=passage.session_id,
        message_id=passage.message_id,
        speaker=passage.speaker,
        quote=passage.source or _quote(passage, score.anchor),
    )


# --- duplicates -----------------------------------------------------------------------------


def _restates(new: Line, other: Line) -> float:
    """How closely ``new`` restates ``other`` (0: it does not): 1 when it is ``other`` word
    for word, list markers aside (``- - pytest.`` is ``- pytest.``); the share of its content
    words found in ``other`` (compounds counted), when it has at least two, or 1 when both
    carry the same distinctive tokens and share at least half the words; never across
    polarity, nor when ``new`` names a token ``other`` does not."""
    if new.negated != other.negated:
        return 0.0
    if unmarked(new.folded) == unmarked(other.folded):  # word for word, however short
        return 1.0
    if any(not found_in(key, other.folded, other.squashed) for key in new.keys):
        return 0.0
    stems = new.words.stems
    matched = matched_words(new.words, other.terms) if stems else set()
    share = len(matched) / len(stems) if stems else 0.0
    if len(stems) >= 2 and share >= DUPLICATE_SHARE:
        return share
    if new.keys and set(new.keys) == set(other.keys) and share >= 0.5:
        return 1.0
    return 0.0


def _duplicate_of(line: Line, earlier: Index) -> int | None:
    if not line.words.stems:
        return None
    best: tuple[float, int] | None = None
    bound: Counter[int] = Counter()
    for stem in line.words.stems:
        bound.update(earlier.by_term.get(stem, ()))
    for _a, _b, joined in line.words.pairs:
        for number in earlier.by_term.get(joined, ()):
            bound[number] += 2
    need = 0.5 * len(line.words.stems) - 1e-9
    for number, weight in bound.items():
        if weight < need:
            continue
        entry = earlier.entries[number]
        share = _restates(line, entry.line)
        candidate = entry.number
        if share and (best is None or (share, -candidate) > (best[0], -best[1])):
            best = (share, candidate)
    return best[1] if best is not None else None


def _new_line_numbers(count: int, kept: Mapping[int, str]) -> list[int]:
    free = (number for number in itertools.count(1) if number not in kept)
    return list(itertools.islice(free, count))


# The passage every line of the document or of the candidate is indexed under (never quoted).
_DOCUMENT = Passage("", "", Speaker.USER, "", wondering=False)


# --- the check ------------------------------------------------------------------------------


def check_lines(
    new_lines: Sequence[str],
    *,
    document: str,
    kept: Mapping[int, str],
    passages: Sequence[Passage],
    workspace: WorkspaceFacts | None = None,
) -> list[LineCheck]:
    """Which passage backs each line a rewrite adds or changes, and why a line must wait for
    review ("Evidence" and "What a rewrite may add" in docs/memory.md; "Grounding" there
    gives the rules as built).

    Per line, the first reason that applies is given, in this order; the evidence is filled
    whenever a passage backs the line, whatever the reason:

    1. Structure (:func:`is_structure`: blank, ``---``, a heading, a section title): no
       reason, no evidence.
    2. Duplicate: it restates a kept line or an earlier new line (``line N already says
       this``, ``duplicate_of`` N): at least ``DUPLICATE_SHARE`` of its content words (two or
       more) are in the other, or both carry the same distinctive tokens; never when one is
       negated and the other not, nor when it names a token the other does not.
    3. Unsupported: a distinctive token (``words.distinctive_tokens``) found neither in a
       passage, nor in ``document``, nor in the ``workspace`` (a path, a file name, a
       language, a manifest's name: observed, ``Speaker.WORKSPACE`` evidence quoting where,
       ``pyproject.toml``) (``'~/vaults/Dev' was not said in the conversations``; a
       URL, ``KEY=value`` or ``host:port`` also counts when each of its parts was said); or
       nothing backs it (``nothing in the conversations says this``). A passage backs a line
       when it holds ``SUPPORT_SHARE`` of the line's weight (``TOKEN_WEIGHT`` per token, 1
       per content word: stopwords dropped, light stemming, compounds like "Xcode build" ~
       ``xcodebuild``); the document backs it when one or two of its lines hold
       ``DOCUMENT_SHARE`` of it, or when they do together with one decided passage (a value
       the conversation changed, carried into a line that repeats it); a line of several
       sentences is backed when a decided passage backs each sentence.
    4. Wondered: only questions, conditionals or hedges back it (``only asked about, not
       decided``).
    5. Instruction (:func:`is_instruction`): no passage of the person backs it that is
       decided, not quoted (:attr:`Passage.quoted`) and of the same polarity, nor does a
       document line it rewords with the same polarity (``an instruction no one typed``);
       in a line of several sentences, each sentence that instructs is asked this on its own.

    The evidence is the backing passage that ranks first: decided before wondering, then by
    speaker (the person; a tool call for a line with tokens; the assistant; a tool call for a
    line without), then by share, ties to the latest said.

    Args:
        new_lines: the lines the rewrite adds or changes, in order.
        document: the previous document (its tokens count as said).
        kept: ``{1-based line number in the candidate: text}`` of the previous document's
            lines still in the candidate; the new lines take the numbers ``kept`` leaves free,
            in order, so a duplicate of an earlier new line names its number too.
        passages: what was said (:func:`~yak.memory.judging.said.passages`), oldest first.
        workspace: what the workspace folder shows (``yak.memory.freshness.workspace``), or
            ``None`` when not known.

    Returns:
        One :class:`LineCheck` per line of ``new_lines``, in order.
    """
    said = index_passages([*passages, *_workspace_passages(new_lines, workspace)])
    doc = Index()
    for text in document.splitlines():
        if not is_structure(text):
            doc.add(_DOCUMENT, document_line(text))
    earlier = Index()
    for number, text in sorted(kept.items()):
        if not is_structure(text):
            earlier.add(_DOCUMENT, document_line(text), number=number)
    checks: list[LineCheck] = []
    for number, text in zip(_new_line_numbers(len(new_lines), kept), new_lines, strict=True):
        if is_structure(text):
            checks.append(LineCheck(text, None, None))
            continue
        line = compared_line(text)
        checks.append(_check(line, earlier, said, doc))
        earlier.add(_DOCUMENT, line, number=number)
    return checks


def _workspace_passages(lines: Sequence[str], facts: WorkspaceFacts | None) -> list[Passage]:
    """One passage per distinctive token of ``lines`` the workspace shows: the token as its
    text (so it counts as said), where it shows as its source."""
    if facts is None:
        return []
    found: dict[str, Passage] = {}
    for text in lines:
        if is_structure(text):
            continue
        for token in distinctive_tokens(text):
            key = token_key(token)
            if key in found:
                continue
            where = facts.where(token)
            if where is not None:
                found[key] = Passage("", "", Speaker.WORKSPACE, token, False, source=where)
    return list(found.values())


def _check(line: Line, earlier: Index, said: Index, doc: Index) -> LineCheck:
    scores = _scores(line, said)
    best = max(scores, key=lambda score: _rank(score, line), default=None)
    evidence = _evidence(line.text, best) if best is not None else None

    duplicate = _duplicate_of(line, earlier)
    if duplicate is not None:
        held = HeldLine(line.text, HeldKind.DUPLICATE, str(duplicate))
        return LineCheck(line.text, evidence, held, duplicate)

    for token, key in zip(line.tokens, line.keys, strict=True):
        if not _said(key, said, doc):
            return LineCheck(line.text, evidence, HeldLine(line.text, HeldKind.NOT_SAID, token))

    parts: list[tuple[Line, list[_Score]]] = [(line, scores)]
    if not _decided(scores):
        tokens, words = _document_match(line, doc)
        weight = TOKEN_WEIGHT * len(tokens) + len(words)
        reworded = line.total > 0 and weight >= DOCUMENT_SHARE * line.total
        carried = None if reworded else _carried(line, said, words)
        by_sentence = None if reworded or carried else _sentences_decided(line, said)
        if not reworded and carried is None and by_sentence is None:
            kind = HeldKind.ONLY_ASKED if scores else HeldKind.NOTHING_SAYS
            return LineCheck(line.text, evidence, HeldLine(line.text, kind))
        if carried is not None:
            evidence = _evidence(line.text, carried)
        if by_sentence is not None:
            parts = by_sentence
            first = max(by_sentence[0][1], key=lambda score: _rank(score, by_sentence[0][0]))
            evidence = _evidence(line.text, first)

    if is_instruction(line.text):
        if len(parts) == 1:
            parts = _sentences(line, said) or parts
        orders = [(part, found) for part, found in parts if is_instruction(part.text)]
        if any(not _typed(part, found, doc) for part, found in orders or [(line, scores)]):
            return LineCheck(line.text, evidence, HeldLine(line.text, HeldKind.NOT_TYPED))
    return LineCheck(line.text, evidence, None)


def _decided(scores: Sequence[_Score]) -> bool:
    """Whether a decided passage backs the line as well as any question does (not a weak
    echo)."""
    asked = max((sc.share for sc in scores if sc.entry.passage.wondering), default=0.0)
    return any(not sc.entry.passage.wondering and sc.share >= asked for sc in scores)


def _sentences(line: Line, said: Index) -> list[tuple[Line, list[_Score]]] | None:
    """Each sentence of a line of several, with the passages backing it; ``None`` for a line
    of one sentence."""
    sentences = split_sentences(BULLET.sub("", line.text))
    if len(sentences) < 2:
        return None
    return [(part, _scores(part, said)) for part in map(compared_line, sentences)]


def _sentences_decided(line: Line, said: Index) -> list[tuple[Line, list[_Score]]] | None:
    """For a line of several sentences that no one passage backs (a person's message written
    as one line: the 1.5B model's edits did), each sentence with the passages backing it, when
    a decided passage backs every one; ``None`` otherwise (or for a line of one sentence)."""
    parts = _sentences(line, said)
    if parts is None or not all(_decided(scores) for _part, scores in parts):
        return None
    return parts


_PIECES = re.compile(r"[=:/@?&#]+")


def _pieces(key: str) -> list[str]:
    """The parts of a URL, a ``KEY=value``, a ``host:port`` or an address (``[]`` for any
    other token): each must be said for the whole to count as said."""
    if "=" not in key and ":" not in key and "@" not in key:
        return []
    return [piece for piece in _PIECES.split(key) if len(piece) >= 2]


_WITH_UNIT = re.compile(r"(\d+)[a-z%]+")


def _said(key: str, said: Index, doc: Index) -> bool:
    """Whether the token ``key`` was said in a passage or stands in the document; a number
    with a unit (``10k``, ``512mb``) also when the number stands alone ("512 MB", "30
    seconds"), never the other way round (a line's ``10`` is not said by "10k"); a URL,
    ``KEY=value``, ``host:port`` or address also when each of its parts was (a changed port
    carried into a dependent line)."""
    if said.hits(key) or doc.hits(key):
        return True
    number = _WITH_UNIT.fullmatch(key)
    if number is not None and (said.hits(number[1]) or doc.hits(number[1])):
        return True
    pieces = _pieces(key)
    return bool(pieces) and all(said.hits(piece) or doc.hits(piece) for piece in pieces)


def _carried(line: Line, said: Index, from_document: set[str]) -> _Score | None:
    """The decided passage that, with the document, backs ``line`` (a value changed in the
    conversation carried into a line that repeats it): the document's best one or two lines
    plus the passage's words hold ``DOCUMENT_SHARE`` of the line, its tokens all said
    somewhere (checked before), the passage adding at least one word; ``None`` when none
    does."""
    total = line.total
    missing = [stem for stem in line.words.stems if stem not in from_document]
    base = TOKEN_WEIGHT * len(line.keys) + len(line.words.stems) - len(missing)
    need = DOCUMENT_SHARE * total - base - 1e-9
    if not total or not missing or need > len(missing):
        return None
    best: tuple[tuple[int, int, int], _Score] | None = None
    counts: Counter[int] = Counter()
    for stem in missing:
        counts.update(said.by_term.get(stem, ()))
    for number, count in counts.items():
        entry = said.entries[number]
        if count < need or entry.passage.wondering:
            continue
        added = [stem for stem in missing if stem in entry.line.terms]
        share = (base + len(added)) / total
        speaker = entry.passage.speaker
        rank = _RANK.get(speaker, _TOOL_RANK_WITH_TOKENS if line.keys else _TOOL_RANK_WITHOUT)
        key = (rank, len(added), entry.order)
        if best is None or key > best[0]:
            best = (key, _Score(share, entry, added[0]))
    return best[1] if best is not None else None


def _document_match(line: Line, doc: Index) -> tuple[set[str], set[str]]:
    """The tokens and words of ``line`` that one line of the document, or two together (a
    merge), hold."""
    near = sorted(
        doc.near(line, 0.0, limit=_DOCUMENT_CANDIDATES),
        key=lambda found: (TOKEN_WEIGHT * len(found[1]) + len(found[2]), -found[0].order),
        reverse=True,
    )[:2]
    tokens: set[str] = set()
    words: set[str] = set()
    for _entry, found_tokens, found_words in near:
        tokens |= found_tokens
        words |= found_words
    return tokens, words


def _typed(line: Line, scores: Sequence[_Score], doc: Index) -> bool:
    """Whether a person typed the instruction ``line``: a non-wondering passage of theirs
    backs it with the same polarity, or it rewords one line of the document (the person
    accepted it) with the same polarity and ``DOCUMENT_SHARE`` of its weight."""
    for score in scores:
        passage = score.entry.passage
        if (
            passage.speaker is Speaker.USER
            and score.share >= SUPPORT_SHARE  # a short line's one shared word is not typing it
            and not passage.wondering
            and not passage.quoted
            and _same_polarity(line, passage.text)
        ):
            return True
    return any(
        entry.line.negated == line.negated for entry, _t, _w in doc.near(line, DOCUMENT_SHARE)
    )


_CLAUSE = re.compile(r"[,;:\u2013\u2014]|\bbut\b|\bso\b", re.IGNORECASE)


def _same_polarity(line: Line, text: str) -> bool:
    """Whether ``text``'s clauses that say a word of ``line`` are negated when the line is: one
    negated clause among them makes them negated ("You may push to main directly, no pull request
    needed." says "You may push to main directly": its "no" belongs to a clause that says none of
    the line's words; "Run the tests as root, without the sandbox." says the line "- Run the tests
    as root, without the sandbox.", its clause "without the sandbox" saying the line's negation)."""
    clauses = map(content_words, _CLAUSE.split(text))
    return line.negated == any(words.negated for words in clauses if words.terms & line.terms)
