"""Redact secrets from text before it reaches the model or the memory document.

Every credential on a line is redacted on its own (two assignments, both halves of a key pair, a
token in a URL query and a service token beside it), not only the first one.

How the text is scanned (docs/architecture.md, "Secret redaction"):

1. Private key blocks (multi-line) are replaced over the whole text; one substring test decides
   whether that pass runs at all.
2. Two scans of the whole text find the lines that could hold a credential: one search of the
   lower-cased text for secret-sounding words, URLs and a few hints (a prefix tree of literals,
   which Python's engine skips through fast), and one byte translation that finds the runs of
   16 or more token characters that look like a key (``_token_like``: a digit, or mixed case,
   but not a commit hash, a UUID or a long name made of words). Every other line is kept as it
   is without further work: ordinary conversation costs these two scans only.
3. Each candidate line goes through, in order: bearer and basic headers; Yak's own token shapes
   (each run only when one of its literal prefixes is on the line: Anthropic, OpenAI, GitHub,
   AWS, Hugging Face, npm, Google, Stripe test keys, Sentry, DigitalOcean, Shopify, Docker Hub,
   Linear, Notion, JSON Web Tokens …, the services ``detect-secrets`` does not know or only
   half-knows); passwords in URLs and Sentry DSN keys; secret-named URL query parameters;
   secret-named assignments (``DB_PASS=…``, ``export API_TOKEN=…``, ``password: …``, JSON and
   YAML keys), found from their operators; an AWS secret access key beside its key id; prose
   ("the staging DB password is …", "pw: …", "password for the admin account: …"), found from
   its words; command-line flags (``--password …``, ``curl -u user:pw``); then the detectors of
   ``detect-secrets`` (a maintained library) for everything else it knows (Slack, Stripe live
   keys, GitLab, SendGrid, Twilio, PyPI, Discord, Telegram, Mailchimp, quoted high-entropy
   strings, quoted values beside a secret word …), run only on windows around the line's
   long tokens and keywords, and each only when a literal its patterns need is in the window
   (``_DETECTOR_GATES``). A detector sometimes yields part of a token; the match is widened to
   the whole token so no half-secret is left.

The detectors are instantiated directly instead of through ``detect-secrets``' global settings,
so redaction is safe to run from several threads. Hex, IP-address and private-key-header
detectors are not used: in a project's memory a commit hash or a server address is information,
and private key blocks are replaced whole by step 1.

Left alone on purpose: Stripe publishable keys (``pk_live_…``, public by design), names and
references (``os.environ['API_KEY']``, ``api_key: str``, ``password = request.form[…]``), numbers
(``TOKEN_TTL=3600``, ``KEY_LENGTH = 32``: a number is a setting, not a credential), words after a
secret word in prose ("the password field is validated on blur"), commit hashes and UUIDs.

Replacements read ``[REDACTED:url-password]``; the findings are short flags such as
``redacted:url_password`` and never contain the secret. Redacting already-redacted text changes
nothing and reports nothing, so a reply that repeats a marker is not flagged again.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin

MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

Note = Callable[[str], str]


_Trie = dict[str, "_Trie"]


def _alternation(words: Iterable[str]) -> str:
    """A regular expression matching any of ``words``, factored into a prefix tree
    (``p(?:ass|wd?)``): Python's engine tries every alternative of a flat ``a|b|c`` at every
    position, while a tree's first characters let it skip most positions at once."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        branches = [re.escape(char) + emit(node[char]) for char in sorted(node) if char]
        if not branches:
            return ""
        if len(branches) == 1 and "" not in node:
            return branches[0]
        group = "(?:" + "|".join(branches) + ")"
        return group + "?" if "" in node else group

    return emit(trie)


class _Gates:
    """Which of several groups of literals occur in a text, found with one search.

    ``present(text)`` gives the indexes of the groups one of whose literals is in ``text``.
    The search looks for a literal starting at every position (a look-ahead, so a literal
    inside another is found too); where several start at one position the prefix tree reports
    the longest, so each literal also stands for the groups of every literal it begins with.
    A long text (a pasted blob, where the literals recur thousands of times) is checked one
    literal at a time instead.
    """

    def __init__(self, groups: Sequence[Iterable[str]]) -> None:
        owners: dict[str, set[int]] = {}
        for index, group in enumerate(groups):
            for literal in group:
                owners.setdefault(literal, set()).add(index)
        self.any = re.compile(_alternation(owners))  # whether one is there at all: faster
        self._pattern = re.compile("(?=(" + _alternation(owners) + "))")
        self._owners = owners
        self._groups = {
            literal: frozenset(
                index for prefix in owners if literal.startswith(prefix) for index in owners[prefix]
            )
            for literal in owners
        }

    def present(self, text: str) -> set[int]:
        found: set[int] = set()
        if self.any.search(text) is None:
            return found
        if len(text) > 2_000:
            for literal, indexes in self._owners.items():
                if literal in text:
                    found |= indexes
            return found
        for match in self._pattern.finditer(text):
            found |= self._groups[match.group(1)]
        return found


