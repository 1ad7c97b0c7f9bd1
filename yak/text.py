"""Small text helpers every layer shares: shortening, keeping a head and a tail, counting
nouns. One home, so a cut looks the same in the chat, the memory input and the command line."""

from __future__ import annotations

ELLIPSIS = "…"


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
