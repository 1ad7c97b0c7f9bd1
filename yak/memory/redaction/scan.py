"""Redact secrets from text before it reaches the model or the memory document.

Every credential on a line is redacted on its own (two assignments, both halves of a key pair, a
token in a URL query and a service token beside it), not only the first one.

How the text is scanned (docs/refresh.md, "Secret redaction"):

1. Private key blocks (multi-line) are replaced over the whole text, and so is a private key's
   base64 body pasted without its BEGIN/END lines (``KEY_BODY``: it starts as a private key's
   encoding does); substring tests decide whether those passes run at all.
2. Two scans of the whole text find the lines that could hold a credential: one search of the
   lower-cased text for secret-sounding words, URLs and a few hints (a prefix tree of literals,
   which Python's engine skips through fast), and one byte translation that finds the runs of
   16 or more token characters that look like a key (``redact_values.token_like``: a digit, or
   mixed case, but not a commit hash, a UUID or a long name made of words). Every other line is
   kept as it is without further work: ordinary conversation costs these two scans only.
3. Each candidate line goes through, in order: bearer and basic headers; Yak's own token shapes
   (each run only when one of its literal prefixes is on the line: Anthropic, OpenAI, GitHub,
   AWS, Hugging Face, npm, Google, Stripe test keys, Sentry, DigitalOcean, Shopify, Docker Hub,
   Linear, Notion, JSON Web Tokens …, the services ``detect-secrets`` does not know or only
   half-knows); passwords in URLs and Sentry DSN keys; secret-named URL query parameters;
   secret-named assignments (``DB_PASS=…``, ``export API_TOKEN=…``, ``password: …``, JSON and
   YAML keys), found from their operators; an AWS secret access key beside its key id; prose
   ("the staging DB password is …", "pw: …", "password for the admin account: …", and a
   random-looking word right after a password word: "redis password hunter2x"), found from its
   words; command-line flags (``--password …``, ``curl -u user:pw``); then the detectors of
   ``detect-secrets`` (a maintained library) for everything else it knows (Slack, Stripe live
   keys, GitLab, SendGrid, Twilio, PyPI, Discord, Telegram, Mailchimp, quoted high-entropy
   strings, quoted values beside a secret word …), run only on windows around the line's
   long tokens and keywords, and each only when a literal its patterns need is in the window
   (``redact_library``). A detector sometimes yields part of a token; the match is widened to
   the whole token so no half-secret is left.

The detectors are instantiated directly instead of through ``detect-secrets``' global settings,
so redaction is safe to run from several threads. Hex, IP-address and private-key-header
detectors are not used: in a project's memory a commit hash or a server address is information,
and private key blocks are replaced whole by step 1.

Left alone on purpose: Stripe publishable keys (``pk_live_…``, public by design), names and
references (``os.environ['API_KEY']``, ``api_key: str``, ``password = request.form[…]``), numbers
(``TOKEN_TTL=3600``, ``KEY_LENGTH = 32``: a number is a setting, not a credential), words after a
secret word in prose ("the password field is validated on blur"), commit hashes and UUIDs.

The modules beside this one: ``redact_patterns`` (the tables and expressions of each step),
``redact_values`` (whether a value is a literal secret or a name, a reference, a word),
``redact_gates`` (the literal gates and prefix trees the scans use) and ``redact_library``
(the ``detect-secrets`` pass).

Replacements read ``[REDACTED:url-password]``; the findings are short flags such as
``redacted:url_password`` and never contain the secret. Redacting already-redacted text changes
nothing and reports nothing, so a reply that repeats a marker is not flagged again.
"""

from __future__ import annotations

import functools
import re

from yak.memory.redaction.library import redact_line_with_library
from yak.memory.redaction.patterns import (
    AFTER_NAME,
    AWS_SECRET,
    BARE_AFTER,
    BARE_PASSWORD,
    BASE64_RUN,
    BEARER,
    CLI_FLAG,
    CLI_P,
    CLI_USER,
    CODE_VALUE,
    COMPARED,
    END_OR_COMMENT,
    FLAG_GATE,
    GATE,
    HINT_GATE,
    HINTS,
    KEY_BODY,
    KEY_BODY_GATES,
    MARKER,
    NAME_CHARS,
    NAME_PARTS,
    NETRC,
    OPERATOR,
    OPERATOR_AFTER,
    PASSWORD_WORDS,
    PRIVATE_KEY,
    PROSE,
    PROSE_WORD,
    PUBLIC_BODY,
    PUTTY_KEY,
    QUERY,
    QUERY_NAME_PARTS,
    RUN,
    SENTRY_DSN,
    TO_RUNS,
    TOKEN_GATES,
    TOKEN_SHAPES,
    URL_PASSWORD,
    Note,
)
from yak.memory.redaction.values import (
    is_label,
    is_reference,
    looks_like_credential,
    looks_like_value,
    looks_random,
    secret_name,
    token_like,
)

