"""Lines and passages made ready to compare, and indexed by content word (for
:mod:`yak.memory.judging.grounding`). Pure.

A :class:`Line` holds a text's distinctive tokens, content words and folded forms; an
:class:`Index` holds many, so a line is compared only with the texts that share a term or a
token with it: a check costs about the passages that share a word with the line, not the whole
transcript.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from heapq import nlargest

from yak.memory.judging.kinds import BULLET, LABEL
from yak.memory.judging.said import Passage
from yak.memory.judging.words import (
    NAME_STEM,
    TOKEN_EDGES,
    Words,
    content_words,
    distinctive_tokens,
    matched_words,
    squash,
    stands_at,
    token_key,
    word_stem,
)
from yak.memory.lines import fold

TOKEN_WEIGHT = 3  # a distinctive token counts as this many content words


@dataclass(frozen=True)
class Line:
    """A line or a passage ready to compare (:func:`compared_line`)."""

    text: str
    tokens: tuple[str, ...]
    keys: tuple[str, ...]  # the tokens case folded, for matching
    words: Words
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
        """Every content term to look up (:attr:`Words.terms`)."""
        return self.words.terms


def compared_line(text: str, *, tokens_too: bool = True) -> Line:
    """A line (or a passage: ``tokens_too=False``, its tokens are never looked up) ready to
    compare."""
    folded = fold(text)
    words = content_words(text)
    if not tokens_too:
        return Line(text, (), (), words, frozenset(), words.negated, folded, "")
    tokens = tuple(distinctive_tokens(text))
    body = BULLET.sub("", text).strip()
    label = LABEL.match(body)
    value: frozenset[str] = frozenset()
    if label and len(label.group(1).split()) <= 4:
        value = frozenset(content_words(label.group(2)).stems)
    return Line(
        text=text,
        tokens=tokens,
        keys=tuple(token_key(token) for token in tokens),
        words=words,
        value=value,
        negated=words.negated,
        folded=folded,
        squashed=squash(folded),
    )


# Read once: a rewrite changes few of a document's lines, and their tokens cost the most to read.
document_line = lru_cache(maxsize=4096)(compared_line)


@dataclass
class Entry:
    """One indexed text: a passage, or a document's or the candidate's line (``number``)."""

    passage: Passage
    order: int
    line: Line
    number: int = 0


@dataclass
class Index:
    """Texts indexed by content term, and their folded texts joined, so a line is compared
    only with the texts that share a term or a token with it."""

    entries: list[Entry] = field(default_factory=list)
    by_term: defaultdict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    _parts: list[str] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list)
    _length: int = 0
    _joined: str | None = None
    _hits: dict[str, frozenset[int]] = field(default_factory=dict)

    def add(self, passage: Passage, line: Line, *, number: int = 0) -> None:
        order = len(self.entries)
        self.entries.append(Entry(passage, order, line, number))
        for term in line.terms:
            self.by_term[term].append(order)
        self._parts.append(line.folded)
        self._starts.append(self._length)
        self._length += len(line.folded) + 1
        self._joined = None
        self._hits.clear()

    def hits(self, key: str) -> frozenset[int]:
        """The entries where the token ``key`` stands (see :func:`found_in`)."""
        found = self._hits.get(key)
        if found is not None:
            return found
        if self._joined is None:
            self._joined = "\n".join(self._parts)
        joined, numbers = self._joined, set()
        at = stands_at(key, joined, 0)
        while at >= 0:
            number = bisect_right(self._starts, at) - 1
            numbers.add(number)
            if number + 1 == len(self._starts):
                break
            at = stands_at(key, joined, self._starts[number + 1])
        if key.isalnum():  # a compound said in two words: xcodebuild ~ Xcode build
            numbers.update(self.by_term.get(word_stem(key), ()))
        if key.isalpha():  # a name said shorter: PostgreSQL ~ Postgres
            for end in range(NAME_STEM, len(key) - 1):
                numbers.update(self.by_term.get(word_stem(key[:end]), ()))
        elif " " in key:
            pieces = [piece.strip(TOKEN_EDGES) for piece in key.split()]
            every = [self.hits(piece) for piece in pieces if piece]
            if every:
                numbers.update(frozenset.intersection(*every))
        found = frozenset(numbers)
        self._hits[key] = found
        return found

    def near(
        self, line: Line, share: float, *, limit: int | None = None
    ) -> list[tuple[Entry, set[str], set[str]]]:
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
        near: list[tuple[Entry, set[str], set[str]]] = []
        items = bound.items() if limit is None else nlargest(limit, bound.items(), key=_by_bound)
        for number, weight in items:
            if weight < need:
                continue
            entry = self.entries[number]
            tokens = {key for key, found in hits.items() if number in found}
            words = matched_words(line.words, entry.line.terms)
            if TOKEN_WEIGHT * len(tokens) + len(words) >= need:
                near.append((entry, tokens, words))
        return near


def _by_bound(item: tuple[int, int]) -> tuple[int, int]:
    return item[1], -item[0]  # (entry number, weight): the heaviest, then the earliest


def index_passages(texts: Sequence[Passage]) -> Index:
    """``texts`` indexed by content term, in order (their tokens are never looked up)."""
    index = Index()
    for passage in texts:
        index.add(passage, compared_line(passage.text, tokens_too=False))
    return index
