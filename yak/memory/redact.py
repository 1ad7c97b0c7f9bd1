"""Redact secrets from text before it reaches the model or the memory document.

Two layers, applied in order:

1. Yak's own patterns for the cases that matter most in a developer's conversation and that the
   library misses or only half-covers: private key blocks (multi-line), passwords in URLs
   (``postgres://user:pw@host/db``), Anthropic and OpenAI ``sk-…`` keys, GitHub tokens, AWS
   access key ids, bearer tokens, JSON Web Tokens, and ``password = …`` / ``API_KEY=…``
   assignments. Each replaces the whole secret.
2. The detectors of ``detect-secrets`` (a maintained library), line by line, for everything else
   it knows (Slack, Stripe, npm, PyPI, Twilio, quoted high-entropy strings, …), filtered by its
   own heuristics (UUIDs, templated values, sequential strings). A detector sometimes yields
   only part of a token; the match is widened to the whole token so no half-secret is left.

The detectors are instantiated directly instead of through ``detect-secrets``' global settings,
so redaction is safe to run from several threads. Hex and IP-address detectors are not used:
in a project's memory, a commit hash or a server address is information, not a secret.

Replacements read ``[REDACTED:url-password]``; the findings are short flags such as
``redacted:url_password`` and never contain the secret. Redacting already-redacted text changes
nothing and reports nothing, so a reply that repeats a marker is not flagged again.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin

MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\n[ \t]*\n|\Z)",
    re.DOTALL,
)
_PUTTY_KEY = re.compile(
    r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[^\n]*|\n[ \t]*\n|\Z)", re.DOTALL
)
# scheme://user:password@host — the password is everything up to the last '@' of the authority.
_URL_PASSWORD = re.compile(
    r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/?#@\[\]]*:)(?P<secret>[^\s/?#]+)(?=@)"
)
_ANTHROPIC_KEY = re.compile(r"\bsk-ant-[A-Za-z0-9_-]{10,}")
_OPENAI_KEY = re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")
_GITHUB_TOKEN = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")
_BEARER = re.compile(
    r"(?P<keep>\b(?:Bearer|Authorization:\s*(?:Basic|Token))\s+)(?P<secret>[A-Za-z0-9._~+/=-]{12,})",
    re.IGNORECASE,
)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")

# ``password = "x"``, ``API_KEY=x``, ``"api_key": "x"``: a secret-sounding word inside a name,
# then an assignment.
# (kind, pattern, lower-case literals one of which every match contains, keeps a prefix group)
_OWN_PATTERNS: tuple[tuple[str, re.Pattern[str], tuple[str, ...], bool], ...] = (
    ("private-key", _PRIVATE_KEY, ("private key",), False),
    ("private-key", _PUTTY_KEY, ("putty-user-key-file",), False),
    ("url-password", _URL_PASSWORD, ("://",), True),
    ("bearer-token", _BEARER, ("bearer", "authorization"), True),
    ("anthropic-key", _ANTHROPIC_KEY, ("sk-ant-",), False),
    ("openai-key", _OPENAI_KEY, ("sk-",), False),
    ("github-token", _GITHUB_TOKEN, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), False),
    ("aws-key", _AWS_KEY_ID, ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa"), False),
    ("jwt", _JWT, ("eyj",), False),
)

_SECRET_WORD = re.compile(
    r"password|passwd|passphrase|pwd|secret|api_?key|apikey|access_?key|auth_?key|"
    r"private_?key|client_?key|(?:auth|access|refresh|api|bearer|session|csrf)_?token|"
    r"token_?secret|credentials?",
    re.IGNORECASE,
)
_ANCHORS = ("pass", "pwd", "secret", "key", "token", "credential")  # in every _SECRET_WORD
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_AFTER_NAME = re.compile(
    r"(?P<op_text>[\"']?[ \t]*(?P<op>:=|=>|=|:)[ \t]*)"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s\"',;]+)(?P<rest>[^\n]*))"
)
_CODE_VALUE = re.compile(
    r"^(?:[$%{<(]|\[REDACTED)|[()\[\]]|^(?:none|null|nil|true|false|undefined|required|optional|"
    r"str|string|bytes|int|secretstr|env|environ|getenv|input|changeme|\*+|x+|\.+)$"
    r"|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$",
    re.IGNORECASE,
)

# detect-secrets detectors that would redact information rather than secrets in a project memory.
_SKIPPED_DETECTORS = {"HexHighEntropyString", "IPPublicDetector"}
# Characters that make up a token: a detector's partial match is widened over these.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+/=~")


def redact(text: str) -> tuple[str, tuple[str, ...]]:
    """Replace every secret in ``text`` with a ``[REDACTED:<kind>]`` marker.

    Args:
        text: any text (a conversation transcript, a model's reply). About 1 ms per 4,000
            characters of ordinary text (``benchmarks/bench_refresh.py`` measures it).

    Returns:
        ``(redacted_text, findings)``: ``findings`` are the distinct flags, in order of first
        appearance, like ``("redacted:url_password", "redacted:anthropic_key")``; empty when
        nothing was found. The text is unchanged when nothing was found.
    """
    findings: list[str] = []

    def note(kind: str) -> str:
        flag = "redacted:" + kind.replace("-", "_")
        if flag not in findings:
            findings.append(flag)
        return f"[REDACTED:{kind}]"

    lowered = text.lower()
    for kind, pattern, gates, keeps_prefix in _OWN_PATTERNS:
        # A literal every match contains: most texts skip most patterns without a regex scan.
        if not any(gate in lowered for gate in gates):
            continue
        mark = _keep_or_mark if keeps_prefix else _mark
        text = pattern.sub(functools.partial(mark, kind=kind, note=note), text)
    text = _redact_assignments(text, note)
    text = "\n".join(_redact_line_with_library(line, note) for line in text.split("\n"))
    return text, tuple(findings)


def _mark(match: re.Match[str], kind: str, note: Callable[[str], str]) -> str:
    """The marker for the whole match."""
    return note(kind)


def _keep_or_mark(match: re.Match[str], kind: str, note: Callable[[str], str]) -> str:
    """The match's ``keep`` group, then the marker for its ``secret`` group (unless that is
    already a marker)."""
    secret = match.group("secret")
    if MARKER.fullmatch(secret) or secret.startswith("[REDACTED"):
        return match.group(0)
    return match.group("keep") + note(kind)


def _redact_assignments(text: str, note: Callable[[str], str]) -> str:
    """Redact the values of secret-named assignments (see :func:`_redact_assignment`).

    Names are found from cheap substring hits (``str.find`` on the lower-cased text) widened to
    the whole name and then checked with the full pattern; a regex scan from every word costs
    about ten times more on ordinary text.
    """
    lowered = text.lower()
    names: set[tuple[int, int]] = set()
    for anchor in _ANCHORS:
        hit = lowered.find(anchor)
        while hit != -1:
            start, end = hit, hit + len(anchor)
            while start > 0 and text[start - 1] in _NAME_CHARS:
                start -= 1
            while end < len(text) and text[end] in _WORD_CHARS:
                end += 1
            names.add((start, end))
            hit = lowered.find(anchor, end)
    pieces: list[str] = []
    last = 0
    for start, end in sorted(names):
        if start < last or not _SECRET_WORD.search(text, start, end):
            continue
        after = _AFTER_NAME.match(text, end)
        if after is None:
            continue
        pieces += [text[last:start], _redact_assignment(text[start:end], after, note)]
        last = after.end()
    pieces.append(text[last:])
    return "".join(pieces)


def _redact_assignment(name: str, match: re.Match[str], note: Callable[[str], str]) -> str:
    """``password = "x"`` / ``API_KEY=x`` / ``password: x`` (the last only at the end of a
    line, so prose such as "Secrets: stored in the keyring" is left alone)."""
    keep = name + match.group("op_text")
    for quote, group in (('"', "dq"), ("'", "sq")):
        value = match.group(group)
        if value is not None:
            if _looks_like_value(value, quoted=True):
                return f"{keep}{quote}{note('password-assignment')}{quote}"
            return name + match.group(0)
    value, rest = match.group("bare"), match.group("rest")
    if match.group("op") == ":" and rest.strip() and not rest.lstrip().startswith("#"):
        return name + match.group(0)
    if match.group("op") == ":" and not _looks_like_credential(value):
        return name + match.group(0)  # prose: "the secret: noted."
    if not _looks_like_value(value, quoted=False):
        return name + match.group(0)
    return f"{keep}{note('password-assignment')}{rest}"


def _looks_like_credential(value: str) -> bool:
    """An unquoted value after ``name:`` in prose is a credential only if it does not read as
    a word: it has a digit or a symbol, or is long (``hunter2``, ``s3cr3t!``, a random token),
    whereas ``noted.`` or ``unknown`` are words."""
    word = value.strip().rstrip(".,;!?)")
    return len(word) >= 16 or any(not char.isalpha() for char in word)


def _looks_like_value(value: str, *, quoted: bool) -> bool:
    """A literal secret rather than a reference to one (``os.environ[...]``, ``${VAR}``)."""
    stripped = value.strip()
    if len(stripped) < (3 if quoted else 4) or MARKER.search(stripped):
        return False
    if "{{" in stripped or "${" in stripped or stripped.startswith("<"):
        return False
    if not quoted and _CODE_VALUE.search(stripped):
        return False
    return not stripped.isdigit()


@functools.cache
def _detectors() -> tuple[BasePlugin, ...]:
    """One instance of every detect-secrets detector Yak uses (built once, read-only after)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    # The library's annotation binds a type variable to nothing; every value is a plugin class.
    classes: Iterable[type[BasePlugin]] = get_mapping_from_secret_type_to_class().values()
    return tuple(
        cls()
        for cls in sorted(classes, key=lambda c: c.__name__)
        if cls.__name__ not in _SKIPPED_DETECTORS
    )