__all__ = ["MARKER", "redact"]


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
        text = PRIVATE_KEY.sub(lambda match: note("private-key"), text)
    if "PuTTY-User-Key-File" in text:
        text = PUTTY_KEY.sub(lambda match: note("private-key"), text)
    if any(gate in text for gate in KEY_BODY_GATES):
        text = KEY_BODY.sub(lambda match: note("private-key"), text)
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


def _key_piece(match: re.Match[str], note: Note) -> str:
    """A long base64 run (``BASE64_RUN``) marked as a private key's body unless it is all one
    case, has no digit, or starts as a public body does (``PUBLIC_BODY``)."""
    run = match.group(0)
    if (
        PUBLIC_BODY.match(run)
        or run.islower()
        or run.isupper()
        or not any(c.isdigit() for c in run)
        or not any(c.isalpha() for c in run)
    ):
        return run
    return note("private-key")


def _candidate_lines(encoded: bytes) -> list[tuple[int, int]]:
    """Sorted, distinct ``(start, end)`` byte spans of the lines that could hold a credential."""
    starts: set[int] = set()
    lowered = encoded.lower()
    match = GATE.search(lowered)
    while match is not None:
        end = lowered.find(b"\n", match.end())
        if end == -1:
            end = len(lowered)
        word = match.group().decode()
        if (
            word in HINTS
            or OPERATOR_AFTER.search(lowered, match.end(), end)
            or (word in ("pass", "pwd", "pw") and BARE_AFTER.match(lowered, match.end(), end))
            # No operator after this word, so none after a later one: only a hint counts.
            or HINT_GATE.search(lowered, match.end(), end)
        ):
            starts.add(lowered.rfind(b"\n", 0, match.start()) + 1)
        match = GATE.search(lowered, end + 1)
    for match in COMPARED.finditer(encoded):
        starts.add(encoded.rfind(b"\n", 0, match.start()) + 1)
    runs = encoded.translate(TO_RUNS)
    hit = runs.find(RUN)
    while hit != -1:
        end = runs.find(b" ", hit + 16)
        if end == -1:
            end = len(runs)
        if token_like(encoded[hit:end].decode("ascii")):
            starts.add(encoded.rfind(b"\n", 0, hit) + 1)
            end = encoded.find(b"\n", end)  # the rest of this line is looked at anyway
            if end == -1:
                break
        hit = runs.find(RUN, end)
    spans = []
    for start in sorted(starts):
        end = encoded.find(b"\n", start)
        spans.append((start, len(encoded) if end == -1 else end))
    return spans


def _redact_line(line: str, note: Note) -> str:
    """Every credential on one line (no newline in ``line``) replaced by its marker."""
    original = line
    line = BASE64_RUN.sub(functools.partial(_key_piece, note=note), line)
    lowered = line.lower()
    if "bearer" in lowered or "authorization" in lowered:
        line = BEARER.sub(functools.partial(_keep_or_mark, kind="bearer-token", note=note), line)
    for index in sorted(TOKEN_GATES.present(lowered)):  # in table order: the first kind wins
        kind, pattern, _ = TOKEN_SHAPES[index]
        line = pattern.sub(functools.partial(_mark, kind=kind, note=note), line)
    if "://" in line:
        line = SENTRY_DSN.sub(functools.partial(_keep_or_mark, kind="sentry-dsn", note=note), line)
        line = URL_PASSWORD.sub(
            functools.partial(_keep_or_mark, kind="url-password", note=note), line
        )
    if "=" in line and ("?" in line or "&" in line):
        line = QUERY.sub(functools.partial(_query_value, note=note), line)
    line = _redact_assignments(line, note)
    if "[REDACTED:aws-key]" in line or "aws" in lowered:
        line = AWS_SECRET.sub(functools.partial(_aws_secret, note=note), line)
    line = _redact_prose(line, note)
    if line is not original:
        lowered = line.lower()
    if FLAG_GATE.search(lowered):
        line = CLI_FLAG.sub(functools.partial(_flag_value, note=note), line)
    if "-u" in line or "--user" in line:
        line = CLI_USER.sub(functools.partial(_flag_value, note=note), line)
    if "machine" in lowered:
        line = NETRC.sub(functools.partial(_flag_value, note=note), line)
    if "sshpass" in lowered or "mysql" in lowered:
        line = CLI_P.sub(functools.partial(_flag_value, note=note), line)
    if "pass" in lowered or "pw" in lowered:  # after the flags: ``--password X`` is theirs
        line = BARE_PASSWORD.sub(functools.partial(_bare_password, note=note), line)
    return redact_line_with_library(line, note)


