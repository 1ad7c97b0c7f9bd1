"""The ``detect-secrets`` pass of secret redaction (``yak.memory.redaction.scan``, step 3, last):
the library's detectors for the services Yak's own patterns do not cover, run only on windows around
a line's long tokens and keywords, each only when a literal its patterns need is in the window.

The detectors are instantiated directly instead of through the library's global settings, so
redaction is safe to run from several threads. The library is imported on first use (it takes a
few hundred milliseconds): importing this module costs nothing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from yak.memory.redaction.gates import Gates, alternation
from yak.memory.redaction.patterns import AWS_KEY_GATES, MARKER, Note
from yak.memory.redaction.values import token_like

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin


# --- 3f. The library ------------------------------------------------------------------------

# detect-secrets detectors that would redact information rather than secrets in a project
# memory, or that Yak's own passes cover whole (PrivateKeyDetector only sees a header line).
_SKIPPED_DETECTORS = {"HexHighEntropyString", "IPPublicDetector", "PrivateKeyDetector"}
# Characters that make up a token: a detector's partial match is widened over these.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+/=~")
_LONG_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,}")
_KEYWORD = re.compile(alternation(("key", "pass", "pwd", "secret", "token", "contrase", "://")))
_BEFORE = 80  # characters before a token that an assignment pattern may need (prefix, keyword)
_AFTER_KEYWORD = 400  # characters after a keyword that a quoted value may span


# When a detector can match: a literal its patterns need in the window (``lower`` entries are
# looked for in the lower-cased window, ``exact`` ones as written). Running every detector on
# every window costs ~100 us a line; most windows need one or two. A detector not listed here
# (a newer library version's) runs on every window.
_DETECTOR_GATES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # name: (lower, exact)
    "ArtifactoryDetector": ((), ("AKC", "AP")),
    "AWSKeyDetector": (("aws",) + AWS_KEY_GATES, ()),
    "AzureStorageKeyDetector": ((), ("AccountKey=",)),
    "BasicAuthDetector": (("://",), ()),
    "CloudantDetector": (("cl",), ()),
    "DiscordBotTokenDetector": ((), (".",)),
    "GitHubTokenDetector": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ()),
    "GitLabTokenDetector": (("gl", "gr1348941"), ()),
    "IbmCloudIamDetector": (("iam",), ()),
    "IbmCosHmacDetector": (("secret",), ()),
    "JwtTokenDetector": (("eyj",), ()),
    "Base64HighEntropyString": ((), ('"', "'")),  # quoted strings only
    "MailchimpDetector": (("-us",), ()),
    "NpmDetector": (("_authtoken",), ()),
    "OpenAIDetector": ((), ("T3BlbkFJ",)),
    "PypiTokenDetector": (("pypi-",), ()),
    "SendGridDetector": ((), ("SG.",)),
    "SlackDetector": (("xox", "hooks.slack.com"), ()),
    "SoftlayerDetector": (("sl",), ()),
    "SquareOAuthDetector": (("sq0csp-",), ()),
    "StripeDetector": (("k_live_",), ()),
    "TelegramBotTokenDetector": ((), (":",)),
    "TwilioKeyDetector": ((), ("AC", "SK")),
}
# The keyword detector (~100 us a window) wants a quoted value beside an operator
# (``password == "x"``, ``"x" != secret``, ``passwd("x")``, ``key "x";``) that is not a marker.
_KEYWORD_DETECTOR_GATE = re.compile(r"[!=:(]\s*@?[\"'`](?!\[REDACTED)|[\"'`]\s*[!=]=|[\"'`];")
# Detectors that need a secret word or a URL in the window; the others need a long token.
_KEYWORD_DETECTORS = frozenset({"KeywordDetector", "BasicAuthDetector"})


class _Plan(NamedTuple):
    """The detectors Yak uses, built once and read-only after (safe across threads)."""

    detectors: tuple[BasePlugin, ...]
    lower: Gates  # the lower-case literals of _DETECTOR_GATES, indexed like ``detectors``
    exact: Gates  # the as-written ones
    ungated: frozenset[int]  # detectors with no gate: run on every window of their kind
    # The high-entropy-string detectors by index: their findings must pass the entropy limit.
    high_entropy: dict[int, HighEntropyStringsPlugin]
    filters: tuple[Callable[[str], bool], ...]  # a finding any of these accepts is no secret


@functools.cache
def _plan() -> _Plan:
    """Import the library (a few hundred milliseconds, on the first line worth its detectors)
    and build one instance of every detector Yak uses."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin

    # The library's annotation binds a type variable to nothing; every value is a plugin class.
    classes: Iterable[type[BasePlugin]] = get_mapping_from_secret_type_to_class().values()
    detectors = tuple(
        cls()
        for cls in sorted(classes, key=lambda c: c.__name__)
        if cls.__name__ not in _SKIPPED_DETECTORS
    )
    names = [type(detector).__name__ for detector in detectors]
    # The keyword detector's gate is a pattern, not literals: see _library_findings.
    return _Plan(
        detectors,
        lower=Gates([_DETECTOR_GATES.get(name, ((), ()))[0] for name in names]),
        exact=Gates([_DETECTOR_GATES.get(name, ((), ()))[1] for name in names]),
        ungated=frozenset(i for i, name in enumerate(names) if name not in _DETECTOR_GATES),
        high_entropy={
            i: d for i, d in enumerate(detectors) if isinstance(d, HighEntropyStringsPlugin)
        },
        filters=(
            heuristic.is_sequential_string,
            heuristic.is_potential_uuid,
            heuristic.is_templated_secret,
            heuristic.is_prefixed_with_dollar_sign,
        ),
    )


