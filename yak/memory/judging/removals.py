"""Which lines a rewrite removes without cause ("What a rewrite may remove" in docs/memory.md).
Pure.

A rewrite may drop or change a line of the document when the conversations touch it (they say it
is wrong, obsolete, or to forget it) or when the lines that take its place restate it (a
rewording, a new value of the same fact). A line replaced by lines about something else, that
nothing said touches, is removed without cause: a small model aiming ``@@ replace 1`` at the
wrong line does exactly that, and the project's first line is gone. So is a line of several
facts replaced by a line about one of them, when the others are said nowhere. Such a line stays
in the applied document; its removal waits for review with the rewrite's other doubtful lines
(``yak.memory.judging.per_line``).

A conversation that states a supersession ("we switched from npm to pnpm", "we no longer use
Jest", "moved off CircleCI") founds the removal of a line naming what is gone
(:func:`supersessions`); a rewrite that keeps such a line beside the line that takes its place
has not carried it out (``yak.memory.judging.per_line``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from yak.memory.judging.said import Passage
from yak.memory.judging.words import (
    content_words,
    distinctive_tokens,
    found_in,
    squash,
    token_key,
)
from yak.memory.lines import STOPWORDS, fold

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
        folded = fold(text)
        return cls(content_words(text).terms, folded, squash(folded))

    def holds_token(self, keys: Sequence[str]) -> bool:
        """Whether one of the token ``keys`` stands here."""
        return any(found_in(key, self.folded, self.squashed) for key in keys)

    def holds_words(self, stems: Sequence[str], share: float) -> bool:
        """Whether ``share`` of ``stems`` (at least one) are here."""
        return bool(stems) and sum(stem in self.terms for stem in stems) >= share * len(stems)


class Removals:
    """Judges the lines a rewrite takes out against what was said; the passages are read once,
    at the first line asked about (most rewrites remove nothing)."""

    def __init__(
        self, passages: Sequence[Passage], *, stated: Sequence[Supersession] | None = None
    ) -> None:
        """``stated``: :func:`supersessions` of ``passages`` when the caller has read them
        already (read here at the first line asked about otherwise)."""
        self._passages = passages
        self._said: list[_Said] | None = None
        self._stated = None if stated is None else tuple(stated)

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
        the other four; or when the conversations state that what it names is gone
        (:func:`supersessions`: "we no longer use Jest" founds removing "- Tests run with
        Jest."). A line with no content word or token is never judged (``False``)."""
        stems = content_words(line).stems
        keys = [token_key(token) for token in distinctive_tokens(line)]
        if not stems and not keys:
            return False
        if self._stated is None:
            self._stated = supersessions(self._passages)
        if any(stated.outdates(line) for stated in self._stated):
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
    stems = content_words(line).stems
    keys = [token_key(token) for token in distinctive_tokens(line)]
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
    stems = content_words(line).stems
    return bool(stems) and _Said.of("\n".join(lines)).holds_words(stems, RESTATE_SHARE)


def new_value_of(line: str, fact: str) -> bool:
    """Whether ``fact`` is a new value of ``line``: each restates the other (:func:`restated`
    both ways: the same subject, not a longer line that mentions it), and the fact drops one of
    the line's distinctive tokens and brings one of its own ("- Python 3.12." and "- Python
    3.13."; "- Deploys go to Heroku." and "- Deploys go to Fly.io."). A line with no
    distinctive token has no value to replace."""
    old = {token_key(token) for token in distinctive_tokens(line)}
    new = {token_key(token) for token in distinctive_tokens(fact)}
    if not (old - new and new - old):
        return False
    return restated(line, [fact]) and restated(fact, [line])


# A value: a chunk holding a digit (3.12, 6432, 03:30, 1000, kafka:9093). Its anchors: the
# letters before its first digit ("kafka" in kafka:9093) and the three nearest words before it
# that are not one of _LINKS ("Python" for "Python 3.12"; "size", "goes", "up" for "size goes up
# to 1000").
_CHUNK_RE = re.compile(r"[\w.:/@+=-]+")
_LINKS = frozenset({"on", "at", "to", "of", "is", "are", "was", "be", "by", "the", "a", "an", "in"})
# Words that say a conversation changes a value ("moves to 03:30", "goes up to 1000", "now sits
# behind", "upgraded to", "no longer").
_CHANGE = re.compile(
    r"\b(?:now|from now on|moves?|moved|upgraded?|downgraded?|switch(?:ed)?|chang(?:e|ed|es)|"
    r"goes (?:up|down)|went (?:up|down)|bump(?:ed)?|rais(?:e|ed)|lower(?:ed)?|migrated?|"
    r"instead|no longer|any ?more|renamed?|replac(?:e|ed|es))\b",
    re.IGNORECASE,
)


