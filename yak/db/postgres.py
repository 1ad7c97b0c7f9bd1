"""A PostgreSQL team database (``YAK_DATABASE_URL`` / ``--database-url``), through psycopg 3.

What differs from the local SQLite file lives here: reading the URL (the password never reaches
a sentence, a log line or ``--json``), the sentences for a server that cannot be reached or
refuses the credentials, and the refresh lock held in the database (a session advisory lock per
workspace, so one refresh per workspace runs at a time across machines; a crashed holder's
connection closes and the server frees it). The schema, the migrations and the repositories are
the same as on SQLite. See ``docs/workspaces.md``, "The team database".
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from sqlalchemy import text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError

from yak.errors import StoreError

log = logging.getLogger(__name__)

SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
CONNECT_TIMEOUT_S = 10
POLL_S = 1.0  # seconds between tries of a refresh lock another machine holds

# The advisory-lock namespaces (the first key of pg_advisory_lock(int4, int4)): "yakm", "yakr".
MIGRATION_LOCK = 0x79616B6D
REFRESH_LOCK = 0x79616B72


@dataclass(frozen=True)
class DatabaseUrl:
    """A parsed PostgreSQL URL.

    Attributes:
        url: what SQLAlchemy connects with (driver ``postgresql+psycopg``).
        shown: the URL as sentences show it: ``postgresql://user@host:port/database``, never the
            password nor the query.
        secrets: the password as written and decoded, to scrub from any driver message.
    """

    url: URL
    shown: str
    secrets: tuple[str, ...]

    def scrub(self, message: str) -> str:
        """``message`` with every spelling of the password replaced by ``***``."""
        for secret in self.secrets:
            message = message.replace(secret, "***")
        return message


def parse_url(raw: str) -> DatabaseUrl:
    """Read a ``YAK_DATABASE_URL``: ``postgresql://user:password@host:port/database``
    (``postgres://`` too; libpq's query options such as ``sslmode`` pass through).

    Raises:
        StoreError: not a PostgreSQL URL, or no database named; the sentence never holds the
            password.
    """
    raw = raw.strip()
    try:
        parts = urlsplit(raw)
    except ValueError:  # e.g. an unclosed IPv6 bracket; the text may hold a password
        raise StoreError(
            "The database URL cannot be read; write it as "
            "postgresql://user:password@host:port/database."
        ) from None
    if parts.scheme.lower() not in SCHEMES:
        # Not a URL Yak can read, so not one it can scrub: nothing of it is shown (a password
        # may be anywhere in "user:pw@host" or "host=… password=…").
        raise StoreError(
            "The database URL is not a PostgreSQL URL (it must start with postgresql://); "
            "write it as postgresql://user:password@host:port/database."
        )
    userinfo, _, hostinfo = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    secrets = {password, unquote(password)}
    secrets.update(v for k, v in parse_qsl(parts.query) if k.lower() == "password")
    secrets.discard("")
    found = tuple(sorted(secrets, key=len, reverse=True))
    shown = f"{parts.scheme}://{user + '@' if user else ''}{hostinfo}{parts.path}"
    for secret in found:
        shown = shown.replace(secret, "***")
    try:
        url = make_url(raw).set(drivername="postgresql+psycopg")
    except (ArgumentError, ValueError):
        raise StoreError(
            f"The database URL {shown} cannot be read; write it as "
            "postgresql://user:password@host:port/database."
        ) from None
    if not url.database:
        raise StoreError(
            f"The database URL {shown} names no database; add it after the host, as in "
            "postgresql://user@host/yak."
        )
    if "connect_timeout" not in url.query:
        url = url.update_query_dict({"connect_timeout": str(CONNECT_TIMEOUT_S)})
    return DatabaseUrl(url=url, shown=shown, secrets=found)


def connection_sentence(detail: str, where: DatabaseUrl) -> str | None:
    """The sentence for a driver message about connecting (server down, credentials refused,
    no such database), or ``None`` when ``detail`` is about something else."""
    message = detail.lower()
    url = where.url
    server = f"{url.host or 'localhost'}:{url.port or 5432}"
    if "password authentication failed" in message or "no password supplied" in message:
        return (
            f"The PostgreSQL server at {server} refused user {url.username or '(none)'!r}: "
            "wrong user or password in the database URL."
        )
    if "does not exist" in message and "database" in message:
        return (
            f"The PostgreSQL server at {server} has no database {url.database!r}; create it "
            f"(createdb {url.database}) or fix the database URL."
        )
    if "role" in message and "does not exist" in message:
        return (
            f"The PostgreSQL server at {server} has no user {url.username or '(none)'!r}; "
            "fix the database URL."
        )
    if any(
        sign in message
        for sign in (
            "connection refused",
            "could not connect",
            "connection failed",
            "timeout expired",
            "could not translate host name",
            "name or service not known",
            "server closed the connection",
            "terminating connection",
            "no route to host",
        )
    ):
        return (
            f"Cannot reach the PostgreSQL server at {server} (is it running, and is the "
            "database URL right?); nothing was changed."
        )
    return None


def first_line(detail: str) -> str:
    """The first non-empty line of a driver message (psycopg's messages span several)."""
    for line in detail.splitlines():
        if line.strip():
            return line.strip()
    return detail.strip()


def migration_lock(conn: Connection) -> None:
    """Hold the migration lock until ``conn``'s transaction ends (two machines upgrading one
    server at once: the second waits, then finds the schema current)."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:ns, 0)"), {"ns": MIGRATION_LOCK})


def commit_position(conn: Connection) -> int:
    """A number that moves when any transaction that wrote has started since (the newest
    transaction id's horizon): the PostgreSQL counterpart of SQLite's ``data_version``."""
    query = "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint"
    return int(conn.execute(text(query)).scalar_one())


def _lock_key(workspace_id: str) -> int:
    """A workspace's advisory-lock key: 31 bits of the SHA-256 of its id (int4)."""
    return int.from_bytes(hashlib.sha256(workspace_id.encode()).digest()[:4], "big") & 0x7FFFFFFF


class AdvisoryRefreshLock:
    """The refresh lock in the database: ``pg_try_advisory_lock`` per workspace, held on a
    connection of its own for as long as the refresh runs (implements ``yak.ports.RefreshLock``).

    Any Yak on any machine using the same server sees it; when the holder's process dies, its
    connection closes and the server frees the lock. Acquiring never blocks the event loop:
    each try is one quick query on a worker thread, repeated every ``POLL_S`` seconds.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._held: dict[str, Any] = {}

    def _try(self, workspace_id: str) -> Any | None:
        connection = self._engine.raw_connection()
        connection.detach()  # its own session: closing it really ends the session and the lock
        try:
            cursor = connection.cursor()
            cursor.execute(
                "SELECT pg_try_advisory_lock(%s, %s)", (REFRESH_LOCK, _lock_key(workspace_id))
            )
            row = cursor.fetchone()
            connection.commit()
        except BaseException:
            connection.close()
            raise
        if row is not None and row[0]:
            return connection
        connection.close()
        return None

    async def acquire(self, workspace_id: str, *, wait_s: float) -> bool:
        """Take the workspace's lock, waiting up to ``wait_s`` seconds.

        Returns:
            True when held, False when another Yak kept it for ``wait_s`` seconds.

        Raises:
            asyncio.CancelledError: cancelled while waiting (a lock taken meanwhile is freed).
            StoreError: the server cannot be reached.
        """
        deadline = time.monotonic() + wait_s
        while True:
            attempt = asyncio.ensure_future(asyncio.to_thread(self._try, workspace_id))
            try:
                connection = await asyncio.shield(attempt)
            except asyncio.CancelledError:
                attempt.add_done_callback(_close_if_taken)
                raise
            except Exception as exc:
                raise StoreError(
                    "The refresh lock in the team database cannot be taken: "
                    f"{first_line(str(getattr(exc, 'orig', None) or exc))}"
                ) from None
            if connection is not None:
                self._held[workspace_id] = connection
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))

    def release(self, workspace_id: str) -> None:
        """Release the workspace's lock (nothing when it is not held): its connection is
        closed, which frees every session lock on it."""
        connection = self._held.pop(workspace_id, None)
        if connection is not None:
            try:
                connection.close()
            except Exception as exc:  # the server frees the lock with the session anyway
                log.warning("closing the refresh lock's connection failed: %s", exc)


def _close_if_taken(done: asyncio.Future[Any]) -> None:
    if not done.cancelled() and done.exception() is None and done.result() is not None:
        done.result().close()


_PASSWORD_IN_TEXT = re.compile(r"(password=)\S+", re.IGNORECASE)


def scrub_options(message: str) -> str:
    """``password=…`` in a libpq connection string shown in a message, replaced by ``***``."""
    return _PASSWORD_IN_TEXT.sub(r"\1***", message)
