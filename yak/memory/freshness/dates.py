"""The dates a person gives to see the memory as of then (``show --as-of``, ``history --as-of``
/ ``--since``, MCP ``memory_read``'s ``as_of``; "As of a date" in docs/memory.md)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from yak.errors import UsageError

DATE_FORMS = "YYYY-MM-DD or YYYY-MM-DDTHH:MM"


def parse_moment(text: str, *, option: str, end_of_day: bool = True) -> datetime:
    """The moment a ``--as-of`` / ``--since`` value names, in local time: a date alone is the
    end of that day (``end_of_day``) or its start; a date and time (ISO 8601, with or without
    an offset) is that moment.

    Raises:
        UsageError: not a date.
    """
    given = text.strip()
    try:
        if len(given) == len("YYYY-MM-DD"):
            day = date.fromisoformat(given)
            if end_of_day:
                return datetime.combine(day + timedelta(days=1), time()).astimezone() - timedelta(
                    microseconds=1
                )
            return datetime.combine(day, time()).astimezone()
        moment = datetime.fromisoformat(given)
    except ValueError:
        raise UsageError(f"{option} takes a date ({DATE_FORMS}), not {text!r}.") from None
    return moment if moment.tzinfo is not None else moment.astimezone()
