"""Small text helpers every layer shares: shortening, keeping a head and a tail, counting
nouns, showing user text in a one-line message. One home, so a cut looks the same in the chat,
the memory input and the command line."""

from __future__ import annotations

import re
from collections.abc import Mapping

ELLIPSIS = "…"
SHOWN_CHARS = 160  # the longest user value (a path, a name) a one-line message shows
TARGET_CHARS = 120  # the longest tool-call target (a path, a pattern, a command line)
# Keys under which a tool call's input carries what it acts on, the first one present wins.
_TARGET_KEYS = (
    "command",
    "pattern",
    "path",
    "file_path",
    "directory",
    "dir",
    "query",
    "glob",
    "url",
)
# C0 and C1 controls, DEL, and the invisible characters that reorder or break a line.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shorten(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters, else its first ``limit - 1``
    characters followed by "…" (so the result has at most ``limit`` characters)."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + ELLIPSIS


def one_line(text: str, limit: int) -> str:
    """``text`` with every run of blanks and line breaks made one space, then shortened to
    ``limit`` characters (see :func:`shorten`)."""
    return shorten(" ".join(text.split()), limit)


def cut_marker(removed: int) -> str:
    """The visible marker where characters were cut: ``[… 1,234 characters cut …]``."""
    return f"[{ELLIPSIS} {removed:,} characters cut {ELLIPSIS}]"


def head_and_tail(text: str, limit: int, *, head_share: float = 0.5) -> str:
    """``text`` when it has at most ``limit`` characters, else its head and its tail around a
    :func:`cut_marker` line, the whole at most ``limit`` characters (marker included).

    Args:
        text: any text.
        limit: the most characters to keep (at least the marker's length to keep any text).
        head_share: the share of the kept characters that comes from the head (0–1).
    """
    if len(text) <= limit:
        return text
    room = len(f"\n{cut_marker(len(text))}\n")
    keep = max(limit - room, 0)
    head = round(keep * head_share)
    tail = keep - head
    removed = len(text) - head - tail
    return text[:head] + f"\n{cut_marker(removed)}\n" + (text[len(text) - tail :] if tail else "")


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``"1 line"``, ``"2 lines"``, ``"1,024 lines"``; ``plural_form`` for irregular nouns."""
    word = noun if count == 1 else (plural_form or noun + "s")
    return f"{count:,} {word}"


def controls_to_spaces(text: str) -> str:
    """``text`` with every control character (those :func:`escape_controls` escapes) made a
    space and every run of blanks one space, trimmed: one line of plain text, such as an
    agent's reason that is later printed as it is."""
    return " ".join(_CONTROLS.sub(" ", text).split())


def escape_controls(text: str) -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\t``,
    ``\\x1b``, ``\\u202e``...), so it stays on one line and cannot drive a terminal."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in _NAMED:
            return _NAMED[char]
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROLS.sub(escape, text)


def middle(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters, else its head and tail around "…"
    (``limit`` characters in all): the start and the end of a path say the most."""
    if len(text) <= limit:
        return text
    keep = max(limit - 1, 0)
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + ELLIPSIS + (text[len(text) - tail :] if tail else "")


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """A user value (a path, a name, a pattern) fit for a one-line message: control
    characters escaped (:func:`escape_controls`), then shortened in the middle to ``limit``
    characters (:func:`middle`)."""
    return middle(escape_controls(str(value)), limit)


def tool_target(tool_input: object, limit: int = TARGET_CHARS) -> str:
    """What a tool call acts on, on one line of at most ``limit`` characters: its command, its
    pattern (``TODO in src`` when it names a folder too) or its path. The chat shows it while
    the call runs and in a reloaded transcript, and the memory input writes it as
    ``[tool: read_file src/app.py]``.

    Args:
        tool_input: the ``input`` of a ``tool_use`` block (a dict when the model sent one).
        limit: the most characters (see :func:`one_line`).

    Returns:
        ``""`` when the input names nothing of the kind (or is not a dict).
    """
    if not isinstance(tool_input, Mapping):
        return ""
    for key in _TARGET_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            where = tool_input.get("path") if key == "pattern" else None
            if isinstance(where, str) and where.strip():
                value = f"{value} in {where}"
            return one_line(value, limit)
    return ""
