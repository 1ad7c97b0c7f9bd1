"""The tables and expressions of secret redaction, in the order ``yak.memory.redaction.scan``
applies them: multi-line key blocks, the candidate-line scan, token shapes, keep-the-prefix shapes,
secret-named assignments, the AWS secret beside its key id, prose and command lines."""

from __future__ import annotations

import re
from collections.abc import Callable

from yak.memory.redaction.gates import Gates, alternation

MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

Note = Callable[[str], str]
"""Records a finding of a kind (``"url-password"``) and returns its marker."""


# --- 1. Multi-line blocks -------------------------------------------------------------------

PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\n[ \t]*\n|\Z)",
    re.DOTALL,
)
PUTTY_KEY = re.compile(
    r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[^\n]*|\n[ \t]*\n|\Z)", re.DOTALL
)
# A private key's base64 body pasted without its BEGIN/END lines, as one run or as lines of
# base64 only: it starts as a private key's encoding does (DER of PKCS#1 RSA ``MII…IBAA``,
# PKCS#8 ``MII…IBAD``, ``MIG…AgEA``, EC ``MHcCAQEE`` / ``MIG…AgEB``, Ed25519 PKCS#8
# ``MC4CAQAw``, OpenSSH ``openssh-key-v1``). A certificate or a public key (``MII…CCA``,
# ``AAAAB3Nza…``) starts otherwise and is left alone.
KEY_BODY_GATES = ("IBA", "AgE", "MHcCAQEE", "MC4CAQAw", "b3BlbnNzaC1rZXktdjE")
# The rest of a private key's body: a run of base64 too long for a word, a name or a hash (64
# characters or more, upper and lower case and digits mixed: a PEM line), without the start
# ``KEY_BODY`` needs: a line of a wrapped body, a piece of one, or a body whose start was already
# replaced by a marker. A certificate's or a public key's body (``MII…CCA``, ``AAAA…``) starts
# otherwise and is left alone; a hex digest has no capitals.
BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_.-])[A-Za-z0-9+/]{64,}={0,2}(?![A-Za-z0-9+/=_.-])")
PUBLIC_BODY = re.compile(r"MII[A-Za-z0-9+/]{2,5}CCA|AAAA[A-Z0-9]")
KEY_BODY = re.compile(
    r"(?<![A-Za-z0-9+/])"
    r"(?:MII[A-Za-z0-9+/]{3}IBA[AD]|MIG[A-Za-z0-9+/]AgE[AB]|MHcCAQEE|MC4CAQAw|b3BlbnNzaC1rZXktdjE)"
    r"[A-Za-z0-9+/]{40,}={0,2}"
    r"(?:[ \t]*\n[ \t]*[A-Za-z0-9+/]{8,}={0,2}(?=[ \t]*(?:\n|\Z)))*"
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
HINTS = frozenset(
    {"://", "bearer", "authorization", "aws", "-u ", "-u\t", "--user", "-pass", "-pwd"}
    | {"-token", "-api", "-secret", "-auth", "-access", "sshpass", "mysql", "machine "}
)
_SECRET_WORDS = frozenset(
    {"pass", "pwd", "pw", "secret", "key", "token", "auth", "cred", "contrase", "sig"}
    | {"session", "cookie"}
)
GATE = re.compile(alternation(HINTS | _SECRET_WORDS).encode())
HINT_GATE = re.compile(alternation(HINTS).encode())
# A password word followed, with no operator, by a value with a digit or a symbol ("redis
# password hunter2x"): the line is a candidate too (the value is checked by looks_random).
BARE_AFTER = re.compile(rb"(?:word|wd|phrase)?[ \t]+[^\s]*[^a-z\s]")
OPERATOR_AFTER = re.compile(rb"[:=(]|\bis\b|\bwas\b|->|[\"'`][^\n]*;|" + "\u2192".encode())
COMPARED = re.compile(rb"""["'`][ \t]*[!=]=""")
# Bytes that make up a token, for the long-token scan (every other byte becomes a space).
_TOKEN_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
TO_RUNS = bytes.maketrans(
    bytes(range(256)),
    bytes(ord("a") if byte in _TOKEN_BYTES else ord(" ") for byte in range(256)),
)
RUN = b"a" * 16
HEX_RUN = re.compile(r"[0-9a-f-]+")

LONG_PIECE = re.compile(r"[^_-]{16}")


# --- 3a. Token shapes (Yak's own, one combined expression) ----------------------------------

_AWS_KEY_ID = r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA|A3T[A-Z0-9])[0-9A-Z]{16}"
AWS_KEY_GATES = (
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
TOKEN_SHAPES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (kind, re.compile(pattern), gates)
    for kind, pattern, gates in (
        ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{10,}", ("sk-ant-",)),
        ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", ("sk-",)),
        (
            "github-token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        ),
        ("aws-key", rf"\b{_AWS_KEY_ID}\b", AWS_KEY_GATES),
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
TOKEN_GATES = Gates([gates for _, _, gates in TOKEN_SHAPES])


# --- 3b. Keep-the-prefix shapes -------------------------------------------------------------

# A Sentry DSN: https://<32 hex key>[:<32 hex secret>]@o1.ingest.sentry.io/2
SENTRY_DSN = re.compile(r"(?P<keep>\bhttps?://)(?P<secret>[0-9a-f]{32}(?::[0-9a-f]{32})?)(?=@)")
# scheme://user:password@host — the password is everything up to the last '@' of the authority.
URL_PASSWORD = re.compile(
    r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/?#@\[\]]*:)(?P<secret>[^\s/?#]+)(?=@)"
)
BEARER = re.compile(
    r"(?P<keep>\b(?:Bearer|Authorization:\s*(?:Basic|Token))\s+)(?P<secret>[A-Za-z0-9._~+/=-]{12,})",
    re.IGNORECASE,
)
# ?token=…, &api_key=…, &sig=…: the name is checked by QUERY_NAME_PARTS, the value by
# looks_random.
QUERY = re.compile(r"(?P<keep>[?&;](?P<name>[A-Za-z0-9_.\-]{1,40})=)(?P<secret>[^&#\s\"'<>]+)")
QUERY_NAME_PARTS = frozenset(
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
SECRET_WORD = re.compile(
    r"password|passwd|passphrase|pwd|secret|api_?key|apikey|access_?key|auth_?key|"
    r"private_?key|client_?key|(?:auth|access|refresh|api|bearer|session|csrf)_?token|"
    r"token_?secret|credentials?",
    re.IGNORECASE,
)
# A name whose last part is one of these is secret-named too (``DB_PASS``, ``HF_TOKEN``,
# ``STRIPE_KEY``); in lower or mixed case (``sort_key``, ``token``) only with a random-looking
# value, as code uses such names for ordinary things.
SECRET_LAST_PARTS = frozenset(
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
DESCRIBING_PARTS = frozenset(
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
# Every secret-named name contains one of these (the words of SECRET_WORD and
# SECRET_LAST_PARTS).
NAME_HINT = re.compile(r"pass|pwd|secret|key|token|cred|auth|pat|session|cookie", re.IGNORECASE)
SECRET_WORD_OR_PART = re.compile(r"pass|pwd|secret|key|token|credential|auth")
NAME_PARTS = re.compile(r"[_.\-]+|(?<=[a-z])(?=[A-Z])")
# The assignments of a line are found from their operators (``:`` or ``=``), walking back to
# the name over these characters.
OPERATOR = re.compile(r"[:=]")
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
AFTER_NAME = re.compile(
    r"(?P<op_text>[\"']?[ \t]*(?P<op>:=|=>|=|:)[ \t]*)"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>(?:[^\s\"',;&]|&(?![A-Za-z_][\w.\-]*=))+))"
)
END_OR_COMMENT = re.compile(r"\s*(?:#|$)")
CODE_VALUE = re.compile(
    r"^(?:[$%{<(]|\[REDACTED)|[()\[\]]|^(?:none|null|nil|true|false|undefined|required|optional|"
    r"str|string|bytes|int|secretstr|env|environ|getenv|input|changeme|\*+|x+|\.+"
    r"|values?|secret|password|token|key|placeholder|example|dummy|redacted|hidden)$"
    r"|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$",
    re.IGNORECASE,
)


# --- 3d. AWS secret access key beside its key id --------------------------------------------

AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


# --- 3e. Prose and command lines ------------------------------------------------------------

# "the staging DB password is hunter2x", "pw: X", "password for the admin account: X",
# "the token is X", "API key = X". The value is checked by looks_random.
PROSE = re.compile(
    r"(?P<keep>\b(?P<word>password|passwd|passphrase|pw|pwd|token|api[ _-]?key"
    r"|(?:secret|access)[ _-]?key|secret|key|credentials?)\b"
    r"(?:[ \t]+(?:for|of|to|on|in)[ \t]+[^:=\n]{1,40}?)?"
    r"(?:[ \t]*(?::|=|->|\u2192)|[ \t]+(?:is|was)\b)[ \t]*"
    r"(?:(?:now|still|(?:set|changed|reset|updated)[ \t]+to)[ \t]+)?)"
    r"(?P<secret>\"[^\"\n]{3,}\"|'[^'\n]{3,}'|`[^`\n]{3,}`|[^\s\"'`]+?)(?=[.,;:!?)]*(?:\s|$))",
    re.IGNORECASE,
)
PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pw", "pwd"})
# "redis password hunter2x", "the admin pw s3cr3t!": a password word and then its value with no
# "is", "=" or ":" between. Only the next word is looked at, and only a random-looking one is a
# credential ("password reset", "password manager 1Password" stay).
BARE_PASSWORD = re.compile(
    r"(?P<keep>\b(?:password|passwd|passphrase|pw|pwd)[ \t]+)"
    r"(?P<secret>[^\s\"'`]+?)(?=[.,;!?)]*(?:\s|$))",
    re.IGNORECASE,
)
PROSE_WORD = re.compile(
    r"\b(?:"
    + alternation(
        ("password", "passwd", "passphrase", "pw", "pwd", "token", "api")
        + ("secret", "access", "key", "credential")
    )
    + ")"
)
FLAG_GATE = re.compile(
    "-" + alternation(("pass", "pwd", "token", "api", "secret", "auth", "access"))
)
CLI_FLAG = re.compile(
    r"(?P<keep>(?<!\S)--?(?:password|passwd|pass|pwd|token|api-key|apikey|secret|auth-token"
    r"|access-token)(?:[ \t]+|=))(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"']+)",
    re.IGNORECASE,
)
# ``sshpass -p X``; ``mysql -pX`` (glued: ``mysql -p name`` asks for the password, ``name`` is
# the database).
CLI_P = re.compile(
    r"(?P<keep>\bsshpass[ \t]+-p[ \t]*|\bmysql(?:dump|admin)?\b[^\n]*?[ \t]-p)"
    r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'-][^\s\"']*)"
)
# A .netrc entry: ``machine host login me password X``.
NETRC = re.compile(
    r"(?P<keep>\bmachine[ \t]+\S+(?:[ \t]+login[ \t]+\S+)?[ \t]+password[ \t]+)(?P<secret>\S+)"
)
CLI_USER = re.compile(
    r"(?P<keep>(?<!\S)(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:)(?P<secret>[^\s\"']+?)(?=[\"']?(?:\s|$))"
)
RANDOM_SIGN = re.compile(r"[^A-Za-z_]")  # a digit or a symbol
# Words, names, numbers, dates, versions (``v1.2.3-rc1``) and ticket ids (``JIRA-1234``).
WORDISH = re.compile(
    r"[a-z]+(?:[_-][a-z]+)*|[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+(?:_[A-Z]+)*|[\d.:/-]+"
    r"|v?\d+(?:\.\d+)+(?:[-+][A-Za-z0-9.]+)?|[A-Za-z]{1,12}-\d+"
)
