"""Grounding: which passage of the folded conversations backs each line a rewrite adds, and
why a line may not be applied without review ("Evidence" and "What a rewrite may add" in
docs/memory.md, where "Grounding" describes these rules). Pure functions: no I/O. What was said
(passages, tokens, words, instructions) is cut and compared in :mod:`yak.memory.judging.said`.

- :func:`check_lines` scores every passage against every new line (distinctive tokens weigh
  most, then content words with light stemming and compound words) and says, per line, which
  passage backs it and, when the line must wait for review, why (a :class:`yak.held.HeldLine`).
- :func:`is_structure` names the lines never checked (blank lines, headings, section titles).

The passages are indexed once per call (content word → passages), so a check costs about the
passages that share a word with the line, not the whole transcript.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from heapq import nlargest

from yak.evidence import EVIDENCE_QUOTE_CHARS, Evidence, Speaker
from yak.held import HeldKind, HeldLine, held_line_words
from yak.memory.judging.said import (
    _BULLET,
    _COMMON_CAPS,
    _LABEL,
    _NAME_STEM,
    _STRIP,
    Passage,
    _fold,
    _found_in,
    _matched_words,
    _squash,
    _stands_at,
    _stem,
    _token_key,
    _Words,
    _words,
    distinctive_tokens,
    is_instruction,
    unmarked,
)

SUPPORT_SHARE = 0.5  # of a line's weighted words, the share a passage must hold to back it
SHORT_LINE = 3  # a line of at most this many words (no token) is backed by one of them
SHORT_SHARE = 1 / 3
DOCUMENT_SHARE = 0.8  # of a line's weighted words, the share of a rewording of the document
_DOCUMENT_CANDIDATES = 6  # document lines compared in full with a line (the most alike)
DUPLICATE_SHARE = 0.8  # of a new line's content words, the share found in a line it restates
TOKEN_WEIGHT = 3  # a distinctive token counts as this many content words

# The reasons as a line's status shows them (``yak.held`` words them).
NOTHING_SAYS = held_line_words(HeldLine("", HeldKind.NOTHING_SAYS), line_shown=True)
ONLY_ASKED = held_line_words(HeldLine("", HeldKind.ONLY_ASKED), line_shown=True)
NOT_TYPED = held_line_words(HeldLine("", HeldKind.NOT_TYPED), line_shown=True)

# Which speaker's backing passage is the evidence (the person first; a tool call is an
# observation, above the assistant's talk when the line names a command or a path, below it
# otherwise).
_RANK = {Speaker.USER: 4, Speaker.ASSISTANT: 2}
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


# --- lines and the index --------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    text: str
    tokens: tuple[str, ...]
    keys: tuple[str, ...]  # the tokens case folded, for matching
    words: _Words
    value: frozenset[str]  # stems of a "label: value" line's value (empty: not that shape)
    negated: bool
    folded: str
    squashed: str  # "" for a passage (never compared squashed)

    @property
    def total(self) -> int:
        """The line's weight: ``TOKEN_WEIGHT`` per distinctive token, 1 per content word."""
        return TOKEN_WEIGHT * len(self.keys) + len(self.words.stems)

    @property
    def terms(self) -> frozenset[str]:
        return self.words.terms


def _line(text: str, *, tokens_too: bool = True) -> _Line:
    """A line (or a passage: ``tokens_too=False``, its tokens are never looked up) ready to
    compare."""
    folded = _fold(text)
    words = _words(text)
    if not tokens_too:
        return _Line(text, (), (), words, frozenset(), words.negated, folded, "")
    tokens = tuple(distinctive_tokens(text))
    body = _BULLET.sub("", text).strip()
    label = _LABEL.match(body)
    value: frozenset[str] = frozenset()
    if label and len(label.group(1).split()) <= 4:
        value = frozenset(_words(label.group(2)).stems)
    return _Line(
        text=text,
        tokens=tokens,
        keys=tuple(_token_key(token) for token in tokens),
        words=words,
        value=value,
        negated=words.negated,
        folded=folded,
        squashed=_squash(folded),
    )


# Read once: a rewrite changes few of a document's lines, and their tokens cost the most to read.
_document_line = lru_cache(maxsize=4096)(_line)


@dataclass
class _Entry:
    """One indexed text: a passage, or a document's or the candidate's line (``number``)."""

    passage: Passage
    order: int
    line: _Line
    number: int = 0


