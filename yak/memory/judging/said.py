"""What was said: the folded conversations cut into passages, and the words and tokens a
memory line is compared by ("Grounding" in docs/memory.md). Pure functions: no I/O.

- :func:`passages` cuts conversations into what was said: each sentence or line of a text
  block, each tool call (its name and target) as one observation; tool results never count.
- :func:`distinctive_tokens` finds what a line cannot have made up: paths, URLs, identifiers,
  flags, backticked spans, versions, numbers, e-mail addresses, names.
- :func:`is_instruction` and :func:`is_wondering` name the kinds of lines and passages the
  checks of :mod:`yak.memory.judging.grounding` tell apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from yak.domain import ChatMessage
from yak.evidence import Speaker
from yak.memory.prompts.transcript import scan_window
from yak.text import tool_target

Redactor = Callable[[str], tuple[str, tuple[str, ...]]]

TOOL_TARGET_CHARS = 500  # the longest tool-call target a passage keeps (characters)
_NAME_STEM = 5  # letters of a name that must match when it is said shorter or longer


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
        redactor: applied to each block's text (its head and tail within
            ``yak.limits.REDACT_WINDOW_CHARS``: :func:`yak.memory.prompts.transcript.scan_window`)
            before it is split (so a secret over several lines is still found), so a quote
            never holds a secret; ``yak.memory.redaction.scan.redact`` has this shape.

    Returns:
        The passages, in the order they were said.
    """
    found: list[Passage] = []
    for message in messages:
        speaker = Speaker.USER if message.role == "user" else Speaker.ASSISTANT
        for block in message.content:
            kind = block.get("type")
            if kind == "text":
                # What a refresh reads of a long message (yak.limits): a huge one costs no more.
                text = scan_window(str(block.get("text") or ""))
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


_LIST_MARKERS = re.compile(r"^\s*(?:[-*•]+(?:\s+|$))*")


def unmarked(text: str) -> str:
    """``text`` without its leading list markers: any run of ``-``, ``*`` and ``•`` markers,
    each followed by spaces (``--verbose`` and ``**Bold**`` keep theirs), so ``- - orders-api:
    Go.`` and ``- orders-api: Go.`` compare as the same line (a line copied behind an extra
    marker restates it: "What a rewrite may add" in docs/memory.md)."""
    return _LIST_MARKERS.sub("", text)


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


def _names_a_command(value: str) -> bool:
    """Whether a label's value is the project's command for it (``tests: pytest -q``, ``lint:
    ruff check .``): a fact about the project, not an order. A command that is also an order
    by itself (``curl``, ``sudo``, ``rm``, ``cat``…) does not count."""
    words = value.strip().strip("`").split()
    first = words[0].strip(_STRIP) if words else ""
    return first in _COMMANDS and first.lower() not in _IMPERATIVE


def is_instruction(line: str) -> bool:
    """Whether ``line`` tells the agent what to do or what it may do ("What a rewrite may
    add" in docs/memory.md): it starts (after a bullet, or after a label like ``install:``)
    with an imperative (run, install, fetch, print, cat, push, delete, ignore, skip, always,
    never…) or with a command (``pytest -q``, ``git push``; but a command after a label,
    ``tests: pytest -q``, names the project's command: a fact); it says always, never, must or
    do not; it grants permission (you may, you can, is allowed, no need to, need not, it is
    fine to, ok to, feel free, approval … not needed, without asking, pre-approves); it runs
    as root, with sudo or outside the sandbox; it pushes straight to main; it ignores rules
    or instructions; it names an index or a place to install or fetch from (``--index-url``,
    "install from"); it pipes a download into a shell; it prints a credentials file."""
    body = _BULLET.sub("", line).strip()
    if _starts_with_instruction(body):
        return True
    label = _LABEL.match(body)
    if (
        label
        and len(label.group(1).split()) <= 4
        and _starts_with_instruction(label.group(2))
        and not _names_a_command(label.group(2))
    ):
        return True
    lowered = body.lower()
    return any(
        pattern.search(body)
        for triggers, pattern in _INSTRUCTION_PATTERNS
        if any(trigger in lowered for trigger in triggers)
    )
