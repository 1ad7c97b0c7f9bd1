"""Which lines a rewrite removes without cause ("What a rewrite may remove" in docs/memory.md).
Pure.

A rewrite may drop or change a line of the document when the conversations touch it (they say it
is wrong, obsolete, or to forget it) or when the lines that take its place restate it (a
rewording, a new value of the same fact). A line replaced by lines about something else, that
nothing said touches, is removed without cause: a small model aiming ``@@ replace 1`` at the
wrong line does exactly that, and the project's first line is gone. So is a line of several
facts replaced by a line about one of them, when the others are said nowhere. Such a line stays
in the applied document; its removal waits for review with the rewrite's other doubtful lines
(``yak.memory.per_line``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from yak.memory.said import (
    Passage,
    _fold,
    _found_in,
    _squash,
    _token_key,
    _words,
    distinctive_tokens,
)

TOUCH_SHARE = 0.5  # of a line's content words, the share one passage must hold to touch it
RESTATE_SHARE = 0.5  # of a line's content words, the share the lines in its place must hold
# Of a line's content words, the share the words that ask to forget it must hold (when they name
# none of its tokens): higher than touching it, since nothing takes its place.
FORGET_SHARE = 0.75


@dataclass(frozen=True)
class _Said:
    """A text ready to be searched for a line's words and tokens."""

    terms: frozenset[str]
    folded: str
    squashed: str

    @classmethod
    def of(cls, text: str) -> _Said:
        folded = _fold(text)
        return cls(_words(text).terms, folded, _squash(folded))

    def holds_token(self, keys: Sequence[str]) -> bool:
        """Whether one of the token ``keys`` stands here."""
        return any(_found_in(key, self.folded, self.squashed) for key in keys)

    def holds_words(self, stems: Sequence[str], share: float) -> bool:
        """Whether ``share`` of ``stems`` (at least one) are here."""
        return bool(stems) and sum(stem in self.terms for stem in stems) >= share * len(stems)


class Removals:
    """Judges the lines a rewrite takes out against what was said; the passages are read once,
    at the first line asked about (most rewrites remove nothing)."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self._passages = passages
        self._said: list[_Said] | None = None

    def without_cause(
        self, line: str, replacements: Sequence[str], added: Sequence[str] = ()
    ) -> bool:
        """Whether removing ``line`` (a line of the previous document, not structure) has no
        cause. It has one when the lines the rewrite adds (``added``, anywhere: a line may be
        rewritten elsewhere; the ``replacements`` in its place at least) hold
        ``RESTATE_SHARE`` of its content words (a rewording, a new value of the same fact); or
        when a passage touches it (holds one of its distinctive tokens or ``TOUCH_SHARE`` of its
        content words) and, if lines take its place, every one of its tokens is said or carried
        into the added lines: a line of five facts replaced by a line about one of them loses
        the other four. A line with no content word or token is never judged (``False``)."""
        stems = _words(line).stems
        keys = [_token_key(token) for token in distinctive_tokens(line)]
        if not stems and not keys:
            return False
        instead = _Said.of("\n".join([*replacements, *added]))
        if instead.holds_words(stems, RESTATE_SHARE):
            return False
        if self._said is None:
            self._said = [_Said.of(passage.text) for passage in self._passages]
        said = self._said
        if not any(s.holds_token(keys) or s.holds_words(stems, TOUCH_SHARE) for s in said):
            return True
        if not any(text.strip() for text in replacements):
            return False  # a deletion the conversations touch ("forget that")
        return not all(any(s.holds_token((key,)) for s in [instead, *said]) for key in keys)


def names_line(quote: str, line: str) -> bool:
    """Whether ``quote`` (the words a model says ask to forget ``line``) asks for it: it names
    the line (one of its distinctive tokens, or ``FORGET_SHARE`` of its content words), or it
    touches the line (``TOUCH_SHARE`` of its words) and says to drop something ("forget",
    "no longer", "we dropped it", "that's wrong"). A line with no content word or token is
    named by nothing. A passage that only mentions the line's subject ("we added quality
    checks") does not forget it."""
    stems = _words(line).stems
    keys = [_token_key(token) for token in distinctive_tokens(line)]
    said = _Said.of(quote)
    if said.holds_token(keys) or (bool(stems) and said.holds_words(stems, FORGET_SHARE)):
        return True
    return bool(stems) and said.holds_words(stems, TOUCH_SHARE) and bool(_DROP.search(quote))


_DROP = re.compile(
    r"\b(?:forget|remove|delete|drop(?:ped)?|no longer|not any ?more|stop(?:ped)?|wrong|"
    r"outdated|obsolete|retired?|gone|moved (?:off|away)|replaced|instead|abandon(?:ed)?)\b",
    re.IGNORECASE,
)


def restated(line: str, lines: Sequence[str]) -> bool:
    """Whether ``lines`` restate ``line``: they hold ``RESTATE_SHARE`` of its content words (a
    rewording, a new value of the same fact). A line with no content word is restated by
    nothing."""
    stems = _words(line).stems
    return bool(stems) and _Said.of("\n".join(lines)).holds_words(stems, RESTATE_SHARE)


def new_value_of(line: str, fact: str) -> bool:
    """Whether ``fact`` is a new value of ``line``: each restates the other (:func:`restated`
    both ways: the same subject, not a longer line that mentions it), and the fact drops one of
    the line's distinctive tokens and brings one of its own ("- Python 3.12." and "- Python
    3.13."; "- Deploys go to Heroku." and "- Deploys go to Fly.io."). A line with no
    distinctive token has no value to replace."""
    old = {_token_key(token) for token in distinctive_tokens(line)}
    new = {_token_key(token) for token in distinctive_tokens(fact)}
    if not (old - new and new - old):
        return False
    return restated(line, [fact]) and restated(fact, [line])
