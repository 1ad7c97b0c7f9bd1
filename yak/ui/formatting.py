"""Small text helpers shared by the memory panel and the Settings memory page (pure, Qt-free)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from yak.domain import MAX_CHARS, MAX_LINES, LineOrigin, RevisionSource, count_lines
from yak.evidence import Evidence
from yak.held import HeldLine
from yak.presenters import NO_EVIDENCE, evidence_words, held_line_words


def relative_time(moment: datetime | None, now: datetime | None = None) -> str:
    """``moment`` as a person says it: ``"just now"``, ``"5 minutes ago"``, ``"yesterday"``,
    ``"12 days ago"``, then the date (``"2025-03-14"``); ``"never"`` for ``None``.

    Args:
        moment: a timezone-aware time (naive is taken as UTC).
        now: the reference time (defaults to now, UTC).
    """
    if moment is None:
        return "never"
    now = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = (now - moment).total_seconds()
    if seconds < 45:
        return "just now"
    minutes = round(seconds / 60)
    if minutes < 60:
        return "1 minute ago" if minutes == 1 else f"{minutes} minutes ago"
    hours = round(seconds / 3600)
    if hours < 24:
        return "1 hour ago" if hours == 1 else f"{hours} hours ago"
    days = int(seconds // 86400)
    if days == 1:
        return "yesterday"
    if days < 30:
        return f"{days} days ago"
    return moment.astimezone().strftime("%Y-%m-%d")


def line_count_text(lines: int) -> str:
    """``"57 / 200 lines"``: a document's lines against the ceiling."""
    return f"{lines} / {MAX_LINES} lines"


def counter_text(text: str) -> tuple[str, bool]:
    """The editor's live counter for ``text`` and whether it is over the ceiling.

    Returns:
        ``("212 / 200 lines · 8,120 / 25,000 characters", True)``-like text and the over flag
        (over 200 lines or over 25,000 characters).
    """
    lines, chars = count_lines(text), len(text)
    over = lines > MAX_LINES or chars > MAX_CHARS
    return f"{line_count_text(lines)} · {chars:,} / {MAX_CHARS:,} characters", over


def html_escape(text: str) -> str:
    """``text`` safe inside rich text (``&``, ``<`` and ``>`` escaped)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def origin_text(origin: LineOrigin, titles: Mapping[str, str]) -> str:
    """Where a line came from, in words: ``typed by you, v4 · 1 Dec``, ``added by refresh v7
    from 'Set up CI' · 3 Dec``, ``imported, v2 · 1 Dec``, ``accepted from a proposal, v6``…"""
    moment = origin.created_at.astimezone()
    day = f"{moment.day} {moment:%b}"
    version = f"v{origin.version}"
    named = [titles.get(sid, "") for sid in origin.sessions]
    named = [f"'{name}'" for name in named if name]
    source = f" from {named[0]}" if named else ""
    if len(named) > 1:
        source += f" and {len(named) - 1} more"
    if origin.source is RevisionSource.HAND:
        return f"typed by you, {version} · {day}"
    if origin.source is RevisionSource.IMPORT:
        return f"imported by you, {version} · {day}"
    if origin.source is RevisionSource.REFRESH:
        return f"added by refresh {version}{source} · {day}"
    if origin.source is RevisionSource.PROPOSAL:
        if origin.by_person:
            return f"edited and accepted by you, {version} · {day}"
        return f"accepted from a refresh proposal, {version}{source} · {day}"
    if origin.source is RevisionSource.RESTORE:
        return f"restored, {version} · {day}"
    if origin.source is RevisionSource.COPY:
        return f"copied by you from the enclosing folder, {version} · {day}"
    return f"{origin.source}, {version} · {day}"


def origin_and_why(origin: LineOrigin, titles: Mapping[str, str]) -> str:
    """:func:`origin_text`, then on a second line why the line is there
    (``presenters.evidence_words``): ``added by refresh v7 from 'Set up CI' · 3 Dec`` /
    ``why: you said in "Set up CI": "we moved from Poetry to uv"``, or ``why: no evidence
    recorded``. A person's line without evidence has no second line: the first says it
    ("Evidence" in docs/memory.md)."""
    said = origin_text(origin, titles)
    if origin.evidence is None and origin.by_person:
        return said
    why = evidence_words(origin.evidence, by_person=origin.by_person, titles=titles)
    return f"{said}\nwhy: {why}"


def why_added(
    lines: Sequence[str],
    evidence: Sequence[Evidence],
    held: Sequence[HeldLine],
    titles: Mapping[str, str],
) -> list[tuple[str, str]]:
    """Why each line a proposal adds is there, for the review dialog: ``(line, words)`` with
    its evidence in ``presenters.evidence_words``' words, or, for a line without any, the
    reasons it waits that name it (``HeldLine.names``; worded by
    ``presenters.held_line_words`` without the quote of the line the list shows already,
    joined by "; "), else ``no evidence recorded``."""
    backed = {entry.line: entry for entry in reversed(evidence)}
    found = []
    for line in lines:
        entry = backed.get(line)
        if entry is not None:
            found.append((line, evidence_words(entry, titles=titles)))
            continue
        named = [held_line_words(h, line_shown=True) for h in held if h.names(line)]
        found.append((line, "; ".join(named) if named else NO_EVIDENCE))
    return found


def origin_at(origins: list[LineOrigin], number: int, line: str) -> LineOrigin | None:
    """The origin of ``line`` shown as line ``number`` (0-based): the stored line at that
    position, else the stored line with the same text (edits moved it), else ``None``."""
    if number < len(origins) and origins[number].text == line:
        return origins[number]
    return next((o for o in origins if o.text == line), None)
