"""Identifiers: ULIDs for stored rows, strictly increasing within one process; and finding a
stored row from the id, or the unique prefix of one, that a user typed.

Messages are ordered by id and session watermarks compare ids, so two ids made in the same
millisecond must still sort in creation order; python-ulid alone only guarantees that across
milliseconds, so :func:`new_id` bumps the random part when needed.

A user may give any unique prefix of at least :data:`MIN_ID_PREFIX` characters of an id, case
aside (``yak memory show --reply``, ``restore``, ``accept``, ``yak ask --session``): the caller
finds the rows whose id starts with :func:`id_prefix`'s answer (two are enough to know it is
not unique) and :func:`only_match` picks the one or says why not, in the words of that kind of
id (:class:`IdWords`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import NamedTuple, TypeVar

from yak.errors import RevisionNotFound, UsageError

T = TypeVar("T")

MIN_ID_PREFIX = 6  # characters of an id a user must give

_lock = threading.Lock()
_last: int = 0


def new_id() -> str:
    """Return a new 26-character Crockford base32 ULID, greater than any made before here."""
    global _last
    # python-ulid imports typing_extensions and inspect, several times what a command that
    # only reads needs in all: it is loaded by the first write.
    from ulid import ULID

    with _lock:
        value = int(ULID())
        if value <= _last:
            value = _last + 1
        _last = value
        return str(ULID.from_int(value))


class IdWords(NamedTuple):
    """How the errors about one kind of id read. Each is a ``str.format`` template given
    ``given`` (what the user typed), ``min`` (:data:`MIN_ID_PREFIX`), ``count`` (the
    matches) and the caller's own fields."""

    too_short: str
    unknown: str
    several: str
    error: type[UsageError] = UsageError


ATTEMPT_IDS = IdWords(
    "Give at least {min} characters of a refresh attempt id (see history --refreshes); "
    "{given!r} is too short.",
    "This workspace has no refresh attempt {given!r} (see history --refreshes for the ids).",
    "{given!r} matches several refresh attempts; give more characters of the id.",
)
PROPOSAL_IDS = IdWords(
    "Give at least {min} characters of a proposal id (see yak memory review); {given!r} is too "
    "short.",
    "This workspace has no proposal {given!r} (see yak memory review).",
    "{given!r} matches several proposals; give more characters of the id.",
)
REVISION_IDS = IdWords(
    "Give at least {min} characters of a revision id (see history); {given!r} is too short.",
    "This workspace has no revision {given!r} (see history for the ids).",
    "{given!r} matches several revisions; give more characters of the id.",
    RevisionNotFound,
)
CONVERSATION_IDS = IdWords(
    "give at least {min} characters of a conversation id; {given!r} is too short",
    "no conversation {given!r} in {where} (a conversation continues only in its own workspace)",
    "{given!r} starts the ids of {count} conversations in {where}; give more characters",
)


def id_prefix(given: str | None, words: IdWords) -> str:
    """What the user typed, spelled as stored ids are (no spaces around, upper case).

    Raises:
        words.error: it is shorter than :data:`MIN_ID_PREFIX` characters.
    """
    wanted = (given or "").strip().upper()
    if len(wanted) < MIN_ID_PREFIX:
        raise words.error(words.too_short.format(given=given, min=MIN_ID_PREFIX))
    return wanted


def only_match(matches: Sequence[T], given: str | None, words: IdWords, **fields: object) -> T:
    """The one row whose id starts with :func:`id_prefix` of ``given`` (``matches``: those
    rows, or two of them when there are more).

    Raises:
        words.error: none matches, or several do.
    """
    if len(matches) == 1:
        return matches[0]
    template = words.several if matches else words.unknown
    raise words.error(template.format(given=given, min=MIN_ID_PREFIX, count=len(matches), **fields))
