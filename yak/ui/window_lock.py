"""One window per workspace: the lock a window holds on the workspace it shows.

A ``QLockFile`` per workspace in the data directory's ``windows`` folder (``<id>.lock``). The
window that shows a workspace holds its lock until it shows another one or quits; a second
window asked to open the same workspace finds it held and says so instead (docs/ui.md). A lock
left by a process that died is taken over. Where no lock can be made (no data directory, a
read-only folder), windows open unlocked: no lock is better than no window.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QLockFile

log = logging.getLogger(__name__)


class WindowLock:
    """The lock of the workspace a window shows.

    Args:
        data_dir: the data directory (``None``: a database without one; nothing is locked).
    """

    def __init__(self, data_dir: Path | None) -> None:
        self._folder = None if data_dir is None else data_dir / "windows"
        self._lock: QLockFile | None = None
        self._workspace_id: str | None = None

    def claim(self, workspace_id: str) -> bool:
        """Hold ``workspace_id``'s lock, releasing the one held before.

        Returns:
            ``False`` when another window holds it (nothing changes), else ``True``.
        """
        if self._workspace_id == workspace_id or self._folder is None:
            return True
        try:
            self._folder.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            log.warning("cannot create the window locks' folder: %s", exc)
            return True
        lock = QLockFile(str(self._folder / f"{workspace_id}.lock"))
        lock.setStaleLockTime(0)  # only a dead process's lock is stale, however old
        if not lock.tryLock(0):
            if lock.error() == QLockFile.LockError.LockFailedError:
                return False
            log.warning("cannot lock the workspace's window: %s", lock.error())
            return True
        self.release()
        self._lock, self._workspace_id = lock, workspace_id
        return True

    def release(self) -> None:
        """Let the workspace held (if any) be opened by another window."""
        if self._lock is not None:
            self._lock.unlock()
        self._lock, self._workspace_id = None, None
