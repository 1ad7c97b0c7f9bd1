"""Each memory line's age: when it was first said, when it was last said or confirmed, and when
it entered the document ("Age and staleness" and "As of a date" in docs/memory.md). Pure rules,
no I/O: the caller reads the revisions, the times of the passages behind them and the
confirmations.

- **first said** (valid time): the oldest passage that backed the line's words in any revision
  (its message's time), else the time the line entered the document.
- **last confirmed**: a person's line, the write that put it there; a refresh's line, its newest
  supporting passage (else the time it entered). A person's later confirmation
  (``yak memory stale --keep``) moves it forward.
- **entered** (record time): the revision that wrote the line in its current form (blame).

Lines are matched across revisions by their folded words (``provenance.fold_line``), so a line
a refresh wrote again keeps every passage it was ever backed by.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from yak.domain import LineOrigin
from yak.evidence import Evidence
from yak.memory.history.provenance import fold_line
from yak.memory.judging.kinds import is_structure


@dataclass(frozen=True)
class LineAge:
    """How old one line of the current document is.

    Attributes:
        line: its 1-based line number.
        text: the line.
        first_said: when its oldest supporting passage was said (UTC; valid time).
        last_confirmed: when it was last said, written by a person or confirmed (UTC).
        entered: when the revision that wrote it in this form was stored (UTC; record time).
        by_person: a person wrote it (never stale by age).
    """

    line: int
    text: str
    first_said: datetime
    last_confirmed: datetime
    entered: datetime
    by_person: bool


def line_ages(
    origins: Sequence[LineOrigin],
    evidence: Iterable[tuple[datetime, Sequence[Evidence]]],
    *,
    passage_times: Mapping[str, datetime],
    confirmations: Mapping[str, datetime],
) -> list[LineAge]:
    """The age of every line of the current document.

    Args:
        origins: blame of the current document (``provenance.blame``), one per line.
        evidence: each revision's storage time (UTC) and the evidence it kept, any order.
        passage_times: message id -> when it was written (UTC); a passage whose message is
            gone counts from the revision that kept it.
        confirmations: folded line (``fold_line``) -> a person's last confirmation (UTC).

    Returns:
        One :class:`LineAge` per origin, in order.
    """
    said: dict[str, list[datetime]] = {}
    for stored, entries in evidence:
        for entry in entries:
            when = passage_times.get(entry.message_id, stored)
            said.setdefault(fold_line(entry.line), []).append(when)
    ages = []
    for origin in origins:
        key = fold_line(origin.text)
        times = said.get(key, [])
        first = min([*times, origin.created_at])
        last = origin.created_at if origin.by_person or not times else max(times)
        confirmed = confirmations.get(key)
        if confirmed is not None and confirmed > last:
            last = confirmed
        ages.append(
            LineAge(
                line=origin.line,
                text=origin.text,
                first_said=first,
                last_confirmed=last,
                entered=origin.created_at,
                by_person=origin.by_person,
            )
        )
    return ages


def is_aged(age: LineAge, *, today: date, after_days: int) -> bool:
    """Whether a non-blank line was last confirmed more than ``after_days`` days before
    ``today`` (both compared as local dates)."""
    confirmed = age.last_confirmed.astimezone().date()
    return bool(age.text.strip()) and confirmed < today - timedelta(days=after_days)


def age_notes(
    ages: Iterable[LineAge], *, today: date, after_days: int
) -> dict[int, tuple[str, ...]]:
    """The notes the injected block carries for aged lines (:func:`is_aged`):
    ``{0-based line index: ("last confirmed 2026-08",)}``, the month in local time; the shape
    ``yak.memory.prompts.injection.memory_block`` takes as ``line_notes``. A section title
    carries none (it states no fact)."""
    return {
        age.line - 1: (f"last confirmed {age.last_confirmed.astimezone():%Y-%m}",)
        for age in ages
        if is_aged(age, today=today, after_days=after_days) and not is_structure(age.text)
    }
