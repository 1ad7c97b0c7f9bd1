"""Stale lines: the lines a person is asked to keep, edit or remove ("Age and staleness" in
docs/memory.md). Pure rules, no I/O.

A line is stale for one or more reasons (:class:`StaleReason`): a refresh wrote it and it has
not been said or confirmed for the threshold (``AGED``; a person's line never is). Other checks
give their reasons per line through ``also`` (a reference gone from the workspace). Age alone
never removes a line: the refresh prompt names stale lines so a newer statement may replace
them (``yak.memory.prompts.rewrite``), and a person decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum

from yak.memory.freshness.age import LineAge, is_aged
from yak.memory.judging.kinds import is_structure
from yak.references import GoneReference


class StaleReason(StrEnum):
    """Why a line is stale: ``aged`` (a refresh's line not said or confirmed for the
    threshold), ``gone`` (it names a file or a runner target the workspace no longer has:
    ``yak.memory.freshness.references``)."""

    AGED = "aged"
    GONE = "gone"


@dataclass(frozen=True)
class StaleLine:
    """One stale line of the current document.

    Attributes:
        line: its 1-based line number.
        text: the line.
        reasons: why, in :class:`StaleReason` order.
        last_confirmed: when it was last said or confirmed (UTC).
        missing: for ``GONE``, each reference the workspace no longer has, as named.
    """

    line: int
    text: str
    reasons: tuple[StaleReason, ...]
    last_confirmed: datetime
    missing: tuple[str, ...] = ()


def stale_lines(
    ages: Iterable[LineAge],
    *,
    today: date,
    after_days: int,
    also: Mapping[int, Sequence[StaleReason]] | None = None,
    gone: Iterable[GoneReference] = (),
) -> list[StaleLine]:
    """The stale lines of the current document, in document order; a section title or a blank
    line never is one (``yak.memory.judging.kinds.is_structure``).

    Args:
        ages: ``age.line_ages`` of the current document.
        today: the local date the age is measured to.
        after_days: the threshold (``Settings.stale_after_days``).
        also: more reasons by 0-based line index, from other checks.
        gone: the lines naming what the workspace no longer has (``ReferenceCheck.gone``):
            ``GONE`` unless the line was said or confirmed since it entered the document
            (a person kept it: the model still sees the mark).
    """
    more = {index: list(reasons) for index, reasons in (also or {}).items()}
    missing: dict[int, tuple[str, ...]] = {}
    for reference in gone:
        missing[reference.index] = reference.missing
    ages = list(ages)
    confirmed_since = {age.line - 1 for age in ages if age.last_confirmed > age.entered}
    order = list(StaleReason)
    found = []
    for age in ages:
        reasons = set(more.get(age.line - 1, ()))
        if age.line - 1 in missing and age.line - 1 not in confirmed_since:
            reasons.add(StaleReason.GONE)
        if not age.by_person and is_aged(age, today=today, after_days=after_days):
            reasons.add(StaleReason.AGED)
        if reasons and age.text.strip() and not is_structure(age.text):
            found.append(
                StaleLine(
                    line=age.line,
                    text=age.text,
                    reasons=tuple(sorted(reasons, key=order.index)),
                    last_confirmed=age.last_confirmed,
                    missing=missing.get(age.line - 1, ()) if StaleReason.GONE in reasons else (),
                )
            )
    return found
