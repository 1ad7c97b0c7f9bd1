"""Whether a value found by a redaction pattern is a secret (``yak.memory.redaction.scan``): a
literal rather than a reference (``os.environ[...]``, ``${VAR}``, ``api_key=api_key``),
random-looking rather than a word, a name, a number or a date, and whether a name says it holds a
secret."""

from __future__ import annotations

from yak.memory.redaction.patterns import (
    CODE_VALUE,
    DESCRIBING_PARTS,
    HEX_RUN,
    LONG_PIECE,
    MARKER,
    NAME_HINT,
    NAME_PARTS,
    RANDOM_SIGN,
    SECRET_LAST_PARTS,
    SECRET_WORD,
    SECRET_WORD_OR_PART,
    WORDISH,
)


def token_like(run: str) -> bool:
    """Whether a run of 16 or more letters, digits, ``_`` and ``-`` may be a key or token: it
    has a digit (but is not only lower-case hex and dashes, as a commit hash or a UUID is), or
    has 24 characters in mixed case or with 16 between separators. A long name made of words
    (``test_every_line_is_kept``, ``QT_QPA_PLATFORM``) is not one."""
    if any(char.isdigit() for char in run):
        return HEX_RUN.fullmatch(run) is None
    if len(run) < 24:
        return False
    return (not run.islower() and not run.isupper()) or LONG_PIECE.search(run) is not None


def secret_name(name: str) -> str | None:
    """``"strong"`` for a name that says it holds a secret (``DB_PASSWORD``, ``api_key``),
    ``"caps"`` for an environment-style name ending in a secret word (``DB_PASS``, ``HF_TOKEN``:
    any value without spaces), ``"weak"`` for one that may (``token``, ``sort_key``: the value
    must then look random), ``None`` otherwise (``KEY_LENGTH``, ``max_tokens``)."""
    if NAME_HINT.search(name) is None:  # most names (``user``, ``def``): nothing to split
        return None
    parts = [part for part in NAME_PARTS.split(name) if part]
    if not parts or parts[-1].lower() in DESCRIBING_PARTS:
        return None
    if SECRET_WORD.search(name):
        return "strong"
    if parts[-1].lower() in SECRET_LAST_PARTS:
        return "caps" if name.isupper() else "weak"
    return None


def is_label(name: str, value: str) -> bool:
    """A value that spells its own name (``ALLOW_SESSION = "allow_session"``, ``TOKEN =
    "token"``): a constant's label, not a secret."""
    spelled = value.lower().replace("-", "_")
    return spelled == name.lower().lstrip("-.") or name.lower().endswith("_" + spelled)


def is_reference(name: str, value: str) -> bool:
    """An unquoted value that names a variable rather than holding a secret: the name itself
    (``api_key=api_key`` in a call) or a lower-case ``snake_case`` name with a secret word in it
    (``token=auth_token``)."""
    if is_label(name, value):
        return True
    return value == value.lower() and "_" in value and SECRET_WORD_OR_PART.search(value) is not None


def looks_like_credential(value: str) -> bool:
    """An unquoted value after ``name:`` in prose is a credential only if it does not read as
    a word: it has a digit or a symbol, or is long (``hunter2``, ``s3cr3t!``, a random token),
    whereas ``noted.`` or ``unknown`` are words."""
    word = value.strip().rstrip(".,;!?)")
    return len(word) >= 16 or any(not char.isalpha() for char in word)


def looks_random(value: str) -> bool:
    """A value that reads as a credential rather than a word, a name or a number: at least six
    characters with a digit or a symbol (or 16 in mixed case), and not a plain word
    (``validated``, ``created_at``, ``CamelCase``, ``ALL_CAPS``), an identifier without digits
    (``_ProviderT``), a path, or a number or date (``3600``, ``2024-01-01``)."""
    stripped = value.strip()
    if len(stripped) < 6 or stripped.startswith(("/", "~", "./", "../", "[REDACTED")):
        return False
    if WORDISH.fullmatch(stripped):
        return False
    if RANDOM_SIGN.search(stripped):
        return True
    return len(stripped) >= 16 and not stripped.islower() and not stripped.isupper()


def looks_like_value(value: str, *, quoted: bool) -> bool:
    """A literal secret rather than a reference to one (``os.environ[...]``, ``${VAR}``)."""
    stripped = value.strip()
    if len(stripped) < (3 if quoted else 4) or MARKER.search(stripped):
        return False
    if "{{" in stripped or "${" in stripped or stripped.startswith("<"):
        return False
    if not quoted and CODE_VALUE.search(stripped):
        return False
    return not stripped.isdigit()
