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


class StaleReason(StrEnum):
    """Why a line is stale: ``aged`` (a refresh's line not said or confirmed for the
    threshold)."""

    AGED = "aged"


@dataclass(frozen=True)
class StaleLine:
    """One stale line of the current document.

    Attributes:
        line: its 1-based line number.
        text: the line.
        reasons: why, in :class:`StaleReason` order.
        last_confirmed: when it was last said or confirmed (UTC).
    """

    line: int
    text: str
    reasons: tuple[StaleReason, ...]
    last_confirmed: datetime


def stale_lines(
    ages: Iterable[LineAge],
    *,
    today: date,
    after_days: int,
    also: Mapping[int, Sequence[StaleReason]] | None = None,
) -> list[StaleLine]:
    """The stale lines of the current document, in document order.

    Args:
        ages: ``age.line_ages`` of the current document.
        today: the local date the age is measured to.
        after_days: the threshold (``Settings.stale_after_days``).
        also: more reasons by 0-based line index, from other checks.
    """
    more = also or {}
    order = list(StaleReason)
    found = []
    for age in ages:
        reasons = set(more.get(age.line - 1, ()))
        if not age.by_person and is_aged(age, today=today, after_days=after_days):
            reasons.add(StaleReason.AGED)
        if reasons and age.text.strip():
            found.append(
                StaleLine(
                    line=age.line,
                    text=age.text,
                    reasons=tuple(sorted(reasons, key=order.index)),
                    last_confirmed=age.last_confirmed,
                )
            )
    return found