# --- 1. Multi-line blocks -------------------------------------------------------------------

_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\n[ \t]*\n|\Z)",
    re.DOTALL,
)
_PUTTY_KEY = re.compile(
    r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[^\n]*|\n[ \t]*\n|\Z)", re.DOTALL
)

# --- 2. Candidate lines ---------------------------------------------------------------------

# What makes a line worth a closer look, searched in the lower-cased text: a hint on its own (a
# URL, a header, an AWS mention, a command-line flag), a secret-sounding word with an operator
# after it on the line (``:``, ``=``, ``(``, "is", "was", an arrow, a quote then ``;``: every
# word-based rule needs one: ``DB_PASS=…``, "the password is …", ``passwd("…")``,
# ``$password "…";``), or a quoted value compared
# (``"…" == password``). Token-shaped secrets need none of these: the long-token scan finds
# their lines. One prefix tree of all the literals is searched (no look-behind, no word
# boundary, no operator in the same expression: each makes the scan several times slower), and
# the operator looked for only after a word found.
_HINTS = frozenset(
    {"://", "bearer", "authorization", "aws", "-u ", "-u\t", "--user", "-pass", "-pwd"}
    | {"-token", "-api", "-secret", "-auth", "-access", "sshpass", "mysql", "machine "}
)
_SECRET_WORDS = frozenset(
    {"pass", "pwd", "pw", "secret", "key", "token", "auth", "cred", "contrase", "sig"}
    | {"session", "cookie"}
)
_GATE = re.compile(_alternation(_HINTS | _SECRET_WORDS).encode())
_HINT_GATE = re.compile(_alternation(_HINTS).encode())
_OPERATOR_AFTER = re.compile(rb"[:=(]|\bis\b|\bwas\b|->|[\"'`][^\n]*;|" + "\u2192".encode())
_COMPARED = re.compile(rb"""["'`][ \t]*[!=]=""")
# Bytes that make up a token, for the long-token scan (every other byte becomes a space).
_TOKEN_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_TO_RUNS = bytes.maketrans(
    bytes(range(256)),
    bytes(ord("a") if byte in _TOKEN_BYTES else ord(" ") for byte in range(256)),
)
_RUN = b"a" * 16
_HEX_RUN = re.compile(r"[0-9a-f-]+")


_LONG_PIECE = re.compile(r"[^_-]{16}")


def _token_like(run: str) -> bool:
    """Whether a run of 16 or more letters, digits, ``_`` and ``-`` may be a key or token: it
    has a digit (but is not only lower-case hex and dashes, as a commit hash or a UUID is), or
    has 24 characters in mixed case or with 16 between separators. A long name made of words
    (``test_every_line_is_kept``, ``QT_QPA_PLATFORM``) is not one."""
    if any(char.isdigit() for char in run):
        return _HEX_RUN.fullmatch(run) is None
    if len(run) < 24:
        return False
    return (not run.islower() and not run.isupper()) or _LONG_PIECE.search(run) is not None


# --- 3a. Token shapes (Yak's own, one combined expression) ----------------------------------