def _anchored_values(line: str) -> dict[str, set[str]]:
    """``line``'s values by each of their anchors (case folded): ``{"python": {"3.11"}}``."""
    found: dict[str, set[str]] = {}
    words: list[str] = []
    for chunk in _CHUNK_RE.findall(line):
        chunk = chunk.strip(".,;:=-").casefold()
        if not any(c.isdigit() for c in chunk):
            if chunk and chunk not in _LINKS:
                words.append(chunk)
            continue
        prefix = re.match(r"[^\d]*", chunk)
        anchors = [*words[-3:], prefix.group().strip(":=/@") if prefix else ""]
        for anchor in filter(None, anchors):
            found.setdefault(anchor, set()).add(chunk)
    return found


_PORT = re.compile(r"\d{2,5}")


def moved_port(line: str, fact: str) -> tuple[str, str] | None:
    """``(old, new)`` when ``fact``, a new value of ``line``, moves the one port ``line`` names
    ("port 5432" to "port 6432"), else ``None``."""
    old, new = _anchored_values(line).get("port", set()), _anchored_values(fact).get("port", set())
    if len(old) != 1 or len(new) != 1 or old == new:
        return None
    before, after = next(iter(old)), next(iter(new))
    if not (_PORT.fullmatch(before) and _PORT.fullmatch(after)):
        return None
    return before, after


def with_port(line: str, old: str, new: str) -> str | None:
    """``line`` with the port ``old`` after a host (``localhost:5432``, ``kafka:9092``,
    ``https://updates.photon.dev:8443/feed``) changed to ``new``; ``None`` when it has none."""
    changed = re.sub(r"(?<=[\w\]]:)" + re.escape(old) + r"(?!\d)", new, line)
    return None if changed == line else changed


def says_change(text: str) -> bool:
    """Whether ``text`` says something changed ("now", "moves to", "upgraded", "no longer"…)."""
    return _CHANGE.search(text) is not None