def _redact_prose(line: str, note: Note) -> str:
    """Credentials after a secret word in a sentence (see :func:`_prose_value`). The words are
    found in the lower-cased line first and the full pattern tried only there: scanning with
    the case-insensitive pattern costs several times more."""
    lowered = line.lower()
    if len(lowered) != len(line):  # a character whose lower case is longer: scan the slow way
        return PROSE.sub(functools.partial(_prose_value, note=note), line)
    pieces: list[str] = []
    last = 0
    for word in PROSE_WORD.finditer(lowered):
        if word.start() < last:
            continue
        match = PROSE.match(line, word.start())
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
    parts = set(NAME_PARTS.split(match.group("name").lower()))
    if not parts & QUERY_NAME_PARTS or not looks_random(match.group("secret")):
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
    if CODE_VALUE.search(inner) or not looks_like_value(inner, quoted=quoted):
        return match.group(0)
    password_word = match.group("word").lower() in PASSWORD_WORDS
    if not (quoted and password_word) and not looks_random(inner):
        return match.group(0)
    if quoted:
        return f"{match.group('keep')}{secret[0]}{note('password-prose')}{secret[0]}"
    return match.group("keep") + note("password-prose")


def _bare_password(match: re.Match[str], note: Note) -> str:
    """The word right after a password word with no operator between ("redis password
    hunter2x"): a credential only when it looks random."""
    secret = match.group("secret")
    if CODE_VALUE.search(secret) or not looks_like_value(secret, quoted=False):
        return match.group(0)
    if not looks_random(secret):
        return match.group(0)
    return match.group("keep") + note("password-prose")


def _flag_value(match: re.Match[str], note: Note) -> str:
    """``--password X``, ``--token=X``, ``curl -u user:X``."""
    secret = match.group("secret")
    inner = secret[1:-1] if secret[0] in "\"'" else secret
    if secret.startswith("-") or not looks_like_value(inner, quoted=inner is not secret):
        return match.group(0)
    if "`" in inner:  # ``--password X``: a placeholder in quoted code
        return match.group(0)
    if CODE_VALUE.search(inner):
        return match.group(0)
    if inner is secret:
        return match.group("keep") + note("password-flag")
    return f"{match.group('keep')}{secret[0]}{note('password-flag')}{secret[0]}"


def _redact_assignments(line: str, note: Note) -> str:
    """Redact the values of secret-named assignments (see :func:`_redact_assignment`); each
    assignment on the line on its own."""
    pieces: list[str] = []
    last = 0
    for operator in OPERATOR.finditer(line):
        # Walk back from the operator over blanks, a closing quote, then the name.
        end = operator.start()
        while end > last and line[end - 1] in " \t":
            end -= 1
        if end > last and line[end - 1] in "\"'":
            end -= 1
        start = end
        while start > last and line[start - 1] in NAME_CHARS:
            start -= 1
        name = line[start:end]
        if not name or not name[0].isalpha() and name[0] not in "_.-":
            continue
        strength = secret_name(name)
        if strength is None:
            continue
        after = AFTER_NAME.match(line, end)
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
            if not looks_like_value(value, quoted=True) or is_label(name, value):
                return None
            if strength != "strong" and any(char.isspace() for char in value.strip()):
                return None  # NO_KEY = "No API key is set.": a sentence, not a key
            if strength == "weak" and not looks_random(value):
                return None
            return f"{keep}{quote}{note('password-assignment')}{quote}"
    value = match.group("bare")
    if match.group("op") == ":" and not END_OR_COMMENT.match(line, match.end()):
        return None
    if match.group("op") == ":" and not looks_like_credential(value):
        return None  # prose: "the secret: noted."
    if not looks_like_value(value, quoted=False) or is_reference(name, value):
        return None
    if strength == "weak" and not looks_random(value):
        return None
    return keep + note("password-assignment")