_AWS_KEY_ID = r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA|A3T[A-Z0-9])[0-9A-Z]{16}"
_AWS_KEY_GATES = (
    "akia",
    "asia",
    "abia",
    "acca",
    "agpa",
    "aida",
    "aroa",
    "anpa",
    "anva",
    "apka",
    "a3t",
)
# (kind, pattern, lower-case literals one of which every match contains). Each runs only on a
# line holding one of its literals (one combined search finds whether any is there); a
# combined expression of the patterns themselves costs ~200 us a line, as every alternative
# is tried at every position.
_TOKEN_SHAPES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (kind, re.compile(pattern), gates)
    for kind, pattern, gates in (
        ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{10,}", ("sk-ant-",)),
        ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", ("sk-",)),
        (
            "github-token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        ),
        ("aws-key", rf"\b{_AWS_KEY_ID}\b", _AWS_KEY_GATES),
        ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", ("eyj",)),
        ("huggingface-token", r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}\b", ("hf_", "api_org_")),
        ("npm-token", r"\bnpm_[A-Za-z0-9]{36,}\b", ("npm_",)),
        ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", ("aiza",)),
        (
            "google-oauth",
            r"\b(?:GOCSPX-[A-Za-z0-9_-]{24,}|ya29\.[0-9A-Za-z_-]{20,})",
            ("gocspx-", "ya29."),
        ),
        (
            "stripe-access-key",
            r"\b(?:sk|rk)_test_[0-9a-zA-Z]{24,}\b|\bwhsec_[A-Za-z0-9]{32,}\b",
            ("k_test_", "whsec_"),
        ),
        ("slack-token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+\b", ("xapp-",)),
        ("sentry-token", r"\bsntry[su]_[A-Za-z0-9+/=_-]{30,}", ("sntry",)),
        ("digitalocean-token", r"\bdo[por]_v1_[a-f0-9]{64}\b", ("_v1_",)),
        ("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", ("shp",)),
        ("pypi-token", r"\bpypi-[A-Za-z0-9_-]{50,}", ("pypi-",)),
        ("docker-hub-token", r"\bdckr_pat_[A-Za-z0-9_-]{27,}", ("dckr_pat_",)),
        ("linear-api-key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40,}\b", ("lin_",)),
        (
            "notion-token",
            r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b",
            ("secret_", "ntn_"),
        ),
        ("atlassian-token", r"\bATATT3[A-Za-z0-9_=-]{30,}", ("atatt3",)),
        ("supabase-token", r"\bsbp_[a-f0-9]{40}\b", ("sbp_",)),
        (
            "grafana-token",
            r"\b(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,})",
            ("glsa_", "glc_"),
        ),
        ("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", ("dapi",)),
        ("newrelic-key", r"\bNRAK-[A-Z0-9]{27}\b", ("nrak-",)),
        ("postman-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", ("pmak-",)),
        ("age-secret-key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", ("age-secret-key-",)),
        ("pulumi-token", r"\bpul-[a-f0-9]{40}\b", ("pul-",)),
        (
            "doppler-token",
            r"\bdp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9_.-]{40,}",
            ("dp.",),
        ),
        (
            "terraform-token",
            r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
            (".atlasv1.",),
        ),
        ("mailgun-key", r"\bkey-[0-9a-f]{32}\b", ("key-",)),
    )
)
_TOKEN_GATES = _Gates([gates for _, _, gates in _TOKEN_SHAPES])

# --- 3b. Keep-the-prefix shapes -------------------------------------------------------------

# A Sentry DSN: https://<32 hex key>[:<32 hex secret>]@o1.ingest.sentry.io/2
_SENTRY_DSN = re.compile(r"(?P<keep>\bhttps?://)(?P<secret>[0-9a-f]{32}(?::[0-9a-f]{32})?)(?=@)")
# scheme://user:password@host — the password is everything up to the last '@' of the authority.
_URL_PASSWORD = re.compile(
    r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/?#@\[\]]*:)(?P<secret>[^\s/?#]+)(?=@)"
)
_BEARER = re.compile(
    r"(?P<keep>\b(?:Bearer|Authorization:\s*(?:Basic|Token))\s+)(?P<secret>[A-Za-z0-9._~+/=-]{12,})",
    re.IGNORECASE,
)
# ?token=…, &api_key=…, &sig=…: the name is checked by _QUERY_NAME_PARTS, the value by
# _looks_random.
_QUERY = re.compile(r"(?P<keep>[?&;](?P<name>[A-Za-z0-9_.\-]{1,40})=)(?P<secret>[^&#\s\"'<>]+)")
_QUERY_NAME_PARTS = frozenset(
    {
        "token",
        "key",
        "secret",
        "sig",
        "signature",
        "password",
        "passwd",
        "pwd",
        "pass",
        "auth",
        "apikey",
        "credential",
        "credentials",
        "accesstoken",
        "apitoken",
        "sessionid",
        "session",
        "code",
    }
)

# --- 3c. Secret-named assignments -----------------------------------------------------------