@functools.cache
def _library_filters() -> tuple[Callable[[str], bool], ...]:
    from detect_secrets.filters import heuristic

    return (
        heuristic.is_sequential_string,
        heuristic.is_potential_uuid,
        heuristic.is_templated_secret,
        heuristic.is_prefixed_with_dollar_sign,
    )


def _library_findings(line: str) -> Iterator[tuple[str, str]]:
    """``(kind, secret)`` pairs the library finds in one line."""
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin

    for detector in _detectors():
        for secret in detector.analyze_string(line):
            if not secret or len(secret.strip()) < 3:
                continue
            if (
                isinstance(detector, HighEntropyStringsPlugin)
                and detector.calculate_shannon_entropy(secret) <= detector.entropy_limit
            ):
                continue
            if any(check(secret) for check in _library_filters()):
                continue
            yield _kind(detector.secret_type), secret


def _kind(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


# Where a library detector could match: a long token (keys and tokens are long runs of letters
# and digits), a secret-sounding keyword (KeywordDetector and its kin), or a URL with
# credentials (BasicAuthDetector). The detectors run on windows around these only; scanning
# every full line with all of them costs ~50 ms per 20,000 characters, the windows a fraction.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,}")
_KEYWORD = re.compile(r"key|pass|pwd|secret|token|contrase|://", re.IGNORECASE)
_BEFORE = 80  # characters before a token that an assignment pattern may need (prefix, keyword)
_AFTER_KEYWORD = 400  # characters after a keyword that a quoted value may span


def _windows(line: str) -> list[tuple[int, int]]:
    """Merged ``(start, end)`` windows of ``line`` worth giving to the library detectors."""
    found: list[tuple[int, int]] = []
    for match in _TOKEN.finditer(line):
        token = match.group(0)
        if len(token) >= 24 or (len(token) >= 16 and any(c.isdigit() for c in token)):
            found.append((max(match.start() - _BEFORE, 0), min(match.end() + 3, len(line))))
    for match in _KEYWORD.finditer(line):
        found.append((max(match.start() - 40, 0), min(match.end() + _AFTER_KEYWORD, len(line))))
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _redact_line_with_library(line: str, note: Callable[[str], str]) -> str:
    if len(line.strip()) < 8:
        return line
    findings = [
        found for start, end in _windows(line) for found in _library_findings(line[start:end])
    ]
    for kind, secret in findings:
        spans = _spans_outside_markers(line, secret)
        if not spans:
            continue
        pieces, last = [], 0
        for start, end in spans:
            pieces += [line[last:start], note(kind)]
            last = end
        line = "".join(pieces) + line[last:]
    return line


def _spans_outside_markers(line: str, secret: str) -> list[tuple[int, int]]:
    """Where ``secret`` occurs in ``line``, widened to the whole token, skipping markers."""
    markers = [m.span() for m in MARKER.finditer(line)]
    spans: list[tuple[int, int]] = []
    start = line.find(secret)
    while start != -1:
        end = start + len(secret)
        while start > 0 and line[start - 1] in _TOKEN_CHARS:
            start -= 1
        while end < len(line) and line[end] in _TOKEN_CHARS:
            end += 1
        overlaps = any(s < end and start < e for s, e in markers + spans)
        if not overlaps:
            spans.append((start, end))
        start = line.find(secret, end)
    return sorted(spans)
