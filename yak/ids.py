"""Identifiers: ULIDs for stored rows, strictly increasing within one process.

Messages are ordered by id and session watermarks compare ids, so two ids made in the same
millisecond must still sort in creation order; python-ulid alone only guarantees that across
milliseconds, so :func:`new_id` bumps the random part when needed.
"""

from __future__ import annotations

import threading

from ulid import ULID

_lock = threading.Lock()
_last: int = 0


def new_id() -> str:
    """Return a new 26-character Crockford base32 ULID, greater than any made before here."""
    global _last
    with _lock:
        value = int(ULID())
        if value <= _last:
            value = _last + 1
        _last = value
        return str(ULID.from_int(value))