@dataclass
class _Index:
    """Texts indexed by content term, and their folded texts joined, so a line is compared
    only with the texts that share a term or a token with it."""

    entries: list[_Entry] = field(default_factory=list)
    by_term: defaultdict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    _parts: list[str] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list)
    _length: int = 0
    _joined: str | None = None
    _hits: dict[str, frozenset[int]] = field(default_factory=dict)

    def add(self, passage: Passage, line: _Line, *, number: int = 0) -> None:
        order = len(self.entries)
        self.entries.append(_Entry(passage, order, line, number))
        for term in line.terms:
            self.by_term[term].append(order)
        self._parts.append(line.folded)
        self._starts.append(self._length)
        self._length += len(line.folded) + 1
        self._joined = None
        self._hits.clear()

    def hits(self, key: str) -> frozenset[int]:
        """The entries where the token ``key`` stands (see :func:`_found_in`)."""
        found = self._hits.get(key)
        if found is not None:
            return found
        if self._joined is None:
            self._joined = "\n".join(self._parts)
        joined, numbers = self._joined, set()
        at = _stands_at(key, joined, 0)
        while at >= 0:
            number = bisect_right(self._starts, at) - 1
            numbers.add(number)
            if number + 1 == len(self._starts):
                break
            at = _stands_at(key, joined, self._starts[number + 1])
        if key.isalnum():  # a compound said in two words: xcodebuild ~ Xcode build
            numbers.update(self.by_term.get(_stem(key), ()))
        if key.isalpha():  # a name said shorter: PostgreSQL ~ Postgres
            for end in range(_NAME_STEM, len(key) - 1):
                numbers.update(self.by_term.get(_stem(key[:end]), ()))
        elif " " in key:
            pieces = [piece.strip(_STRIP) for piece in key.split()]
            every = [self.hits(piece) for piece in pieces if piece]
            if every:
                numbers.update(frozenset.intersection(*every))
        found = frozenset(numbers)
        self._hits[key] = found
        return found

    def near(
        self, line: _Line, share: float, *, limit: int | None = None
    ) -> list[tuple[_Entry, set[str], set[str]]]:
        """The entries that hold ``share`` of ``line``'s weight, with the tokens and the words
        of ``line`` each holds; with ``limit``, only among that many entries that may hold
        the most (an entry's shared terms bound what it holds)."""
        total = line.total
        if not total:
            return []
        bound: Counter[int] = Counter()
        for stem in line.words.stems:
            bound.update(self.by_term.get(stem, ()))
        for _a, _b, joined in line.words.pairs:
            for number in self.by_term.get(joined, ()):
                bound[number] += 2
        hits = {key: self.hits(key) for key in line.keys}
        for found in hits.values():
            for number in found:
                bound[number] += TOKEN_WEIGHT
        need = share * total - 1e-9
        near: list[tuple[_Entry, set[str], set[str]]] = []
        items = bound.items() if limit is None else nlargest(limit, bound.items(), key=_by_bound)
        for number, weight in items:
            if weight < need:
                continue
            entry = self.entries[number]
            tokens = {key for key, found in hits.items() if number in found}
            words = _matched_words(line.words, entry.line.terms)
            if TOKEN_WEIGHT * len(tokens) + len(words) >= need:
                near.append((entry, tokens, words))
        return near


def _by_bound(item: tuple[int, int]) -> tuple[int, int]:
    return item[1], -item[0]  # (entry number, weight): the heaviest, then the earliest


def _index(texts: Sequence[Passage]) -> _Index:
    index = _Index()
    for passage in texts:
        index.add(passage, _line(passage.text, tokens_too=False))
    return index


# --- scores and evidence --------------------------------------------------------------------


@dataclass(frozen=True)
class _Score:
    share: float
    entry: _Entry
    anchor: str


def _scores(line: _Line, index: _Index) -> list[_Score]:
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


def _rank(score: _Score, line: _Line) -> tuple[bool, int, float, int]:
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
        quote=_quote(passage, score.anchor),
    )


# --- duplicates -----------------------------------------------------------------------------