# A name containing one of these is secret-named wherever it appears in the name.
_SECRET_WORD = re.compile(
    r"password|passwd|passphrase|pwd|secret|api_?key|apikey|access_?key|auth_?key|"
    r"private_?key|client_?key|(?:auth|access|refresh|api|bearer|session|csrf)_?token|"
    r"token_?secret|credentials?",
    re.IGNORECASE,
)
# A name whose last part is one of these is secret-named too (``DB_PASS``, ``HF_TOKEN``,
# ``STRIPE_KEY``); in lower or mixed case (``sort_key``, ``token``) only with a random-looking
# value, as code uses such names for ordinary things.
_SECRET_LAST_PARTS = frozenset(
    {
        "pass",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "token",
        "secret",
        "key",
        "apikey",
        "credential",
        "credentials",
        "auth",
        "pat",
        "session",
        "sessionid",
        "csrftoken",
        "cookie",
    }
)
# A name ending in one of these describes a secret rather than holding one (``KEY_LENGTH``,
# ``PASSWORD_MIN_LENGTH``, ``API_KEY_HEADER``, ``SECRET_KEY_FILE``).
_DESCRIBING_PARTS = frozenset(
    {
        "length",
        "len",
        "min",
        "max",
        "ttl",
        "timeout",
        "expiry",
        "expires",
        "age",
        "file",
        "path",
        "dir",
        "header",
        "name",
        "names",
        "field",
        "fields",
        "env",
        "var",
        "hint",
        "policy",
        "prompt",
        "label",
        "type",
        "size",
        "count",
        "format",
        "regex",
        "pattern",
        "rules",
        "reset",
        "prefix",
        "suffix",
        "id",
        "ids",
        "url",
        "endpoint",
        "version",
        "algorithm",
        "alg",
        "bits",
        "rotation",
        "days",
    }
)
# Every secret-named name contains one of these (the words of _SECRET_WORD and
# _SECRET_LAST_PARTS).
_NAME_HINT = re.compile(r"pass|pwd|secret|key|token|cred|auth|pat|session|cookie", re.IGNORECASE)
_SECRET_WORD_OR_PART = re.compile(r"pass|pwd|secret|key|token|credential|auth")
_NAME_PARTS = re.compile(r"[_.\-]+|(?<=[a-z])(?=[A-Z])")
# The assignments of a line are found from their operators (``:`` or ``=``), walking back to
# the name over these characters.
_OPERATOR = re.compile(r"[:=]")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_AFTER_NAME = re.compile(
    r"(?P<op_text>[\"']?[ \t]*(?P<op>:=|=>|=|:)[ \t]*)"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>(?:[^\s\"',;&]|&(?![A-Za-z_][\w.\-]*=))+))"
)
_END_OR_COMMENT = re.compile(r"\s*(?:#|$)")
_CODE_VALUE = re.compile(
    r"^(?:[$%{<(]|\[REDACTED)|[()\[\]]|^(?:none|null|nil|true|false|undefined|required|optional|"
    r"str|string|bytes|int|secretstr|env|environ|getenv|input|changeme|\*+|x+|\.+"
    r"|values?|secret|password|token|key|placeholder|example|dummy|redacted|hidden)$"
    r"|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$",
    re.IGNORECASE,
)

# --- 3d. AWS secret access key beside its key id --------------------------------------------

_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")

# --- 3e. Prose and command lines ------------------------------------------------------------

# "the staging DB password is hunter2x", "pw: X", "password for the admin account: X",
# "the token is X", "API key = X". The value is checked by _looks_random.
_PROSE = re.compile(
    r"(?P<keep>\b(?P<word>password|passwd|passphrase|pw|pwd|token|api[ _-]?key"
    r"|(?:secret|access)[ _-]?key|secret|key|credentials?)\b"
    r"(?:[ \t]+(?:for|of|to|on|in)[ \t]+[^:=\n]{1,40}?)?"
    r"(?:[ \t]*(?::|=|->|\u2192)|[ \t]+(?:is|was)\b)[ \t]*"
    r"(?:(?:now|still|(?:set|changed|reset|updated)[ \t]+to)[ \t]+)?)"
    r"(?P<secret>\"[^\"\n]{3,}\"|'[^'\n]{3,}'|`[^`\n]{3,}`|[^\s\"'`]+?)(?=[.,;:!?)]*(?:\s|$))",
    re.IGNORECASE,
)
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pw", "pwd"})
_PROSE_WORD = re.compile(
    r"\b(?:"
    + _alternation(
        ("password", "passwd", "passphrase", "pw", "pwd", "token", "api")
        + ("secret", "access", "key", "credential")
    )
    + ")"
)
_FLAG_GATE = re.compile(
    "-" + _alternation(("pass", "pwd", "token", "api", "secret", "auth", "access"))
)
_CLI_FLAG = re.compile(
    r"(?P<keep>(?<!\S)--?(?:password|passwd|pass|pwd|token|api-key|apikey|secret|auth-token"
    r"|access-token)(?:[ \t]+|=))(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"']+)",
    re.IGNORECASE,
)
# ``sshpass -p X``; ``mysql -pX`` (glued: ``mysql -p name`` asks for the password, ``name`` is
# the database).
_CLI_P = re.compile(
    r"(?P<keep>\bsshpass[ \t]+-p[ \t]*|\bmysql(?:dump|admin)?\b[^\n]*?[ \t]-p)"
    r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'-][^\s\"']*)"
)
# A .netrc entry: ``machine host login me password X``.
_NETRC = re.compile(
    r"(?P<keep>\bmachine[ \t]+\S+(?:[ \t]+login[ \t]+\S+)?[ \t]+password[ \t]+)(?P<secret>\S+)"
)
_CLI_USER = re.compile(
    r"(?P<keep>(?<!\S)(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:)(?P<secret>[^\s\"']+?)(?=[\"']?(?:\s|$))"
)
_RANDOM_SIGN = re.compile(r"[^A-Za-z_]")  # a digit or a symbol
# Words, names, numbers, dates, versions (``v1.2.3-rc1``) and ticket ids (``JIRA-1234``).
_WORDISH = re.compile(
    r"[a-z]+(?:[_-][a-z]+)*|[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+(?:_[A-Z]+)*|[\d.:/-]+"
    r"|v?\d+(?:\.\d+)+(?:[-+][A-Za-z0-9.]+)?|[A-Za-z]{1,12}-\d+"
)