def _library_findings(window: str, *, keyword: bool, token: bool) -> Iterator[tuple[str, str]]:
    """``(kind, secret)`` pairs the library finds in one window of a line (one around a
    secret word or URL when ``keyword``, around a long token when ``token``)."""
    plan = _plan()
    chosen = plan.lower.present(window.lower()) | plan.exact.present(window) | plan.ungated
    for index in sorted(chosen):
        detector, entropic = plan.detectors[index], plan.high_entropy.get(index)
        name = type(detector).__name__
        if not (keyword if name in _KEYWORD_DETECTORS else token):
            continue
        if name == "KeywordDetector" and not _KEYWORD_DETECTOR_GATE.search(window):
            continue
        for secret in detector.analyze_string(window):
            if not secret or len(secret.strip()) < 3:
                continue
            if (
                entropic is not None
                and entropic.calculate_shannon_entropy(secret) <= entropic.entropy_limit
            ):
                continue
            if any(check(secret) for check in plan.filters):
                continue
            yield _kind(detector.secret_type), secret


def _kind(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def _windows(line: str) -> list[tuple[int, int, bool, bool]]:
    """Merged ``(start, end, has_keyword, has_token)`` windows of ``line`` worth giving to the
    library detectors: around a long token (keys and tokens are long runs of letters and
    digits) or a secret-sounding keyword or URL (the keyword and basic-auth detectors)."""
    found: list[tuple[int, int, bool, bool]] = []
    for match in _LONG_TOKEN.finditer(line):
        if token_like(match.group(0)):
            start, end = max(match.start() - _BEFORE, 0), min(match.end() + 3, len(line))
            found.append((start, end, False, True))
    lowered = line.lower()
    if len(lowered) == len(line):
        for match in _KEYWORD.finditer(lowered):
            end = min(match.end() + _AFTER_KEYWORD, len(line))
            found.append((max(match.start() - 40, 0), end, True, False))
    elif _KEYWORD.search(lowered):
        found.append((0, len(line), True, False))
    found.sort()
    merged: list[tuple[int, int, bool, bool]] = []
    for start, end, keyword, token in found:
        if merged and start <= merged[-1][1]:
            last_start, last_end, last_keyword, last_token = merged[-1]
            merged[-1] = (
                last_start,
                max(last_end, end),
                last_keyword or keyword,
                last_token or token,
            )
        else:
            merged.append((start, end, keyword, token))
    return merged


def redact_line_with_library(line: str, note: Note) -> str:
    """What the library's detectors find in ``line``, redacted (whole tokens)."""
    if len(line) < 8:
        return line
    # Nothing for the detectors without a long token, a quoted value beside an operator (the
    # keyword detector) or a URL (basic auth): most lines stop here.
    if (
        _LONG_TOKEN.search(line) is None
        and "://" not in line
        and _KEYWORD_DETECTOR_GATE.search(line) is None
    ):
        return line
    findings = [
        found
        for start, end, keyword, token in _windows(line)
        for found in _library_findings(line[start:end], keyword=keyword, token=token)
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
