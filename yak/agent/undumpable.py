"""The C library, and making the process non-dumpable, without the sandbox's other imports
(every command calls :func:`make_undumpable` at start, so it stays light; ``yak.agent.sandbox``
uses the same :func:`libc`)."""

from __future__ import annotations

import ctypes
import functools
import sys

_PR_SET_DUMPABLE = 4


@functools.cache
def libc() -> ctypes.CDLL | None:
    """The process's C library (Linux), or ``None`` elsewhere or when it cannot be loaded."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def make_undumpable() -> bool:
    """Make this process non-dumpable (Linux ``prctl(PR_SET_DUMPABLE, 0)``): a process of the same
    user can no longer read its ``/proc/<pid>/environ`` or memory, nor ptrace it. Returns whether
    it took effect (``False`` elsewhere)."""
    found = libc()
    return bool(found is not None and found.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