# --- 3f. The library ------------------------------------------------------------------------

# detect-secrets detectors that would redact information rather than secrets in a project
# memory, or that Yak's own passes cover whole (PrivateKeyDetector only sees a header line).
_SKIPPED_DETECTORS = {"HexHighEntropyString", "IPPublicDetector", "PrivateKeyDetector"}
# Characters that make up a token: a detector's partial match is widened over these.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+/=~")
_LONG_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,}")
_KEYWORD = re.compile(_alternation(("key", "pass", "pwd", "secret", "token", "contrase", "://")))
_BEFORE = 80  # characters before a token that an assignment pattern may need (prefix, keyword)
_AFTER_KEYWORD = 400  # characters after a keyword that a quoted value may span


def redact(text: str) -> tuple[str, tuple[str, ...]]:
    """Replace every secret in ``text`` with a ``[REDACTED:<kind>]`` marker.

    Args:
        text: any text (a conversation transcript, a model's reply). About 2 ms per 60,000
            characters of ordinary prose; each line that needs a closer look (code, talk about
            keys, a credential) costs some tens of microseconds more
            (``benchmarks/bench_refresh.py`` measures both).

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

    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY.sub(lambda match: note("private-key"), text)
    if "PuTTY-User-Key-File" in text:
        text = _PUTTY_KEY.sub(lambda match: note("private-key"), text)
    encoded = text.encode("utf-8", "surrogatepass")
    pieces: list[bytes] = []
    last = 0
    for start, end in _candidate_lines(encoded):
        line = encoded[start:end].decode("utf-8", "surrogatepass")
        redacted = _redact_line(line, note)
        if redacted != line:
            pieces += [encoded[last:start], redacted.encode("utf-8", "surrogatepass")]
            last = end
    if not pieces:
        return text, tuple(findings)
    pieces.append(encoded[last:])
    return b"".join(pieces).decode("utf-8", "surrogatepass"), tuple(findings)


def _candidate_lines(encoded: bytes) -> list[tuple[int, int]]:
    """Sorted, distinct ``(start, end)`` byte spans of the lines that could hold a credential."""
    starts: set[int] = set()
    lowered = encoded.lower()
    match = _GATE.search(lowered)
    while match is not None:
        end = lowered.find(b"\n", match.end())
        if end == -1:
            end = len(lowered)
        if (
            match.group().decode() in _HINTS
            or _OPERATOR_AFTER.search(lowered, match.end(), end)
            # No operator after this word, so none after a later one: only a hint counts.
            or _HINT_GATE.search(lowered, match.end(), end)
        ):
            starts.add(lowered.rfind(b"\n", 0, match.start()) + 1)
        match = _GATE.search(lowered, end + 1)
    for match in _COMPARED.finditer(encoded):
        starts.add(encoded.rfind(b"\n", 0, match.start()) + 1)
    runs = encoded.translate(_TO_RUNS)
    hit = runs.find(_RUN)
    while hit != -1:
        end = runs.find(b" ", hit + 16)
        if end == -1:
            end = len(runs)
        if _token_like(encoded[hit:end].decode("ascii")):
            starts.add(encoded.rfind(b"\n", 0, hit) + 1)
            end = encoded.find(b"\n", end)  # the rest of this line is looked at anyway
            if end == -1:
                break
        hit = runs.find(_RUN, end)
    spans = []
    for start in sorted(starts):
        end = encoded.find(b"\n", start)
        spans.append((start, len(encoded) if end == -1 else end))
    return spans


def _redact_line(line: str, note: Note) -> str:
    """Every credential on one line (no newline in ``line``) replaced by its marker."""
    original, lowered = line, line.lower()
    if "bearer" in lowered or "authorization" in lowered:
        line = _BEARER.sub(functools.partial(_keep_or_mark, kind="bearer-token", note=note), line)
    for index in sorted(_TOKEN_GATES.present(lowered)):  # in table order: the first kind wins
        kind, pattern, _ = _TOKEN_SHAPES[index]
        line = pattern.sub(functools.partial(_mark, kind=kind, note=note), line)
    if "://" in line:
        line = _SENTRY_DSN.sub(functools.partial(_keep_or_mark, kind="sentry-dsn", note=note), line)
        line = _URL_PASSWORD.sub(
            functools.partial(_keep_or_mark, kind="url-password", note=note), line
        )
    if "=" in line and ("?" in line or "&" in line):
        line = _QUERY.sub(functools.partial(_query_value, note=note), line)
    line = _redact_assignments(line, note)
    if "[REDACTED:aws-key]" in line or "aws" in lowered:
        line = _AWS_SECRET.sub(functools.partial(_aws_secret, note=note), line)
    line = _redact_prose(line, note)
    if line is not original:
        lowered = line.lower()
    if _FLAG_GATE.search(lowered):
        line = _CLI_FLAG.sub(functools.partial(_flag_value, note=note), line)
    if "-u" in line or "--user" in line:
        line = _CLI_USER.sub(functools.partial(_flag_value, note=note), line)
    if "machine" in lowered:
        line = _NETRC.sub(functools.partial(_flag_value, note=note), line)
    if "sshpass" in lowered or "mysql" in lowered:
        line = _CLI_P.sub(functools.partial(_flag_value, note=note), line)
    return _redact_line_with_library(line, note)


def _redact_prose(line: str, note: Note) -> str:
    """Credentials after a secret word in a sentence (see :func:`_prose_value`). The words are
    found in the lower-cased line first and the full pattern tried only there: scanning with
    the case-insensitive pattern costs several times more."""
    lowered = line.lower()
    if len(lowered) != len(line):  # a character whose lower case is longer: scan the slow way
        return _PROSE.sub(functools.partial(_prose_value, note=note), line)
    pieces: list[str] = []
    last = 0
    for word in _PROSE_WORD.finditer(lowered):
        if word.start() < last:
            continue
        match = _PROSE.match(line, word.start())
        if match is None:
            continue
        pieces += [line[last : match.start()], _prose_value(match, note)]
        last = match.end()
    if not pieces:
        return line
    pieces.append(line[last:])
    return "".join(pieces)


def _mark(match: re.Match[str], kind: str, note: Note) -> str:
    """The marker for the whole match."""
    return note(kind)


def _keep_or_mark(match: re.Match[str], kind: str, note: Note) -> str:
    """The match's ``keep`` group, then the marker for its ``secret`` group (unless that is
    already a marker)."""
    secret = match.group("secret")
    if secret.startswith("[REDACTED"):
        return match.group(0)
    return match.group("keep") + note(kind)


def _query_value(match: re.Match[str], note: Note) -> str:
    """A secret-named URL query parameter's value (``?token=…``, ``&X-Amz-Signature=…``)."""
    parts = set(_NAME_PARTS.split(match.group("name").lower()))
    if not parts & _QUERY_NAME_PARTS or not _looks_random(match.group("secret")):
        return match.group(0)
    return match.group("keep") + note("url-secret")


