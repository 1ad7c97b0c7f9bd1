"""The refresh lock: a lock file per workspace beside the database, so at most one refresh of a
workspace is in flight across processes (the app and the command line share the database).

Implements ``yak.ports.RefreshLock``. Acquiring never blocks the event loop: each try blocks a
worker thread for at most ``POLL_S`` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path

from filelock import FileLock, Timeout

from yak import paths

log = logging.getLogger(__name__)

POLL_S = 1.0  # seconds each blocking try holds a worker thread
LOCK_FOLDER = "locks"


class FileRefreshLock:
    """Lock files ``locks/<workspace id>.lock`` in ``folder`` (the data directory).

    Args:
        folder: the data directory; ``None`` (an in-memory database) means no lock: the version
            check still keeps the document safe, only a duplicate model call is possible.
    """

    def __init__(self, folder: Path | None) -> None:
        self._folder = folder
        self._held: dict[str, FileLock] = {}
        self._idle: dict[str, FileLock] = {}  # released, reused by the next acquire

    def _lock(self, workspace_id: str) -> FileLock | None:
        if self._folder is None:
            return None
        folder = self._folder / LOCK_FOLDER
        # The lock this process released last, if its folder is still there (else it is made
        # again, private): building a FileLock and its folder cost more than taking it.
        idle = self._idle.pop(workspace_id, None)
        if idle is not None and os.path.isdir(folder):
            return idle
        try:
            paths.make_private_folder(folder)
        except OSError as exc:
            log.warning("no refresh lock for %s (%s); refreshing without it", workspace_id, exc)
            return None
        # Not thread-local: it is acquired in a worker thread and released on the loop's.
        return FileLock(
            folder / f"{workspace_id}.lock", thread_local=False, mode=paths.PRIVATE_FILE_MODE
        )

    async def acquire(self, workspace_id: str, *, wait_s: float) -> bool:
        """Take the workspace's lock, waiting up to ``wait_s`` seconds.

        When the waiting task is cancelled during a try that then succeeds, the lock is
        released at once, so it never leaks.

        Returns:
            True when the lock is held (or there is none to take: no data folder, or a lock
            file that cannot be created, which is logged as a warning; the version check
            still keeps the document safe), False when ``wait_s`` passed first.

        Raises:
            asyncio.CancelledError: cancelled while waiting.
        """
        lock = self._lock(workspace_id)
        if lock is None:
            return True
        try:
            taken = _try_acquire(lock, timeout_s=0)  # one non-blocking call: no worker thread
        except OSError as exc:  # the lock file cannot be created (a read-only locks folder)
            log.warning(
                "no refresh lock for %s (%s: %s); refreshing without it",
                workspace_id,
                exc.strerror or exc,
                exc.filename,
            )
            return True
        if taken:
            self._held[workspace_id] = lock
            return True
        if wait_s <= 0:
            return False
        deadline = time.monotonic() + wait_s
        while True:
            attempt = asyncio.ensure_future(asyncio.to_thread(_try_acquire, lock))
            try:
                if await asyncio.shield(attempt):
                    self._held[workspace_id] = lock
                    return True
            except asyncio.CancelledError:
                attempt.add_done_callback(
                    lambda done: (
                        lock.release()
                        if not done.cancelled() and done.exception() is None and done.result()
                        else None
                    )
                )
                raise
            if time.monotonic() >= deadline:
                return False

    def release(self, workspace_id: str) -> None:
        """Release the workspace's lock (nothing when it is not held)."""
        lock = self._held.pop(workspace_id, None)
        if lock is not None:
            lock.release()
            self._idle[workspace_id] = lock


def _try_acquire(lock: FileLock, timeout_s: float = POLL_S) -> bool:
    """Take ``lock``, waiting up to ``timeout_s`` seconds (0: one try that never blocks)."""
    try:
        lock.acquire(timeout=timeout_s)
    except Timeout:
        return False
    return True
