"""Redact secrets from text before it reaches the model or the memory document (DESIGN.md §3).

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
from collections.abc import Callable, Iterator
from typing import Any

MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\n[ \t]*\n|\Z)",
    re.DOTALL,
)
_PUTTY_KEY = re.compile(r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[^\n]*|\n[ \t]*\n|\Z)",
                        re.DOTALL)
# scheme://user:password@host — the password is everything up to the last '@' of the authority.
_URL_PASSWORD = re.compile(
    r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/?#@\[\]]*:)(?P<secret>[^\s/?#]+)(?=@)")
_ANTHROPIC_KEY = re.compile(r"\bsk-ant-[A-Za-z0-9_-]{10,}")
_OPENAI_KEY = re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")
_GITHUB_TOKEN = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")
_BEARER = re.compile(
    r"(?P<keep>\b(?:Bearer|Authorization:\s*(?:Basic|Token))\s+)(?P<secret>[A-Za-z0-9._~+/=-]{12,})",
    re.IGNORECASE)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")

_SECRET_NAME = (r"[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|api_?key|apikey|"
                r"access_?key|auth_?key|private_?key|client_?key|(?:auth|access|refresh|api|"
                r"bearer|session|csrf)_?token|token_?secret|credentials?)[A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(
    rf"(?P<keep>(?<![A-Za-z0-9_]){_SECRET_NAME}[\"']?\s*(?P<op>:=|=>|=|:)\s*)"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s\"',;]+)(?P<rest>[^\n]*))",
    re.IGNORECASE,
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
        text: any text (a conversation transcript, a model's reply); runs in linear time, about
            tens of milliseconds for 48,000 characters (``tests/test_redact.py`` measures it).

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

    text = _PRIVATE_KEY.sub(lambda m: note("private-key"), text)
    text = _PUTTY_KEY.sub(lambda m: note("private-key"), text)
    text = _URL_PASSWORD.sub(lambda m: _keep_or_mark(m, "url-password", note), text)
    text = _BEARER.sub(lambda m: _keep_or_mark(m, "bearer-token", note), text)
    text = _ANTHROPIC_KEY.sub(lambda m: note("anthropic-key"), text)
    text = _OPENAI_KEY.sub(lambda m: note("openai-key"), text)
    text = _GITHUB_TOKEN.sub(lambda m: note("github-token"), text)
    text = _AWS_KEY_ID.sub(lambda m: note("aws-key"), text)
    text = _JWT.sub(lambda m: note("jwt"), text)
    text = _ASSIGNMENT.sub(lambda m: _redact_assignment(m, note), text)
    text = "\n".join(_redact_line_with_library(line, note) for line in text.split("\n"))
    return text, tuple(findings)


def _keep_or_mark(match: re.Match[str], kind: str, note: Callable[[str], str]) -> str:
    secret = match.group("secret")
    if MARKER.fullmatch(secret) or secret.startswith("[REDACTED"):
        return match.group(0)
    return match.group("keep") + note(kind)


def _redact_assignment(match: re.Match[str], note: Callable[[str], str]) -> str:
    """``password = "x"`` / ``API_KEY=x`` / ``password: x`` (the last only at the end of a
    line, so prose such as "Secrets: stored in the keyring" is left alone)."""
    keep = match.group("keep")
    for quote, group in (('"', "dq"), ("'", "sq")):
        value = match.group(group)
        if value is not None:
            if _looks_like_value(value, quoted=True):
                return f"{keep}{quote}{note('password-assignment')}{quote}"
            return match.group(0)
    value, rest = match.group("bare"), match.group("rest")
    if match.group("op") == ":" and rest.strip() and not rest.lstrip().startswith("#"):
        return match.group(0)
    if not _looks_like_value(value, quoted=False):
        return match.group(0)
    return f"{keep}{note('password-assignment')}{rest}"


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
def _detectors() -> tuple[Any, ...]:
    """One instance of every detect-secrets detector Yak uses (built once, read-only after)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    classes = get_mapping_from_secret_type_to_class().values()
    return tuple(cls() for cls in sorted(classes, key=lambda c: c.__name__)
                 if cls.__name__ not in _SKIPPED_DETECTORS)


@functools.cache
def _library_filters() -> tuple[Callable[[str], bool], ...]:
    from detect_secrets.filters import heuristic

    return (heuristic.is_sequential_string, heuristic.is_potential_uuid,
            heuristic.is_templated_secret, heuristic.is_prefixed_with_dollar_sign)


def _library_findings(line: str) -> Iterator[tuple[str, str]]:
    """``(kind, secret)`` pairs the library finds in one line."""
    for detector in _detectors():
        for secret in detector.analyze_string(line):
            if not secret or len(secret.strip()) < 3:
                continue
            limit = getattr(detector, "entropy_limit", None)
            if limit is not None and detector.calculate_shannon_entropy(secret) <= limit:
                continue
            if any(check(secret) for check in _library_filters()):
                continue
            yield _kind(detector.secret_type), secret


def _kind(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def _redact_line_with_library(line: str, note: Callable[[str], str]) -> str:
    if len(line.strip()) < 8:
        return line
    for kind, secret in list(_library_findings(line)):
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