def _aws_secret(match: re.Match[str], note: Note) -> str:
    """A 40-character AWS secret access key on a line with a key id or the word ``aws``; a
    value of one case only (a lower-case commit hash) is not one."""
    value = match.group(0)
    if value.lower() == value or value.upper() == value:
        return value
    return note("aws-secret-key")


def _prose_value(match: re.Match[str], note: Note) -> str:
    """A credential after a secret word in a sentence: a random-looking word, or after a
    password word anything quoted ("the wifi password is "purple monkey dishwasher"")."""
    secret = match.group("secret")
    quoted = secret[0] in "\"'`"
    inner = secret[1:-1] if quoted else secret
    if _CODE_VALUE.search(inner) or not _looks_like_value(inner, quoted=quoted):
        return match.group(0)
    password_word = match.group("word").lower() in _PASSWORD_WORDS
    if not (quoted and password_word) and not _looks_random(inner):
        return match.group(0)
    if quoted:
        return f"{match.group('keep')}{secret[0]}{note('password-prose')}{secret[0]}"
    return match.group("keep") + note("password-prose")


def _flag_value(match: re.Match[str], note: Note) -> str:
    """``--password X``, ``--token=X``, ``curl -u user:X``."""
    secret = match.group("secret")
    inner = secret[1:-1] if secret[0] in "\"'" else secret
    if secret.startswith("-") or not _looks_like_value(inner, quoted=inner is not secret):
        return match.group(0)
    if "`" in inner:  # ``--password X``: a placeholder in quoted code
        return match.group(0)
    if _CODE_VALUE.search(inner):
        return match.group(0)
    if inner is secret:
        return match.group("keep") + note("password-flag")
    return f"{match.group('keep')}{secret[0]}{note('password-flag')}{secret[0]}"