def _restates(new: _Line, other: _Line) -> float:
    """How closely ``new`` restates ``other`` (0: it does not): 1 when it is ``other`` word
    for word, list markers aside (``- - pytest.`` is ``- pytest.``); the share of its content
    words found in ``other`` (compounds counted), when it has at least two, or 1 when both
    carry the same distinctive tokens and share at least half the words; never across
    polarity, nor when ``new`` names a token ``other`` does not."""
    if new.negated != other.negated:
        return 0.0
    if unmarked(new.folded) == unmarked(other.folded):  # word for word, however short
        return 1.0
    if any(not _found_in(key, other.folded, other.squashed) for key in new.keys):
        return 0.0
    stems = new.words.stems
    matched = _matched_words(new.words, other.terms) if stems else set()
    share = len(matched) / len(stems) if stems else 0.0
    if len(stems) >= 2 and share >= DUPLICATE_SHARE:
        return share
    if new.keys and set(new.keys) == set(other.keys) and share >= 0.5:
        return 1.0
    return 0.0


def _duplicate_of(line: _Line, earlier: _Index) -> int | None:
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


_TITLE_WORDS = 4  # the most words of a section title written without "#"


def is_structure(line: str) -> bool:
    """Whether ``line`` is structure, never checked for support: a blank line, a line of no
    letter or digit (``---``), a Markdown heading (``## Decisions``), or a section title
    without ``#`` (a section is a block of lines between blank lines, its first line the
    title: docs/memory.md, "Placement"): at most ``_TITLE_WORDS`` words, all letters, no
    bullet, no name in capitals (``GKE``), not an instruction, every word capitalised or the
    line ending with a colon (``Open Questions``, ``Build:``)."""
    stripped = line.strip()
    if not any(ch.isalnum() for ch in stripped) or re.match(r"#{1,6}(?:\s|$)", stripped):
        return True  # blank, a rule (---), a heading
    words = stripped.rstrip(":").split()
    if len(words) > _TITLE_WORDS or stripped[0] in "-*+>|`" or stripped[-1] in ".!?;,":
        return False
    if not all(word.replace("-", "").replace("&", "").isalpha() for word in words):
        return False
    if any(word.isupper() and word.lower() not in _COMMON_CAPS for word in words):
        return False  # a name like GKE: a fact, not a title
    titled = stripped.endswith(":") or all(word[:1].isupper() for word in words)
    return titled and not is_instruction(stripped)


_REDACTED = re.compile(r"\[REDACTED:[^\]\n]*\]")
_FILLER_EDGES = " \t-*+•>.:;,!()[]`'\"_"
_NOTHING = re.compile(
    r"(?:none|nothing|n/?a|tbd|tba)(?:\s+(?:yet|so far|noted|recorded|known|listed|to note|"
    r"to report|for now|at the moment|at present|currently))*",
    re.IGNORECASE,
)