# A value's clause: where one statement of a sentence ends ("at 02:00 UTC with a batch size of
# 500 rows" holds two).
_CLAUSE = re.compile(r"[;,()]|\s(?:with|and|but|after|before|while)\s", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z'-]*")


def _clause_values(text: str) -> list[tuple[str, frozenset[str]]]:
    """Each value of ``text`` (a chunk holding a digit) with the words of its clause (case
    folded, a plural's or possessive's ``s`` off, stopwords aside)."""
    found: list[tuple[str, frozenset[str]]] = []
    for clause in _CLAUSE.split(text):
        chunks = [c.strip(".,;:=-") for c in _CHUNK_RE.findall(clause)]
        values = [c for c in chunks if any(ch.isdigit() for ch in c)]
        words = frozenset(
            re.sub(r"(?:'s|s)$", "", w)
            for c in chunks
            if not any(ch.isdigit() for ch in c)
            for w in _WORD.findall(c.casefold())
            if w not in STOPWORDS and len(w) > 1
        )
        found += [(value, words) for value in values]
    return found


def value_moves(line: str, fact: str) -> list[tuple[str, str]]:
    """The values ``fact`` gives anew for ``line``'s: ``(old, new)`` for each value of
    ``line`` whose clause shares two words or more with the clause of exactly one other value
    of ``fact`` of the same shape ("The load runs nightly at 02:00 UTC" and "The nightly run
    moves to 03:30 UTC": ``("02:00", "03:30")``; "a batch size of 500 rows" and "Batch size goes
    up to 1000 rows"). One shared word is not enough: "The API listens on port 8080" is no
    old value of "PgBouncer on port 6432". Whether the conversation says a change is the
    caller's to check (:func:`says_change`)."""
    new = _clause_values(fact)
    moves: list[tuple[str, str]] = []
    for old_value, old_words in _clause_values(line):
        shape = _shape(old_value)
        candidates = {
            value
            for value, words in new
            if len(old_words & words) >= 2 and _shape(value) == shape and value != old_value
        }
        if len(candidates) == 1:
            moves.append((old_value, candidates.pop()))
    return moves


def _shape(value: str) -> str:
    return re.sub(r"\d+", "9", value)


def with_value(line: str, old: str, new: str) -> str:
    """``line`` with the value ``old`` (as a token of its own) changed to ``new``."""
    return re.sub(r"(?<![\w.])" + re.escape(old) + r"(?![\w]|\.\d)", new, line, count=1)


def _names(line: str) -> set[str]:
    """The capitalised words of ``line`` after its first (case folded), values aside."""
    chunks = [c.strip(".,;:=-") for c in _CHUNK_RE.findall(line)]
    return {
        c.casefold()
        for c in chunks[1:]
        if any(ch.isupper() for ch in c) and not any(ch.isdigit() for ch in c)
    }


def value_changed(line: str, fact: str, quote: str) -> bool:
    """Whether ``fact`` gives a new value of what ``line`` sets, said as a change: ``fact``
    restates ``line`` (:func:`restated`), both name a value after the same word ("Python
    3.11" and "Python 3.12"; "port 5432" and "port 6432"; "kafka:9092" and "kafka:9093")
    that differs, and ``quote`` (the words the fact was taken from) says something changed
    ("now", "moves to", "upgraded", "no longer"…), and ``fact`` keeps the names ``line``
    capitalises (not "- The admin UI now listens on port 9000." for "- The API listens on
    port 8080."). Wider than :func:`new_value_of`, which
    needs the two lines to restate each other: measured on Qwen2.5-Coder-1.5B, which wrote
    "- The project uses Python 3.12." for the line "- Python 3.11."."""
    if not _CHANGE.search(quote) or not restated(line, [fact]):
        return False
    if not _names(line) <= _names(fact) | {w.casefold() for w in _CHUNK_RE.findall(fact)}:
        return False  # "- The API listens on port 8080." is not "- The admin UI … port 9000."
    old, new = _anchored_values(line), _anchored_values(fact)
    return any(
        old[anchor] != new[anchor] and old[anchor] - new[anchor]
        for anchor in old.keys() & new.keys()
    )


@dataclass(frozen=True)
class Supersession:
    """What a conversation says is gone: ``old`` (a name as said: ``npm``, ``Jest``), and
    what took its place, ``new`` (``""`` when none was named: "we no longer use Jest")."""

    old: str
    new: str = ""

    def outdates(self, line: str) -> bool:
        """Whether ``line`` names what is gone and not what took its place (a line naming
        both, "- Moved from npm to pnpm in March.", records the change itself)."""
        return names_term(line, self.old) and not (self.new and names_term(line, self.new))


# A name as said: a word with the dots, pluses and dashes of tool names (Node.js, C++, pre-commit),
# optionally in backticks or quotes.
_TERM = r"[`'\"]?([A-Za-z0-9@][\w.+#@/-]*)[`'\"]?"
_THE = r"(?:(?:the|our|a|an|using)\s+)?"
# "switched from npm to pnpm", "moved CI from CircleCI to GitHub Actions", "migrated away from
# Poetry to uv"
_FROM_TO = re.compile(
    r"\b(?:switch|move|migrate|change|go|went|convert|port|transition)(?:e?d|ing|es|s)?\s+"
    r"(?:[\w.-]+\s+){0,3}?from\s+" + _THE + _TERM + r"\s+(?:over\s+)?to\s+" + _THE + _TERM,
    re.IGNORECASE,
)
# "replaced Jest with Vitest"; "Jest was replaced by Vitest"; "use pnpm instead of npm"
_REPLACED_WITH = re.compile(
    r"\breplac(?:e|ed|es|ing)\s+" + _THE + _TERM + r"\s+(?:with|by)\s+" + _THE + _TERM,
    re.IGNORECASE,
)
_WAS_REPLACED = re.compile(
    _TERM + r"\s+(?:was|is|has been|got|have been|were)\s+replaced\s+(?:with|by)\s+" + _THE + _TERM,
    re.IGNORECASE,
)
_INSTEAD_OF = re.compile(
    r"\b(?:use|uses|using|used|now)\s+" + _THE + _TERM + r"\s+instead\s+of\s+" + _THE + _TERM,
    re.IGNORECASE,
)
# "we no longer use Jest", "stopped using Poetry", "moved off CircleCI (to GitHub Actions)"
_NAME = _THE + _TERM
_GONE = re.compile(
    r"\b(?:no\s+longer\s+(?:use|uses|using|need|needs|run|runs|on)|(?:stop|stopped)\s+using|"
    r"(?:move|moved|moving)\s+(?:off|away\s+from)|got\s+rid\s+of|(?:are|is)\s+not\s+using)\s+"
    + _NAME
    + r"(?:\s+(?:anymore|any\s+more))?(?:\s*,?\s+(?:to|for)\s+"
    + _NAME
    + ")?",
    re.IGNORECASE,
)
# "Fly.io did not work out", "9092 is closed now", "3.11 is no longer supported", "8443 is gone"
_ENDED = re.compile(
    _TERM + r"\s+(?:(?:did\s+not|didn't|does\s+not|doesn't)\s+work\s+out|"
    r"(?:is|was|are|were|has\s+been)\s+(?:now\s+)?(?:closed|gone|retired|dropped|"
    r"no\s+longer\s+(?:supported|used|in\s+use)))",
    re.IGNORECASE,
)
# The words without which _ENDED cannot match (it starts at any word, so a long conversation is
# read by it only where one of them is).
_ENDED_WORDS = ("work", "closed", "gone", "retired", "dropped", "longer")
# "nothing connects to 5432 directly any more", "nobody uses Heroku"
_UNUSED = re.compile(
    r"\b(?:nothing|no\s+one|nobody)\s+(?:connects|talks|points|uses|runs)\s+(?:to\s+|on\s+)?"
    + _TERM,
    re.IGNORECASE,
)
_NAMELIKE = re.compile(r"[A-Z0-9]|\w\.\w")


def ended_names(text: str) -> list[str]:
    """The names or values ``text`` says have ended, with nothing named in their place:
    "Fly.io did not work out", "9092 is closed now", "3.11 is no longer supported", "nothing
    connects to 5432 any more" (only a name or a value: "the build is gone" names none)."""
    return _ended(text, unused=True)


def _ended(text: str, *, unused: bool) -> list[str]:
    matches = [*_ENDED.finditer(text), *(_UNUSED.finditer(text) if unused else ())]
    return [
        name for name in (_name(m.group(1)) for m in matches) if name and _NAMELIKE.search(name)
    ]


# Words that stand for a name said before, not a name: "we no longer use it".
# fmt: off
_NOT_A_NAME = frozenset((
    "it", "that", "this", "them", "those", "these", "one", "any", "anything", "something", "to",
    "from", "with", "by", "and", "or", "now",
))
# fmt: on


def supersessions(passages: Sequence[Passage]) -> tuple[Supersession, ...]:
    """The supersessions the conversations state, in the words of a decided passage (never a
    question or a conditional, nor a pasted text): "we switched from npm to pnpm",
    "replaced Jest with Vitest", "use pnpm instead of npm", "we no longer use Jest", "moved
    off CircleCI to GitHub Actions", "Fly.io did not work out", "9092 is closed now", "3.11 is
    no longer supported". A passage that only mentions a name states none. Pure;
    deterministic."""
    found: dict[Supersession, None] = {}
    for passage in passages:
        if passage.wondering or passage.quoted:
            continue
        text = passage.text
        pairs = [(m.group(1), m.group(2)) for m in _FROM_TO.finditer(text)]
        pairs += [(m.group(1), m.group(2)) for m in _REPLACED_WITH.finditer(text)]
        folded = text.casefold()
        if "replaced" in folded:  # the pattern starts at any word: read only where it can match
            pairs += [(m.group(1), m.group(2)) for m in _WAS_REPLACED.finditer(text)]
        pairs += [(m.group(2), m.group(1)) for m in _INSTEAD_OF.finditer(text)]
        pairs += [(m.group(1), m.group(2) or "") for m in _GONE.finditer(text)]
        # "nothing connects to 5432" is no supersession here: a line holding the port among
        # other facts would lose them all (the 0.5B model's "@@ replace 1")
        if any(word in folded for word in _ENDED_WORDS):
            pairs += [(name, "") for name in _ended(text, unused=False)]
        for old, new in pairs:
            old, new = _name(old), _name(new)
            if old and old.casefold() != new.casefold():
                found[Supersession(old, new)] = None
    return tuple(found)


def _name(term: str) -> str:
    """A captured name without the punctuation that ends its sentence; ``""`` when it is a
    word that stands for a name (``it``) or too short to be one."""
    name = term.rstrip(".,;:!?/-")
    return "" if len(name) < 2 or name.casefold() in _NOT_A_NAME else name


def names_term(line: str, term: str) -> bool:
    """Whether ``line`` names ``term`` as a word of its own, case aside: ``npm`` is named by
    "- Install with npm ci." but not by "- Install with pnpm.", nor by ``npm-run-all``."""
    pattern = r"(?<![\w.@/-])" + re.escape(term) + r"(?![\w@-])(?!\.\w)"
    return re.search(pattern, line, re.IGNORECASE) is not None