def _redact_assignments(line: str, note: Note) -> str:
    """Redact the values of secret-named assignments (see :func:`_redact_assignment`); each
    assignment on the line on its own."""
    pieces: list[str] = []
    last = 0
    for operator in _OPERATOR.finditer(line):
        # Walk back from the operator over blanks, a closing quote, then the name.
        end = operator.start()
        while end > last and line[end - 1] in " \t":
            end -= 1
        if end > last and line[end - 1] in "\"'":
            end -= 1
        start = end
        while start > last and line[start - 1] in _NAME_CHARS:
            start -= 1
        name = line[start:end]
        if not name or not name[0].isalpha() and name[0] not in "_.-":
            continue
        strength = _secret_name(name)
        if strength is None:
            continue
        after = _AFTER_NAME.match(line, end)
        if after is None:
            continue
        replaced = _redact_assignment(name, after, line, strength, note)
        if replaced is None:
            continue
        pieces += [line[last:start], replaced]
        last = after.end()
    if not pieces:
        return line
    pieces.append(line[last:])
    return "".join(pieces)


def _secret_name(name: str) -> str | None:
    """``"strong"`` for a name that says it holds a secret (``DB_PASSWORD``, ``api_key``),
    ``"caps"`` for an environment-style name ending in a secret word (``DB_PASS``, ``HF_TOKEN``:
    any value without spaces), ``"weak"`` for one that may (``token``, ``sort_key``: the value
    must then look random), ``None`` otherwise (``KEY_LENGTH``, ``max_tokens``)."""
    if _NAME_HINT.search(name) is None:  # most names (``user``, ``def``): nothing to split
        return None
    parts = [part for part in _NAME_PARTS.split(name) if part]
    if not parts or parts[-1].lower() in _DESCRIBING_PARTS:
        return None
    if _SECRET_WORD.search(name):
        return "strong"
    if parts[-1].lower() in _SECRET_LAST_PARTS:
        return "caps" if name.isupper() else "weak"
    return None


def _redact_assignment(
    name: str, match: re.Match[str], line: str, strength: str, note: Note
) -> str | None:
    """``password = "x"`` / ``API_KEY=x`` / ``password: x`` (the last only at the end of a
    line or before a comment, so prose such as "Secrets: stored in the keyring" is left to the
    prose rule, which wants a random-looking value). ``None`` when the value is not a secret."""
    keep = name + match.group("op_text")
    for quote, group in (('"', "dq"), ("'", "sq")):
        value = match.group(group)
        if value is not None:
            if not _looks_like_value(value, quoted=True) or _is_label(name, value):
                return None
            if strength != "strong" and any(char.isspace() for char in value.strip()):
                return None  # NO_KEY = "No API key is set.": a sentence, not a key
            if strength == "weak" and not _looks_random(value):
                return None
            return f"{keep}{quote}{note('password-assignment')}{quote}"
    value = match.group("bare")
    if match.group("op") == ":" and not _END_OR_COMMENT.match(line, match.end()):
        return None
    if match.group("op") == ":" and not _looks_like_credential(value):
        return None  # prose: "the secret: noted."
    if not _looks_like_value(value, quoted=False) or _is_reference(name, value):
        return None
    if strength == "weak" and not _looks_random(value):
        return None
    return keep + note("password-assignment")


def _is_label(name: str, value: str) -> bool:
    """A value that spells its own name (``ALLOW_SESSION = "allow_session"``, ``TOKEN =
    "token"``): a constant's label, not a secret."""
    spelled = value.lower().replace("-", "_")
    return spelled == name.lower().lstrip("-.") or name.lower().endswith("_" + spelled)


