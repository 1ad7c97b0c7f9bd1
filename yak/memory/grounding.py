"""Grounding: which passage of the folded conversations backs each line a rewrite adds, and
why a line may not be applied without review ("Evidence" and "What a rewrite may add" in
docs/memory.md, where "Grounding" describes these rules). Pure functions: no I/O.

- :func:`passages` cuts conversations into what was said: each sentence or line of a text
  block, each tool call (its name and target) as one observation; tool results never count.
- :func:`distinctive_tokens` finds what a line cannot have made up: paths, URLs, identifiers,
  flags, backticked spans, versions, numbers, e-mail addresses, names.
- :func:`check_lines` scores every passage against every new line (distinctive tokens weigh
  most, then content words with light stemming and compound words) and says, per line, which
  passage backs it and, when the line must wait for review, one sentence why.
- :func:`check_rewrite` does the same for a whole rewrite against the document it replaces.
- :func:`is_instruction`, :func:`is_wondering` and :func:`is_structure` name the kinds of
  lines and passages those checks tell apart.

The passages are indexed once per call (content word → passages), so a check costs about the
passages that share a word with the line, not the whole transcript.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from heapq import nlargest

from yak.domain import EVIDENCE_QUOTE_CHARS, ChatMessage, Evidence, Speaker
from yak.linediff import line_opcodes
from yak.text import tool_target

Redactor = Callable[[str], tuple[str, tuple[str, ...]]]

_NAME_STEM = 5  # letters of a name that must match when it is said shorter or longer
SUPPORT_SHARE = 0.5  # of a line's weighted words, the share a passage must hold to back it
DOCUMENT_SHARE = 0.8  # of a line's weighted words, the share of a rewording of the document
_DOCUMENT_CANDIDATES = 6  # document lines compared in full with a line (the most alike)
DUPLICATE_SHARE = 0.8  # of a new line's content words, the share found in a line it restates
TOKEN_WEIGHT = 3  # a distinctive token counts as this many content words
TOOL_TARGET_CHARS = 500  # the longest tool-call target a passage keeps (characters)

NOT_SAID = "'{token}' was not said in the conversations"
NOTHING_SAYS = "nothing in the conversations says this"
ONLY_ASKED = "only asked about, not decided"
NOT_TYPED = "an instruction no one typed"
ALREADY_SAYS = "line {number} already says this"

# Which speaker's backing passage is the evidence (the person first; a tool call is an
# observation, above the assistant's talk when the line names a command or a path, below it
# otherwise).
_RANK = {Speaker.USER: 4, Speaker.ASSISTANT: 2}
_TOOL_RANK_WITH_TOKENS = 3
_TOOL_RANK_WITHOUT = 1


@dataclass(frozen=True)
class Passage:
    """One thing said in a folded conversation.

    Attributes:
        session_id: the conversation (``ses_…``).
        message_id: the message (``msg_…``).
        speaker: the person, the assistant, or a tool call the assistant made.
        text: one sentence or line of a message's text (redacted), or for a tool call its
            name and target (``run_command pytest -q``, ``read_file src/app.py``).
        wondering: a question or a conditional ("…?", "could we…", "what if…", "maybe…").
        quoted: pasted or quoted, not the speaker's own words (a file shown after "Here is
            our README:", a block quote, an HTML comment, a fenced block): it counts as said,
            but never as a person typing an instruction.
    """

    session_id: str
    message_id: str
    speaker: Speaker
    text: str
    wondering: bool
    quoted: bool = False


@dataclass(frozen=True)
class LineCheck:
    """The verdict on one line a rewrite adds or changes.

    Attributes:
        line: the line, as given.
        evidence: the passage that backs it best (``None``: none does, or the line is
            structure, or only the previous document backs it).
        reason: ``None`` when the line may be applied; else one sentence why it waits for
            review.
        duplicate_of: the 1-based number, in the candidate, of the line it restates.
    """

    line: str
    evidence: Evidence | None
    reason: str | None
    duplicate_of: int | None = None


# --- passages -------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LEAD = re.compile(r"^(?:\s|[-*+>•#]|\d+[.)]\s|\*\*|__)+")
_FILLER = re.compile(r"^(?:(?:so|ok|okay|hmm+|well|also|and|but|btw|then|now|right)\b[,\s]*)+")
_WONDER = re.compile(
    r"^(?:what if|what about|how about|should we|should i|shall we|i wonder|i'm wondering|"
    r"i am wondering|i was wondering|wondering|if we|do you think|is it worth|"
    r"not sure (?:if|whether))\b"
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|someday|some day|one day|eventually|"
    r"just wondering|just curious|thinking out loud|not planning|no plans?|not decided|"
    r"(?:might|could|would)(?!\s+not\b|n['’]t))\b"
)
_TRAILING_CLOSERS = "\"')]}*_` "


def is_wondering(text: str) -> bool:
    """Whether ``text`` (one sentence) asks or supposes rather than decides: it ends with
    ``?``; it starts (after a bullet and a filler like "so," or "hmm") with what if, what
    about, how about, should we, shall we, I wonder, if we, do you think, is it worth, not
    sure if; or it hedges anywhere: could, would or might (not "could not"), maybe,
    perhaps, possibly, probably, someday, eventually, just wondering, thinking out loud,
    not planning, no plans."""
    stripped = text.strip().rstrip(_TRAILING_CLOSERS)
    if stripped.endswith("?"):
        return True
    head = _FILLER.sub("", _LEAD.sub("", stripped).lower())
    return bool(_WONDER.match(head) or _HEDGE.search(head))


_PASTE_INTRO = re.compile(
    r"\b(?:here is|here's|here are|below is|says|said|reads|read|pasted?|copied|"
    r"contents? of|looks like)\b|\.(?:md|txt|rst|toml|ya?ml|json|cfg|ini)\b",
    re.IGNORECASE,
)
_PASTE_LABEL = re.compile(r"^\s*(?:paste[d]?|quote[d]?|from \S+)\s*:\s*", re.IGNORECASE)
_HEADING = re.compile(r"^\s*#{1,6}\s")


def _sentences(text: str) -> list[tuple[str, bool]]:
    """Each sentence of ``text`` with whether it is quoted rather than the writer's own:
    a fenced block, a ``>`` quote, an HTML comment, a line after ``Paste:``, or everything
    after an introduction ending with a colon ("Here is our CONTRIBUTING.md:", "Our README
    says:") or from a Markdown heading on (a pasted document)."""
    found: list[tuple[str, bool]] = []
    fenced = comment = pasted = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        stripped = line.strip()
        quoted = fenced or comment or pasted or stripped.startswith(">")
        if "<!--" in stripped:
            quoted = True
            comment = "-->" not in stripped[stripped.index("<!--") :]
        elif comment and "-->" in stripped:
            comment = False
        if _PASTE_LABEL.match(stripped):
            quoted = True
        if _HEADING.match(line):
            pasted = quoted = True
        for sentence in _SENTENCE_END.split(stripped):
            sentence = " ".join(sentence.split())
            if any(ch.isalnum() for ch in sentence):
                found.append((sentence, quoted))
        if stripped.endswith(":") and _PASTE_INTRO.search(stripped):
            pasted = True
    return found


def passages(messages: Sequence[ChatMessage], redactor: Redactor | None = None) -> list[Passage]:
    """Everything said in ``messages``, in order, as passages.

    Each ``text`` block is split into lines, and each line into sentences; each ``tool_use``
    block is one passage (``TOOL_CALL``) of its name and target (:func:`yak.text.tool_target`);
    ``tool_result`` blocks and anything else are ignored (a file's content is not what was
    said). A message of role ``user`` speaks as ``USER``, any other as ``ASSISTANT``.

    Args:
        messages: the folded conversations' messages, oldest first.
        redactor: applied to each block's text before it is split (so a secret over several
            lines is still found), so a quote never holds a secret; ``yak.memory.redact.redact``
            has this shape.

    Returns:
        The passages, in the order they were said.
    """
    found: list[Passage] = []
    for message in messages:
        speaker = Speaker.USER if message.role == "user" else Speaker.ASSISTANT
        for block in message.content:
            kind = block.get("type")
            if kind == "text":
                text = str(block.get("text") or "")
                if redactor is not None:
                    text = redactor(text)[0]
                for sentence, quoted in _sentences(text):
                    found.append(
                        Passage(
                            message.session_id,
                            message.id,
                            speaker,
                            sentence,
                            is_wondering(sentence),
                            quoted,
                        )
                    )
            elif kind == "tool_use":
                name = str(block.get("name") or "tool")
                target = tool_target(block.get("input"), TOOL_TARGET_CHARS)
                call = f"{name} {target}" if target else name
                if redactor is not None:
                    call = redactor(call)[0]
                found.append(
                    Passage(message.session_id, message.id, Speaker.TOOL_CALL, call, False)
                )
    return found


# --- tokens and words -----------------------------------------------------------------------

_TICKED = re.compile(r"`([^`\n]+)`")
_CHUNK = re.compile(r"\S+")
_URL = re.compile(r"(?:https?|ftp|file|ssh|git)://|www\.", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_FLAG = re.compile(r"--?[A-Za-z][\w-]*(?:=\S*)?")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+[a-z0-9]*")
_NUMBER = re.compile(r"(\d{2,})[A-Za-z%]{0,3}")
_HOST_PORT = re.compile(r"[A-Za-z][\w.-]*:\d{2,5}")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z][a-z0-9]+[A-Z]|[A-Z][A-Z0-9]*\d")
_BULLET_ONLY = re.compile(r"\s*(?:[-*+•]|\d+[.)])?\s*")
_LEAD_STRIP = "\"'`“”‘’([{<*"  # a leading dot, tilde, slash or dash belongs to the token
_STRIP = "\"'`“”‘’()[]{}<>,.;:!?*"
_SENTENCE_STARTERS = frozenset(".!?:;-*#>•|\"'“‘`_=")
# Everyday abbreviations: words, not names a line could have made up.
# fmt: off
_COMMON_CAPS = frozenset((
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
    token = chunk.lstrip(_LEAD_STRIP).rstrip(_STRIP)
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
        number = _NUMBER.fullmatch(token)  # 8080, 512MB, 30s, 90%; not 24/7
        return number.group(1) if number else None
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
        return None if core.lower() in _COMMON_CAPS or not core.isalpha() else core
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
    numbers of two digits or more (``8080``), and names: capitalised words not at the start
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
_STOPWORDS = frozenset((
    "a", "an", "the", "and", "or", "but", "nor", "so", "yet", "if", "then", "else", "when",
    "while", "where", "what", "which", "who", "whom", "whose", "why", "how", "that", "this",
    "these", "those", "there", "here", "it", "its", "it's", "is", "are", "was", "were", "be",
    "been", "being", "am", "do", "does", "did", "done", "doing", "have", "has", "had", "having",
    "will", "would", "shall", "should", "can", "could", "may", "might", "must", "i", "me", "my",
    "mine", "we", "us", "our", "ours", "you", "your", "yours", "he", "him", "his", "she", "her",
    "hers", "they", "them", "their", "theirs", "to", "of", "in", "on", "at", "by", "for",
    "from", "with", "without", "into", "onto", "over", "under", "about", "as", "than", "too",
    "very", "also", "just", "only", "even", "still", "now", "not", "no", "never", "always",
    "any", "all", "some", "each", "every", "both", "either", "neither", "more", "most", "much",
    "many", "few", "other", "such", "own", "same", "s", "t", "d", "ll", "re", "ve", "m", "don",
    "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "wouldn", "shouldn", "couldn",
    "can't", "cannot", "let", "lets", "let's", "yes", "ok", "okay", "sure", "please", "thanks",
    "thank", "via", "per", "use", "uses", "used", "using", "http", "https", "www", "com"
))
# fmt: on
# fmt: off
_NEGATORS = frozenset((
    "not", "never", "no", "without", "cannot", "nothing", "none", "nobody", "neither", "nor",
    "dont", "doesnt", "didnt", "cant", "wont", "shouldnt", "mustnt", "isnt", "arent", "wasnt",
    "werent"
))
# fmt: on


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
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
class _Words:
    """A text's content words: stems in order (each once), adjacent pairs whose concatenation
    is a word elsewhere (``xcode build`` ~ ``xcodebuild``), and every term to look up."""

    stems: tuple[str, ...]
    pairs: tuple[tuple[str, str, str], ...]  # (stem a, stem b, stem of a+b)
    terms: frozenset[str]
    negated: bool  # a negation among all its words: not, never, no, don't…


def _words(text: str) -> _Words:
    stems: dict[str, None] = {}
    pairs: list[tuple[str, str, str]] = []
    previous = previous_stem = ""  # the last word, when a letters-only content word
    negated = False
    last = ""  # the last word, whatever it was
    for word in _WORD.findall(text.lower()):
        if word in _NEGATORS or (word == "t" and last.endswith("n")):
            negated = True  # not, never, no…, and don't, can't, isn't (split at the quote)
        last = word
        if word in _STOPWORDS or len(word) < 2:
            previous = ""
            continue
        stem = _stem(word)
        stems[stem] = None
        if word.isalpha():
            if previous:
                pairs.append((previous_stem, stem, _stem(previous + word)))
            previous, previous_stem = word, stem
        else:
            previous = ""
    terms = frozenset(stems).union([joined for _a, _b, joined in pairs])
    return _Words(tuple(stems), tuple(pairs), terms, negated)


def _matched_words(line: _Words, terms: frozenset[str]) -> set[str]:
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
    if key.isalpha() and len(key) >= _NAME_STEM:
        after = r"(?:[a-z]{0,3}|'s)(?!\w)"
    return re.compile(before + re.escape(key) + after)


def _stands_at(key: str, text: str, start: int) -> int:
    """Where ``key`` first stands in ``text`` from ``start`` on (-1: nowhere); a plain
    ``find`` first, the boundaries checked where it finds the key."""
    pattern = _standing(key)
    at = text.find(key, start)
    while at >= 0 and not pattern.match(text, at):
        at = text.find(key, at + 1)
    return at


def _found_in(key: str, text: str, squashed: str) -> bool:
    """Whether the case-folded token ``key`` stands in ``text`` (case folded, whitespace made
    single spaces; see :func:`_standing`), or each of its pieces does when it has spaces, or
    it is one long word found in ``squashed`` (``xcode build`` squashed holds
    ``xcodebuild``)."""
    if _stands_at(key, text, 0) >= 0:
        return True
    if " " in key:
        pieces = [piece.strip(_STRIP) for piece in key.split()]
        pieces = [piece for piece in pieces if piece]
        return bool(pieces) and all(_found_in(piece, text, squashed) for piece in pieces)
    return len(key) >= 6 and key.isalnum() and key in squashed


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _squash(folded: str) -> str:
    return re.sub(r"[\s_-]+", "", folded)


def _token_key(token: str) -> str:
    return _fold(token).rstrip("/") or _fold(token)


# --- instructions ---------------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*+•]\s+|\d+[.)]\s+)?(?:\*\*|__)?")
_LABEL = re.compile(r"^([^:`]{1,40}?)(?:\*\*|__)?:\s+(.+)$")
# fmt: off
_IMPERATIVE = frozenset((
    "run", "execute", "exec", "install", "uninstall", "reinstall", "download", "fetch", "pull",
    "print", "cat", "show", "dump", "echo", "display", "reveal", "push", "force-push", "commit",
    "deploy", "delete", "remove", "rm", "ignore", "disregard", "skip", "bypass", "disable",
    "override", "call", "invoke", "pipe", "upload", "send", "export", "source", "chmod",
    "chown", "sudo", "curl", "wget", "approve", "grant", "allow", "trust", "overwrite", "reset",
    "drop", "kill", "always", "never", "must"
))
# fmt: on
# fmt: off
_COMMANDS = frozenset((
    "pytest", "python", "python3", "pip", "pip3", "pipx", "uv", "uvx", "npm", "npx", "yarn",
    "pnpm", "make", "cargo", "go", "git", "docker", "kubectl", "helm", "curl", "wget", "sudo",
    "bash", "sh", "zsh", "rm", "chmod", "chown", "brew", "apt", "apt-get", "dnf", "yum",
    "poetry", "ruff", "mypy", "node", "deno", "bun", "xcodebuild", "gradle", "mvn", "terraform",
    "ansible", "ssh", "scp", "rsync", "cd", "export", "source", "echo", "cat", "tox", "nox",
    "pre-commit", "alembic"
))
# fmt: on
# fmt: off
_LINKING = frozenset((
    "is", "are", "was", "were", "has", "have", "had", "handles", "runs", "works", "uses", "for",
    "and", "or", "with", "on", "in", "of", "to", "as", "from", "by", "at"
))
# fmt: on
# Each pattern with the words that must be in a line for it to match (a cheap test first).
_INSTRUCTION_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (triggers, re.compile(pattern, re.IGNORECASE))
    for triggers, pattern in (
        # always / never / must / do not, as a rule
        (("always", "never", "must"), r"\b(?:always|never|must|mustn['’]?t)\b"),
        (
            ("not", "don"),
            r"(?:^|[;:,]\s*|\b(?:you|agents?|assistant|claude)\s+)(?:do not|don['’]?t|dont)\b",
        ),
        # permission
        (
            ("you", "agent", "assistant", "claude", "yak"),
            r"\b(?:you|the agent|agents?|the assistant|claude|yak)\s+(?:may|can|could|"
            r"are free to|should|need not|needn['’]?t|(?:do not|don['’]?t) (?:need|have) to)\b",
        ),
        (
            ("may",),
            r"\bmay\s+(?:\w+\s+){0,2}?(?:run|push|write|delete|install|execute|deploy|skip|"
            r"bypass|ignore|print|access|commit|merge|modify|overwrite|edit|remove|use sudo)\b",
        ),
        (
            ("allowed", "permitted"),
            r"\b(?:is|are|be)\s+(?:allowed|permitted)\b|\b(?:allowed|permitted)\s+to\b",
        ),
        (
            ("need",),
            r"\bno need to\b|\bneed not\b|\bneedn['’]?t\b|\b(?:does|do)\s*n(?:o|['’])?t need to\b",
        ),
        (
            ("fine", "ok", "safe", "alright", "acceptable"),
            r"\b(?:it is|it['’]s|its|is|are)\s+(?:fine|ok|okay|safe|alright|acceptable)\s+to\b"
            r"|\b(?:ok|okay|fine)\s+to\s+\w",
        ),
        (("feel free",), r"\bfeel free\b"),
        # approval, permission or the sandbox not needed
        (
            ("needed", "required", "necessary"),
            r"\b(?:approvals?|permissions?|confirmations?|consent|sign-?off|reviews?|asking)\b"
            r"[^.;]{0,40}?\b(?:not|never|no longer)\s+(?:needed|required|necessary)\b",
        ),
        (
            ("no ",),
            r"\bno\s+(?:approval|permission|confirmation|consent|sign-?off|review)s?\b",
        ),
        (
            ("without", "skip"),
            r"\bwithout\s+(?:asking|approval|confirmation|confirming|permission|prompting|"
            r"review|(?:the\s+|a\s+)?sandbox)|\bskip(?:s|ping)?\s+(?:the\s+)?(?:approval|"
            r"confirmation|permission|review|sandbox)",
        ),
        (
            ("approv", "authori", "grant", "given"),
            r"\b(?:pre-?approve[sd]?|auto-?approve[sd]?)\b|\b(?:approved|authori[sz]ed|granted)"
            r"\s+(?:all|every|any)\b|\b(?:has|have|is|are)\s+(?:been\s+)?(?:granted|given)\s+"
            r"(?:permission|approval|consent)|\bpermission\s+(?:is|has been)\s+granted",
        ),
        # root, sudo, outside the sandbox
        (
            ("root", "sudo", "sandbox"),
            r"\bas\s+root\b|\bsudo\b|\b(?:outside|disable|bypass)\s+(?:the\s+)?sandbox",
        ),
        # straight to main
        (
            ("directly", "straight"),
            r"\bpush\w*\b[^.;]{0,30}\b(?:main|master)\b[^.;]{0,20}\b(?:directly|straight)\b"
            r"|\b(?:directly|straight)\s+(?:to|into)\s+(?:main|master)\b",
        ),
        # ignore the rules
        (
            ("ignore", "disregard", "bypass", "override", "forget"),
            r"\b(?:ignore|disregard|bypass|override|forget)\b.{0,30}\b(?:rules?|instructions?|"
            r"guidelines?|polic(?:y|ies)|restrictions?|safety|guardrails?|system prompt|hooks?)\b",
        ),
        # where to install or fetch from
        (
            ("index", "registry", "trusted-host", "from"),
            r"--(?:extra-)?index-url\b|--trusted-host\b|--registry\b|\bindex[- ]url\b"
            r"|\bpackage index\b|\b(?:install|download|fetch|pull)\w*\b[^.;]{0,60}\bfrom\b",
        ),
        # a download piped into a shell
        (
            ("|", "<("),
            r"(?:https?://|\b(?:curl|wget|iwr|invoke-webrequest)\b).*\|\s*(?:sudo\s+)?"
            r"(?:ba|z|da|k|fi)?sh\b|\|\s*(?:sudo\s+)?(?:python3?|perl|ruby|node|iex)\b"
            r"|\b(?:bash|sh|zsh)\s+<\s*\(\s*(?:curl|wget)\b",
        ),
        # a file to print
        (
            ("print", "cat", "show", "dump", "echo", "display", "reveal", "paste", "output"),
            r"\b(?:print|cat|show|dump|echo|display|reveal|paste|output)\b[^.;]{0,40}"
            r"(?:credential|secret|token|password|passwd|\.env\b|\.aws|\.ssh|id_rsa|"
            r"private key|api key)",
        ),
    )
)


def _starts_with_instruction(text: str) -> bool:
    text = text.strip().strip("`").strip()
    words = text.split()
    if not words:
        return False
    first = words[0].strip(_STRIP)
    if first.lower() in _IMPERATIVE:
        return True
    # a command is typed in lower case ("Python 3.13" is a name) and has an argument
    if first in _COMMANDS and len(words) > 1:
        second = words[1].lower()
        if second.startswith(("-", "/", ".", "~")) or "/" in second:
            return True
        word = second.strip(_STRIP)
        verb = len(word) >= 5 and word.endswith("s") and not word.endswith(("ss", "us"))
        return word.isalpha() and not second.startswith("(") and word not in _LINKING and not verb
    return False


def is_instruction(line: str) -> bool:
    """Whether ``line`` tells the agent what to do or what it may do ("What a rewrite may
    add" in docs/memory.md): it starts (after a bullet, or after a label like ``install:``)
    with an imperative (run, install, fetch, print, cat, push, delete, ignore, skip, always,
    never…) or with a command (``pytest -q``, ``git push``); it says always, never, must or
    do not; it grants permission (you may, you can, is allowed, no need to, need not, it is
    fine to, ok to, feel free, approval … not needed, without asking, pre-approves); it runs
    as root, with sudo or outside the sandbox; it pushes straight to main; it ignores rules
    or instructions; it names an index or a place to install or fetch from (``--index-url``,
    "install from"); it pipes a download into a shell; it prints a credentials file."""
    body = _BULLET.sub("", line).strip()
    if _starts_with_instruction(body):
        return True
    label = _LABEL.match(body)
    if label and len(label.group(1).split()) <= 4 and _starts_with_instruction(label.group(2)):
        return True
    lowered = body.lower()
    return any(
        pattern.search(body)
        for triggers, pattern in _INSTRUCTION_PATTERNS
        if any(trigger in lowered for trigger in triggers)
    )


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


@dataclass
class _Entry:
    """One indexed text: a passage, or a line of the document or of the candidate (with its
    1-based number there)."""

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
    number, weight = item
    return weight, -number


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
    a word of the value or a token."""
    scores: list[_Score] = []
    for entry, tokens, words in index.near(line, SUPPORT_SHARE):
        if not tokens and len(words) < min(2, len(line.words.stems)):
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
    """How closely ``new`` restates ``other`` (0: it does not): the share of its content words
    found in ``other`` (compounds counted), when it has at least two, or 1 when both carry the
    same distinctive tokens and share at least half the words; never across polarity, nor
    when ``new`` names a token ``other`` does not."""
    if new.negated != other.negated:
        return 0.0
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


def _new_line_numbers(count: int, kept: Mapping[int, str]) -> list[int]:
    numbers: list[int] = []
    number = 1
    while len(numbers) < count:
        if number not in kept:
            numbers.append(number)
        number += 1
    return numbers


def check_rewrite(previous: str, candidate: str, passages: Sequence[Passage]) -> list[LineCheck]:
    """:func:`check_lines` for a whole rewrite: the lines ``candidate`` adds or changes
    against ``previous`` (a line diff, :func:`yak.linediff.line_opcodes`), the others kept.

    Returns:
        One :class:`LineCheck` per added or changed line, in the candidate's order.
    """
    old, new = previous.splitlines(), candidate.splitlines()
    kept: dict[int, str] = {}
    added: list[str] = []
    for tag, _i1, _i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            kept.update((number + 1, new[number]) for number in range(j1, j2))
        else:
            added += new[j1:j2]
    return check_lines(added, document=previous, kept=kept, passages=passages)


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
    lines: dict[str, _Line] = {}  # the document's lines, most of them kept too
    doc = _Index()
    for text in document.splitlines():
        if not is_structure(text):
            line = lines[text] = lines.get(text) or _line(text)
            doc.add(_DOCUMENT, line)
    earlier = _Index()
    for number, text in sorted(kept.items()):
        if not is_structure(text):
            line = lines.get(text) or _line(text)
            earlier.add(_DOCUMENT, line, number=number)
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
        return LineCheck(line.text, evidence, ALREADY_SAYS.format(number=duplicate), duplicate)

    for token, key in zip(line.tokens, line.keys, strict=True):
        if not _said(key, said, doc):
            return LineCheck(line.text, evidence, NOT_SAID.format(token=token))

    decided = any(not score.entry.passage.wondering for score in scores)
    if not decided:
        tokens, words = _document_match(line, doc)
        weight = TOKEN_WEIGHT * len(tokens) + len(words)
        reworded = line.total > 0 and weight >= DOCUMENT_SHARE * line.total
        carried = None if reworded else _carried(line, said, words)
        if not reworded and carried is None:
            return LineCheck(line.text, evidence, ONLY_ASKED if scores else NOTHING_SAYS)
        if carried is not None:
            evidence = _evidence(line.text, carried)

    if is_instruction(line.text) and not _typed(line, scores, doc):
        return LineCheck(line.text, evidence, NOT_TYPED)
    return LineCheck(line.text, evidence, None)


_PIECES = re.compile(r"[=:/@?&#]+")


def _pieces(key: str) -> list[str]:
    """The parts of a URL, a ``KEY=value``, a ``host:port`` or an address (``[]`` for any
    other token): each must be said for the whole to count as said."""
    if "=" not in key and ":" not in key and "@" not in key:
        return []
    return [piece for piece in _PIECES.split(key) if len(piece) >= 2]


def _said(key: str, said: _Index, doc: _Index) -> bool:
    """Whether the token ``key`` was said in a passage or stands in the document; a URL,
    ``KEY=value``, ``host:port`` or address also when each of its parts was (a changed port
    carried into a dependent line)."""
    if said.hits(key) or doc.hits(key):
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
