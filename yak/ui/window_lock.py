"""One window per workspace: the lock a window holds on the workspace it shows, and the line
through which a second window asks the holder to come to the front.

A ``QLockFile`` per workspace in the data directory's ``windows`` folder (``<id>.lock``). The
window that shows a workspace holds its lock until it shows another one or quits; a second
window asked to open the same workspace finds it held and asks the holder to show itself
instead (docs/ui.md, "The first window"). A lock left by a process that died is taken over.
Where no lock can be made (no data directory, a read-only folder), windows open unlocked: no
lock is better than no window.

While it holds a lock, the window listens on a local socket (``QLocalServer``, readable by the
same user only) named after the lock file; a client writes ``show`` and the holder, having
emitted :attr:`WindowLock.show_requested`, answers ``shown``. Nothing else is read from it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

SHOW_REQUEST = b"show\n"
SHOWN_REPLY = b"shown\n"
ASK_TIMEOUT_S = 2.0  # a holder that does not answer by then is taken as gone or busy


class WindowLock(QObject):
    """The lock of the workspace a window shows.

    Args:
        data_dir: the data directory (``None``: a database without one; nothing is locked).
    """

    show_requested = Signal()  # another window asked for the workspace this one holds

    def __init__(self, data_dir: Path | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._folder = None if data_dir is None else data_dir / "windows"
        self._lock: QLockFile | None = None
        self._workspace_id: str | None = None
        self._server: QLocalServer | None = None

    def claim(self, workspace_id: str) -> bool:
        """Hold ``workspace_id``'s lock, releasing the one held before, and listen for other
        windows asking for it.

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
        self._listen(self._server_name(workspace_id))
        return True

    def release(self) -> None:
        """Let the workspace held (if any) be opened by another window."""
        if self._server is not None:
            self._server.close()
            self._server.deleteLater()
            self._server = None
        if self._lock is not None:
            self._lock.unlock()
        self._lock, self._workspace_id = None, None

    async def ask_holder_to_show(self, workspace_id: str) -> bool:
        """Ask the window holding ``workspace_id`` to come to the front.

        Returns:
            ``True`` when it answered that it did; ``False`` when nobody listens (no data
            directory, a holder that does not answer within :data:`ASK_TIMEOUT_S` seconds).
        """
        if self._folder is None:
            return False
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[bool] = loop.create_future()
        received = bytearray()
        socket = QLocalSocket(self)

        def finish(shown: bool) -> None:
            if not answered.done():
                answered.set_result(shown)

        def read() -> None:
            received.extend(socket.readAll().data())
            if received.endswith(b"\n"):
                finish(bytes(received) == SHOWN_REPLY)

        socket.connected.connect(lambda: socket.write(SHOW_REQUEST))
        socket.readyRead.connect(read)
        socket.errorOccurred.connect(lambda _error: finish(False))
        socket.connectToServer(self._server_name(workspace_id))
        try:
            return await asyncio.wait_for(answered, ASK_TIMEOUT_S)
        except TimeoutError:
            log.info("the window holding %s did not answer", workspace_id)
            return False
        finally:
            socket.abort()
            socket.deleteLater()

    def _server_name(self, workspace_id: str) -> str:
        """A short socket name per lock file (a full path may be too long for a socket)."""
        assert self._folder is not None
        where = str(self._folder / f"{workspace_id}.lock").encode("utf-8", "surrogateescape")
        return f"yak-window-{hashlib.sha256(where).hexdigest()[:24]}"

    def _listen(self, name: str) -> None:
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        QLocalServer.removeServer(name)  # a dead holder's socket: the lock is ours now
        if not server.listen(name):
            log.warning("other windows cannot reach this one: %s", server.errorString())
            server.deleteLater()
            return
        server.newConnection.connect(self._on_server_new_connection)
        self._server = server

    def _on_server_new_connection(self) -> None:
        server = self._server
        while server is not None and (connection := server.nextPendingConnection()) is not None:
            connection.readyRead.connect(lambda c=connection: self._on_connection_ready_read(c))
            connection.disconnected.connect(connection.deleteLater)

    def _on_connection_ready_read(self, connection: QLocalSocket) -> None:
        if not connection.canReadLine():
            return
        if connection.readLine().data() == SHOW_REQUEST:
            self.show_requested.emit()
            connection.write(SHOWN_REPLY)
            connection.flush()
        else:
            connection.abort()