def _is_reference(name: str, value: str) -> bool:
    """An unquoted value that names a variable rather than holding a secret: the name itself
    (``api_key=api_key`` in a call) or a lower-case ``snake_case`` name with a secret word in it
    (``token=auth_token``)."""
    if _is_label(name, value):
        return True
    return (
        value == value.lower() and "_" in value and _SECRET_WORD_OR_PART.search(value) is not None
    )


def _looks_like_credential(value: str) -> bool:
    """An unquoted value after ``name:`` in prose is a credential only if it does not read as
    a word: it has a digit or a symbol, or is long (``hunter2``, ``s3cr3t!``, a random token),
    whereas ``noted.`` or ``unknown`` are words."""
    word = value.strip().rstrip(".,;!?)")
    return len(word) >= 16 or any(not char.isalpha() for char in word)


def _looks_random(value: str) -> bool:
    """A value that reads as a credential rather than a word, a name or a number: at least six
    characters with a digit or a symbol (or 16 in mixed case), and not a plain word
    (``validated``, ``created_at``, ``CamelCase``, ``ALL_CAPS``), an identifier without digits
    (``_ProviderT``), a path, or a number or date (``3600``, ``2024-01-01``)."""
    stripped = value.strip()
    if len(stripped) < 6 or stripped.startswith(("/", "~", "./", "../", "[REDACTED")):
        return False
    if _WORDISH.fullmatch(stripped):
        return False
    if _RANDOM_SIGN.search(stripped):
        return True
    return len(stripped) >= 16 and not stripped.islower() and not stripped.isupper()


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


# --- The library ------------------------------------------------------------------------------


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


# When a detector can match: a literal its patterns need in the window (``lower`` entries are
# looked for in the lower-cased window, ``exact`` ones as written). Running every detector on
# every window costs ~100 us a line; most windows need one or two. A detector not listed here
# (a newer library version's) runs on every window.
_DETECTOR_GATES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # name: (lower, exact)
    "ArtifactoryDetector": ((), ("AKC", "AP")),
    "AWSKeyDetector": (("aws",) + _AWS_KEY_GATES, ()),
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


@functools.cache
def _detector_plan() -> tuple[tuple[BasePlugin, ...], _Gates, _Gates, frozenset[int]]:
    """``(detectors, lower_gates, exact_gates, ungated)``: the detectors Yak uses, the literals
    of :data:`_DETECTOR_GATES` indexed like them (lower-case and as-written literals), and the
    indexes of the detectors with no gate (run on every window of their kind)."""
    detectors = _detectors()
    names = [type(detector).__name__ for detector in detectors]
    lower = _Gates([_DETECTOR_GATES.get(name, ((), ()))[0] for name in names])
    exact = _Gates([_DETECTOR_GATES.get(name, ((), ()))[1] for name in names])
    # The keyword detector's gate is a pattern, not literals: see _library_findings.
    ungated = frozenset(index for index, name in enumerate(names) if name not in _DETECTOR_GATES)
    return detectors, lower, exact, ungated


@functools.cache
def _library_filters() -> tuple[Callable[[str], bool], ...]:
    from detect_secrets.filters import heuristic

    return (
        heuristic.is_sequential_string,
        heuristic.is_potential_uuid,
        heuristic.is_templated_secret,
        heuristic.is_prefixed_with_dollar_sign,
    )


def _library_findings(window: str, *, keyword: bool, token: bool) -> Iterator[tuple[str, str]]:
    """``(kind, secret)`` pairs the library finds in one window of a line (one around a
    secret word or URL when ``keyword``, around a long token when ``token``)."""
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin

    detectors, lower, exact, ungated = _detector_plan()
    chosen = lower.present(window.lower()) | exact.present(window) | ungated
    for index in sorted(chosen):
        detector = detectors[index]
        name = type(detector).__name__
        if not (keyword if name in _KEYWORD_DETECTORS else token):
            continue
        if name == "KeywordDetector" and not _KEYWORD_DETECTOR_GATE.search(window):
            continue
        for secret in detector.analyze_string(window):
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


def _windows(line: str) -> list[tuple[int, int, bool, bool]]:
    """Merged ``(start, end, has_keyword, has_token)`` windows of ``line`` worth giving to the
    library detectors: around a long token (keys and tokens are long runs of letters and
    digits) or a secret-sounding keyword or URL (the keyword and basic-auth detectors)."""
    found: list[tuple[int, int, bool, bool]] = []
    for match in _LONG_TOKEN.finditer(line):
        if _token_like(match.group(0)):
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


def _redact_line_with_library(line: str, note: Note) -> str:
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