def says_nothing(line: str) -> bool:
    """Whether ``line`` holds nothing to remember: besides ``[REDACTED:…]`` markers, list
    markers and punctuation it has no content word, or only a label before them (``- [REDACTED:
    aws-key]``, ``- API key: [REDACTED:api-key]``: the secret is gone, and what is left tells
    the agent nothing); or it is filler saying there is nothing (``None noted so far.``,
    ``- None yet.``, ``- N/A``, ``TBD``). A refresh does not add such a line ("What a rewrite
    may add" in docs/memory.md); a line with anything more (``Tests: none yet``, ``API key: in
    1Password``) is checked like any other."""
    body = _REDACTED.sub(" ", line)
    if body == line:
        return _NOTHING.fullmatch(line.strip(_FILLER_EDGES)) is not None
    body = _BULLET.sub("", body).strip(" \t.;,")
    label = _LABEL.match(body)
    if label and len(label.group(1).split()) <= _TITLE_WORDS:
        body = label.group(2)  # what the label says, markers aside
    elif body.endswith(":") and len(body.split()) <= _TITLE_WORDS:
        return True  # a label whose value was only the secret
    return not _words(body).stems


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
    3. Unsupported: a distinctive token (:func:`distinctive_tokens`) found neither in a
       passage nor in ``document`` (``'~/vaults/Dev' was not said in the conversations``; a
       URL, ``KEY=value`` or ``host:port`` also counts when each of its parts was said); or
       nothing backs it (``nothing in the conversations says this``). A passage backs a line
       when it holds ``SUPPORT_SHARE`` of the line's weight (``TOKEN_WEIGHT`` per token, 1
       per content word: stopwords dropped, light stemming, compounds like "Xcode build" ~
       ``xcodebuild``); the document backs it when one or two of its lines hold
       ``DOCUMENT_SHARE`` of it, or when they do together with one decided passage (a value
       the conversation changed, carried into a line that repeats it).
    4. Wondered: only questions, conditionals or hedges back it (``only asked about, not
       decided``).
    5. Instruction (:func:`is_instruction`): no passage of the person backs it that is
       decided, not quoted (:attr:`Passage.quoted`) and of the same polarity, nor does a
       document line it rewords with the same polarity (``an instruction no one typed``).

    The evidence is the backing passage that ranks first: decided before wondering, then by
    speaker (the person; a tool call for a line with tokens; the assistant; a tool call for a
    line without), then by share, ties to the latest said.

    Args:
        new_lines: the lines the rewrite adds or changes, in order.
        document: the previous document (its tokens count as said).
        kept: ``{1-based line number in the candidate: text}`` of the previous document's
            lines still in the candidate; the new lines take the numbers ``kept`` leaves free,
            in order, so a duplicate of an earlier new line names its number too.
        passages: what was said (:func:`passages`), oldest first.

    Returns:
        One :class:`LineCheck` per line of ``new_lines``, in order.
    """
    said = _index(passages)
    doc = _Index()
    for text in document.splitlines():
        if not is_structure(text):
            doc.add(_DOCUMENT, _document_line(text))
    earlier = _Index()
    for number, text in sorted(kept.items()):
        if not is_structure(text):
            earlier.add(_DOCUMENT, _document_line(text), number=number)
    checks: list[LineCheck] = []
    for number, text in zip(_new_line_numbers(len(new_lines), kept), new_lines, strict=True):
        if is_structure(text):
            checks.append(LineCheck(text, None, None))
            continue
        line = _line(text)
        checks.append(_check(line, earlier, said, doc))
        earlier.add(_DOCUMENT, line, number=number)
    return checks


def _check(line: _Line, earlier: _Index, said: _Index, doc: _Index) -> LineCheck:
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

    # Decided: a decided passage backs it as well as any question does (not a weak echo).
    asked = max((sc.share for sc in scores if sc.entry.passage.wondering), default=0.0)
    decided = any(not sc.entry.passage.wondering and sc.share >= asked for sc in scores)
    if not decided:
        tokens, words = _document_match(line, doc)
        weight = TOKEN_WEIGHT * len(tokens) + len(words)
        reworded = line.total > 0 and weight >= DOCUMENT_SHARE * line.total
        carried = None if reworded else _carried(line, said, words)
        if not reworded and carried is None:
            kind = HeldKind.ONLY_ASKED if scores else HeldKind.NOTHING_SAYS
            return LineCheck(line.text, evidence, HeldLine(line.text, kind))
        if carried is not None:
            evidence = _evidence(line.text, carried)

    if is_instruction(line.text) and not _typed(line, scores, doc):
        return LineCheck(line.text, evidence, HeldLine(line.text, HeldKind.NOT_TYPED))
    return LineCheck(line.text, evidence, None)


_PIECES = re.compile(r"[=:/@?&#]+")


def _pieces(key: str) -> list[str]:
    """The parts of a URL, a ``KEY=value``, a ``host:port`` or an address (``[]`` for any
    other token): each must be said for the whole to count as said."""
    if "=" not in key and ":" not in key and "@" not in key:
        return []
    return [piece for piece in _PIECES.split(key) if len(piece) >= 2]


_WITH_UNIT = re.compile(r"(\d+)[a-z%]+")


def _said(key: str, said: _Index, doc: _Index) -> bool:
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


def _carried(line: _Line, said: _Index, from_document: set[str]) -> _Score | None:
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


def _document_match(line: _Line, doc: _Index) -> tuple[set[str], set[str]]:
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


def _typed(line: _Line, scores: Sequence[_Score], doc: _Index) -> bool:
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


def _same_polarity(line: _Line, text: str) -> bool:
    """Whether ``text``'s clauses that say a word of ``line`` are negated when the line is: one
    negated clause among them makes them negated ("You may push to main directly, no pull request
    needed." says "You may push to main directly": its "no" belongs to a clause that says none of
    the line's words; "Run the tests as root, without the sandbox." says the line "- Run the tests
    as root, without the sandbox.", its clause "without the sandbox" saying the line's negation)."""
    return line.negated == any(
        words.negated for words in map(_words, _CLAUSE.split(text)) if words.terms & line.terms
    )
