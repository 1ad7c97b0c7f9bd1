"""The words and tokens a memory line is compared by ("Grounding" in docs/memory.md). Pure.

- :func:`distinctive_tokens` finds what a line cannot have made up: paths, URLs, identifiers,
  flags, backticked spans, versions, numbers, e-mail addresses, names.
- :func:`content_words` gives a text's content words (stopwords dropped, lightly stemmed,
  compounds joined) and whether it is negated; :func:`matched_words` compares them.
- :func:`found_in` and :func:`stands_at` say where a token stands in a text (not inside a
  longer word).
- :func:`details` gives the details a sentence names, :func:`split_sentences` its sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from yak.memory.lines import LIST_MARKER, STOPWORDS, fold

NAME_STEM = 5  # letters of a name that must match when it is said shorter or longer

# --- tokens ---------------------------------------------------------------------------------

_TICKED = re.compile(r"`([^`\n]+)`")
_CHUNK = re.compile(r"\S+")
_URL = re.compile(r"(?:https?|ftp|file|ssh|git)://|www\.", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_FLAG = re.compile(r"--?[A-Za-z][\w-]*(?:=\S*)?")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+[a-z0-9]*")
_NUMBER = re.compile(r"(\d{2,})[A-Za-z%]{0,3}")
_HOST_PORT = re.compile(r"[A-Za-z][\w.-]*:\d{2,5}")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z][a-z0-9]+[A-Z]|[A-Z][A-Z0-9]*\d")
_BULLET_ONLY = re.compile(rf"\s*(?:{LIST_MARKER})?\s*")
_LEAD_STRIP = "\"'`“”‘’([{<*"  # a leading dot, tilde, slash or dash belongs to the token
TOKEN_EDGES = "\"'`“”‘’()[]{}<>,.;:!?*"  # stripped from a token's (or a word's) ends
_SENTENCE_STARTERS = frozenset(".!?:;-*#>•|\"'“‘`_=")
# Everyday abbreviations: words, not names a line could have made up.
# fmt: off
COMMON_CAPS = frozenset((
    "api", "ci", "cd", "ui", "ux", "url", "urls", "http", "https", "json", "yaml", "toml",
    "csv", "sql", "cli", "os", "pr", "prs", "id", "ids", "ide", "cpu", "gpu", "ram", "ai",
    "llm", "ok", "todo", "note", "fixme", "faq", "readme", "html", "css", "ssh", "tls", "ssl",
    "dns", "io", "utc"
))
# fmt: on


def _is_sentence_start(line: str, start: int) -> bool:
    before = line[:start].rstrip()
    if not before or before[-1] in _SENTENCE_STARTERS:
        return True
    return bool(_BULLET_ONLY.fullmatch(before))


def _is_path(token: str) -> bool:
    if token.startswith(("/", "~", "./", "../")) or (len(token) > 2 and token[1:3] == ":\\"):
        return len(token) > 1
    if token.startswith(".") and len(token) > 1 and token[1].isalpha():
        return True  # a dotfile: .env, .aws
    if "/" not in token:
        return False
    # read/write, and/or, 24/7 are words; src/app.py, docs/, a/b/c are paths
    parts = [part for part in token.split("/") if part]
    return token.endswith("/") or len(parts) > 2 or any("." in part.strip(".") for part in parts)


def _chunk_token(chunk: str, line: str, start: int) -> str | None:
    """The distinctive token one whitespace-separated chunk of ``line`` is, or ``None``."""
    token = chunk.lstrip(_LEAD_STRIP).rstrip(TOKEN_EDGES)
    if len(token) < 2 or (token.isalpha() and token.islower()):
        return None
    if _URL.match(token):
        return token
    if "@" in token and _EMAIL.fullmatch(token):
        return token
    if _is_path(token):
        return token
    if token[0] == "-":
        return token if _FLAG.fullmatch(token) else None
    if token[0].isdigit() or (token[0] == "v" and token[1:2].isdigit()):
        if _VERSION.fullmatch(token):
            return token
        number = _NUMBER.fullmatch(token)  # 8080, 512MB, 30s, 90%, 10k; not 24/7
        return number.group() if number else None  # with its unit: 10k is not 10
    if _HOST_PORT.fullmatch(token):
        return token
    core = token[:-2] if token.endswith(("'s", "’s")) else token
    if not core.replace("_", "").replace(".", "").replace("-", "").isalnum():
        return None
    mixed = any(ch.isdigit() for ch in core) and any(ch.isalpha() for ch in core)
    if "_" in core or _CAMEL.search(core) or mixed:
        return core  # snake_case, camelCase, PostgreSQL, letters with digits (us-east4, py311)
    if "." in core:
        parts = core.split(".")
        return core if any(len(part) > 1 for part in parts) and all(parts) else None
    if core.isupper():
        return None if core.lower() in COMMON_CAPS or not core.isalpha() else core
    if core[0].isupper() and core[1:].replace("-", "").isalpha():
        return None if _is_sentence_start(line, start + chunk.find(core[0])) else core
    return None


def distinctive_tokens(line: str) -> list[str]:
    """The tokens of ``line`` it could not have made up, in order, each once (compared case
    folded, returned as written with surrounding punctuation, quotes and backticks removed).

    Paths (``src/app.py``, ``~/vaults/Dev``, ``./x``, ``/etc/hosts``, ``docs/``, ``.env``),
    URLs, e-mail addresses, backticked spans (whole), ``--flags`` and ``-q``, versions
    (``3.11``, ``v2.4.1``), dotted names (``app.py``, ``yak.memory``), ``snake_case``,
    ``camelCase``, ``PostgreSQL``, ``ALL_CAPS`` (not everyday abbreviations like API or CI),
    numbers of two digits or more (``8080``) with their unit (``10k``, ``512MB``, ``30s``:
    the number alone, ``10``, is another value), and names: capitalised words not at the start
    of a sentence, a bullet or a label's value. Not ordinary words, capitalised or not.
    """
    found: list[tuple[int, str]] = []
    masked = line
    for match in _TICKED.finditer(line):
        span = match.group(1).strip()
        if span:
            found.append((match.start(), span))
        masked = masked[: match.start()] + " " * len(match.group()) + masked[match.end() :]
    for match in _CHUNK.finditer(masked):
        token = _chunk_token(match.group(), masked, match.start())
        if token is not None:
            found.append((match.start(), token))
    found.sort(key=lambda item: item[0])
    tokens: list[str] = []
    seen: set[str] = set()
    for _start, token in found:
        key = token.casefold()
        if key not in seen:
            seen.add(key)
            tokens.append(token)
    return tokens


_WORD = re.compile(r"[^\W_]+")  # letters and digits, of any script
# fmt: off
_NEGATORS = frozenset((
    "not", "never", "no", "without", "cannot", "nothing", "none", "nobody", "neither", "nor",
    "dont", "doesnt", "didnt", "cant", "wont", "shouldnt", "mustnt", "isnt", "arent", "wasnt",
    "werent"
))
# fmt: on


@lru_cache(maxsize=65536)
def word_stem(word: str) -> str:
    """``word`` (lower case) lightly stemmed: a plural, ``-ing``, ``-ed`` and a final ``e``
    taken off, a doubled last letter made single (``running`` → ``run``, ``tests`` →
    ``test``); a number stays whole."""
    if word.isdigit():
        return word
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    else:
        for suffix, keep in (("ing", 3), ("ed", 2), ("es", 2), ("s", 3)):
            if word.endswith(suffix) and len(word) - len(suffix) >= keep:
                if suffix == "s" and word.endswith(("ss", "us", "is")):
                    break
                word = word[: -len(suffix)]
                break
    if len(word) >= 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    return word


@dataclass(frozen=True)
class Words:
    """A text's content words: stems in order (each once), adjacent pairs whose concatenation
    is a word elsewhere (``xcode build`` ~ ``xcodebuild``), and every term to look up."""

    stems: tuple[str, ...]
    pairs: tuple[tuple[str, str, str], ...]  # (stem a, stem b, stem of a+b)
    terms: frozenset[str]
    negated: bool  # a negation among all its words: not, never, no, don't…


def content_words(text: str) -> Words:
    """The content words of ``text``: stopwords and one-letter words dropped, each stemmed
    (:func:`word_stem`), pairs of adjacent words joined, and whether a negation (not, never,
    no, don't…) is among all its words."""
    stems: dict[str, None] = {}
    pairs: list[tuple[str, str, str]] = []
    previous = previous_stem = ""  # the last word, when a letters-only content word
    negated = False
    last = ""  # the last word, whatever it was
    for word in _WORD.findall(text.lower()):
        if word in _NEGATORS or (word == "t" and last.endswith("n")):
            negated = True  # not, never, no…, and don't, can't, isn't (split at the quote)
        last = word
        if word in STOPWORDS or len(word) < 2:
            previous = ""
            continue
        stem = word_stem(word)
        stems[stem] = None
        if word.isalpha():
            if previous:
                pairs.append((previous_stem, stem, word_stem(previous + word)))
            previous, previous_stem = word, stem
        else:
            previous = ""
    terms = frozenset(stems).union([joined for _a, _b, joined in pairs])
    return Words(tuple(stems), tuple(pairs), terms, negated)


def matched_words(line: Words, terms: frozenset[str]) -> set[str]:
    """The stems of ``line`` found in ``terms`` (another text's :attr:`Words.terms`); a pair
    whose joined stem is there counts both its words."""
    matched = {stem for stem in line.stems if stem in terms}
    for a, b, joined in line.pairs:
        if joined in terms:
            matched.update((a, b))
    return matched


# --- where a token was said -----------------------------------------------------------------


@lru_cache(maxsize=4096)
def _standing(key: str) -> re.Pattern[str]:
    """Where the case-folded token ``key`` stands: not inside a longer word (a plural, past
    or possessive ending allowed after a word; a name of five letters or more may run on by
    three, so Postgres stands in PostgreSQL)."""
    before = r"(?<!\w)" if key[:1].isalnum() or key[:1] == "_" else ""
    after = r"(?:s|es|ed|d|ing|'s)?(?!\w)" if key[-1:].isalnum() or key[-1:] == "_" else ""
    if key.isalpha() and len(key) >= NAME_STEM:
        after = r"(?:[a-z]{0,3}|'s)(?!\w)"
    return re.compile(before + re.escape(key) + after)


def stands_at(key: str, text: str, start: int) -> int:
    """Where ``key`` first stands in ``text`` from ``start`` on (-1: nowhere); a plain
    ``find`` first, the boundaries checked where it finds the key."""
    pattern = _standing(key)
    at = text.find(key, start)
    while at >= 0 and not pattern.match(text, at):
        at = text.find(key, at + 1)
    return at


def found_in(key: str, text: str, squashed: str) -> bool:
    """Whether the case-folded token ``key`` stands in ``text`` (case folded, whitespace made
    single spaces; see :func:`stands_at`), or each of its pieces does when it has spaces, or
    it is one long word found in ``squashed`` (``xcode build`` squashed holds
    ``xcodebuild``)."""
    if stands_at(key, text, 0) >= 0:
        return True
    if " " in key:
        pieces = [piece.strip(TOKEN_EDGES) for piece in key.split()]
        pieces = [piece for piece in pieces if piece]
        return bool(pieces) and all(found_in(piece, text, squashed) for piece in pieces)
    return len(key) >= 6 and key.isalnum() and key in squashed


_LIST_MARKERS = re.compile(r"^\s*(?:[-*•]+(?:\s+|$))*")


def unmarked(text: str) -> str:
    """``text`` without its leading list markers: any run of ``-``, ``*`` and ``•`` markers,
    each followed by spaces (``--verbose`` and ``**Bold**`` keep theirs), so ``- - orders-api:
    Go.`` and ``- orders-api: Go.`` compare as the same line (a line copied behind an extra
    marker restates it: "What a rewrite may add" in docs/memory.md)."""
    return _LIST_MARKERS.sub("", text)


def squash(folded: str) -> str:
    """``folded`` without whitespace, ``_`` and ``-`` (``xcode build`` → ``xcodebuild``)."""
    return re.sub(r"[\s_-]+", "", folded)


def token_key(token: str) -> str:
    """A distinctive token as compared: folded, a trailing ``/`` dropped (``docs/`` is
    ``docs``)."""
    return fold(token).rstrip("/") or fold(token)


_NAMED = re.compile(r"\w[\w./-]*\w")


def details(text: str) -> set[str]:
    """The details a sentence gives (case folded): its distinctive tokens, and names holding
    ``_``, ``/`` or a digit (``src/orders_api``)."""
    named = {c for c in _NAMED.findall(text) if any(ch in c for ch in "_/0123456789")}
    return {token.casefold() for token in [*distinctive_tokens(text), *named]}


# Where sentences end: ., ! or ? before white space (not ";": "Fly.io did not work out; deploys
# now go to EKS." is one statement).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_sentences(text: str) -> list[str]:
    """``text``'s sentences, stripped, the blank ones left out."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
