"""Opening the database: WAL, a busy timeout, foreign keys, Alembic migrations on start.

The app and the CLI share one SQLite file. WAL lets the CLI write while the app reads; the busy
timeout makes short write collisions wait instead of failing. Write transactions stay short.

Opening a database whose schema is current is cheap: the revision stored in ``alembic_version``
is compared with the head revision read from the migration files' ``revision`` lines
(:func:`head_revision`, a few small files read as text), and Alembic itself (with Mako and its
script machinery, about a quarter of ``yak memory show``'s start-up) is imported only when that
comparison does not settle it: a new, older or foreign schema, which Alembic then checks and
migrates exactly as before.

A database nobody may write (an immutable or read-only folder or file, a read-only mount) can
still be read by commands that only read: ``open_database(..., read_only_fallback=True)`` opens
it with SQLite's ``mode=ro`` and, when even that fails because WAL's shared-memory file cannot be
created next to it, ``immutable=1``. Commands that write get one sentence saying the database is
read-only.

With a database URL (``open_database(..., url=...)``) the same schema lives on a PostgreSQL
server instead (``yak.db.postgres``): migrations run under a server-side lock, and the
sentences name the server, never the password.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, OperationalError, ProgrammingError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from yak.db import postgres
from yak.db.schema import BUSY_TIMEOUT_MS, DB_FILE, SchemaBehind, head_revision
from yak.errors import SchemaTooNew, StoreError
from yak.paths import create_private_file
from yak.text import shown

T = TypeVar("T")

log = logging.getLogger(__name__)

# The longest file path SQLite's Unix and Windows file systems open (its ``SQLITE_MAX_PATHNAME``
# default): a longer one fails as "unable to open database file".
SQLITE_MAX_PATHNAME = 512

MMAP_BYTES = 64 * 1024 * 1024  # SQLite's memory-mapped read window (a ceiling, not an allocation)

# How a database that cannot be opened for writing is opened to read, in order: read-only
# (needs WAL's -shm file to exist or be creatable), then immutable (no locks, no -shm; changes
# still in the -wal file are not seen).
READ_ONLY_MODES = ("mode=ro", "mode=ro&immutable=1")

WAL_SWITCH_PAUSE_S = 0.01  # between tries to switch a new database to WAL (see _use_wal)


def _connect(database: str, *, uri: bool = False) -> sqlite3.Connection:
    """Open one SQLite connection to a file (every file connection Yak makes goes through here).

    Args:
        database: a file path, or a ``file:`` URI when ``uri`` is true.
        uri: ``database`` is a URI (read-only modes).
    """
    return sqlite3.connect(
        database, uri=uri, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
    )


def _on_connect(dbapi_conn: sqlite3.Connection, _record: object) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    _use_wal(cursor)
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    # Pages read through a memory map: a connection whose page cache another connection's write
    # made stale (every refresh writes) reads them back without a system call per page.
    cursor.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    cursor.close()


def _use_wal(cursor: sqlite3.Cursor) -> None:
    """Put the database in WAL mode (persistent: stored in the file, so only a new database, or
    one another program left in a rollback mode, is switched).

    Switching needs the exclusive lock. When several programs open a new database at once, each
    connection holds a shared lock and wants that exclusive one; SQLite then answers SQLITE_BUSY
    at once instead of calling the busy handler, which could deadlock (see "Sometimes Queries
    Return SQLITE_BUSY" in SQLite's WAL documentation and ``sqlite3_busy_handler``). The waiting
    the busy timeout stands for is done here instead, within the same time: the connection that
    backs off lets the other switch, and then finds the file in WAL mode.

    Raises:
        sqlite3.OperationalError: still busy after ``BUSY_TIMEOUT_MS``, or any other failure.
    """
    if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname != "SQLITE_BUSY" or time.monotonic() >= deadline:
                raise
        time.sleep(WAL_SWITCH_PAUSE_S)


def _on_connect_read_only(dbapi_conn: sqlite3.Connection, _record: object) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


def _sqlite_error_name(exc: BaseException | None) -> str:
    """The SQLite error name (``SQLITE_CANTOPEN``, ``SQLITE_READONLY_DIRECTORY``, …) behind
    ``exc`` or any exception it was raised from; ``""`` when there is none."""
    while exc is not None:
        name = getattr(exc, "sqlite_errorname", None) or getattr(
            getattr(exc, "orig", None), "sqlite_errorname", None
        )
        if name:
            return str(name)
        exc = exc.__cause__ or exc.__context__
    return ""


def _cannot_write(exc: BaseException) -> bool:
    """Whether opening failed because the file or its folder cannot be written (or the
    shared-memory file cannot be created), rather than because the file is damaged or busy."""
    name = _sqlite_error_name(exc)
    if name:
        return name.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM"))
    message = str(exc).lower()
    return "cannot be opened" in message or "read-only" in message


def translate(
    exc: Exception, path: Path | None = None, *, server: postgres.DatabaseUrl | None = None
) -> StoreError:
    """Turn a SQLAlchemy/sqlite3/psycopg error into a ``StoreError`` with a sentence a user can
    act on; ``server`` is the PostgreSQL database's URL (its password is scrubbed from the
    driver's message, and a failure to connect gets its own sentence)."""
    where = f" ({shown(path)})" if path else f" ({server.shown})" if server else ""
    # The driver's own message only: str() of a SQLAlchemy error carries the SQL and its
    # parameters, which may hold a user's document and must not reach a user-facing sentence.
    detail = str(getattr(exc, "orig", None) or exc.__class__.__name__)
    if server is not None:
        detail = postgres.scrub_options(server.scrub(postgres.first_line(detail)))
        sentence = postgres.connection_sentence(detail, server)
        if sentence is not None:
            log.info("cannot use the database server (%s): %s", exc.__class__.__name__, detail)
            return StoreError(server.scrub(sentence))
    message = detail.lower()
    if "locked" in message or "busy" in message:
        return StoreError(f"The Yak database{where} is busy in another program; try again.")
    if "readonly" in message or "read-only" in message:
        return StoreError(f"The Yak database{where} is read-only; check the folder's permissions.")
    if "disk" in message and ("full" in message or "i/o" in message):
        return StoreError(f"The disk holding the Yak database{where} is full or failing.")
    if "not a database" in message or "malformed" in message:
        return StoreError(f"The Yak database{where} is damaged: {detail}")
    if "unable to open" in message and path and len(os.fspath(path)) > SQLITE_MAX_PATHNAME:
        return StoreError(
            f"The Yak database{where} cannot be opened: its path has {len(os.fspath(path)):,} "
            f"characters, more than SQLite takes ({SQLITE_MAX_PATHNAME}); choose a data "
            "directory with a shorter path."
        )
    if "unable to open" in message:
        return StoreError(
            f"The Yak database{where} cannot be opened; check the folder exists and is writable."
        )
    # the StoreError carries the same detail to the user; the log file keeps it too
    log.info("database error (%s): %s", exc.__class__.__name__, detail)
    return StoreError(f"The Yak database{where} failed: {detail}")


_DATA_VERSION = "yak_data_version"  # a pooled connection's last ``PRAGMA data_version``


class Database:
    """The open database: an engine and a session factory.

    Use ``with db.session() as s:`` for one short transaction; SQLAlchemy and sqlite3 errors
    leave it as ``StoreError`` (commit on success, rollback on error). ``read_only`` is true
    when it was opened read-only (``read_only_fallback``); a write then raises ``StoreError``
    ("… is read-only; …").
    """

    def __init__(
        self,
        engine: Engine,
        path: Path | None,
        *,
        read_only: bool = False,
        server: postgres.DatabaseUrl | None = None,
    ) -> None:
        self.engine = engine
        self.path = path
        self.server = server
        self.read_only = read_only
        self._factory = sessionmaker(engine, expire_on_commit=False)
        self._together = threading.local()  # .session: the transaction of together(), if any
        # SQLite's data_version compares only within one connection, and the pool hands out
        # several: each connection's last value is kept with it (its pool record's ``info``),
        # and this counts the connections that saw a move (or were new).
        self._moves = 0
        self._moves_lock = threading.Lock()

    @property
    def shared(self) -> bool:
        """Whether this is a team database on a PostgreSQL server (several machines use it)."""
        return self.server is not None

    @property
    def where(self) -> str:
        """The database as sentences name it: the SQLite file's path, the server's URL without
        its password, or ``in memory``."""
        if self.server is not None:
            return self.server.shown
        return str(self.path) if self.path is not None else "in memory"

    def translate(self, exc: Exception) -> StoreError:
        """A driver error of this database as a ``StoreError`` (see :func:`translate`)."""
        return translate(exc, self.path, server=self.server)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction; commits on success, rolls back and raises ``StoreError`` on failure.
        Inside :meth:`together` on the same thread: that transaction."""
        outer = getattr(self._together, "session", None)
        if outer is not None:
            try:
                yield outer
            except (DBAPIError, SQLAlchemyError) as exc:
                raise self.translate(exc) from exc
            return
        try:
            with self._factory() as s, s.begin():
                yield s
        except (DBAPIError, SQLAlchemyError) as exc:
            raise self.translate(exc) from exc

    def together(self, work: Callable[[], T]) -> T:
        """``work()`` with every :meth:`session` it opens on this thread in one transaction
        (one session and one commit instead of one per repository call); a ``together`` inside
        joins it. An error leaving ``work`` rolls all of it back; ``work`` must not carry
        on past a database error it caught (the transaction may be unusable). Raises what
        ``work`` raises (``StoreError`` for the database)."""
        if getattr(self._together, "session", None) is not None:
            return work()
        with self.session() as s:
            self._together.session = s
            try:
                return work()
            finally:
                self._together.session = None

    def data_version(self) -> int:
        """A number that moves when another connection commits a write: on SQLite a count of
        the moves of ``PRAGMA data_version`` (per pooled connection: its values compare only
        within that connection, and a connection not asked before counts as a move), on
        PostgreSQL the transaction-id horizon. A hint either way: it may also move for a write
        of this process or, on a server, elsewhere; it never stays still after another
        process's commit. Raises ``StoreError``."""
        try:
            with self.engine.connect() as conn:
                if self.server is not None:
                    return postgres.commit_position(conn)
                value = int(conn.execute(text("PRAGMA data_version")).scalar_one())
                info = conn.connection.info
                with self._moves_lock:
                    if info.get(_DATA_VERSION) != value:
                        info[_DATA_VERSION] = value
                        self._moves += 1
                    return self._moves
        except SQLAlchemyError as exc:
            raise self.translate(exc) from exc

    def close(self) -> None:
        """Dispose of the engine's connections."""
        self.engine.dispose()


def open_database(
    data_dir: Path | None,
    *,
    migrate: bool = True,
    read_only_fallback: bool = False,
    url: str | None = None,
) -> Database:
    """Open (creating if needed) and migrate the database in ``data_dir``, or on the
    PostgreSQL server ``url`` names.

    Args:
        data_dir: the folder holding ``yak.db``; ``None`` for a private in-memory database
            (tests and benchmarks only). Ignored with ``url``.
        url: a PostgreSQL URL (``postgresql://user:password@host:port/database``): the team
            database; the database must exist, Yak creates its tables.
        migrate: apply pending Alembic migrations.
        read_only_fallback: when the database exists but cannot be opened for writing (a
            read-only or immutable file or folder), open it read-only instead, without
            migrating (for commands that only read). Without it, that case raises a
            ``StoreError`` saying the database is read-only.

    Raises:
        SchemaTooNew: the database carries a migration this Yak does not know (a newer Yak
            wrote it); nothing is changed.
        StoreError: the file cannot be opened, read or written; it is read-only (and
            ``read_only_fallback`` is false, or its schema is older than this Yak's).
    """
    if url:
        return _open_server(postgres.parse_url(url), migrate=migrate)
    path = None if data_dir is None else Path(data_dir) / DB_FILE
    try:
        return _open_read_write(path, migrate=migrate)
    except StoreError as exc:
        if (
            path is None
            or isinstance(exc, SchemaTooNew)
            or not path.is_file()
            or not _cannot_write(exc)
        ):
            raise
        original = exc
    try:
        db = _open_read_only(path)
    except (SchemaTooNew, SchemaBehind):
        raise
    except StoreError as exc:
        log.info("read-only open of %s failed too: %s", path, exc)
        raise original from None
    if read_only_fallback:
        log.info("opened %s read-only (%s)", path, original)
        return db
    db.close()
    raise StoreError(
        f"The Yak database ({shown(path)}) is read-only; make it and its folder writable "
        "to save changes. Nothing was changed."
    ) from original


def _open_read_write(path: Path | None, *, migrate: bool) -> Database:
    if path is None:
        engine = create_engine(
            "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
    else:
        file = str(path)
        try:
            create_private_file(path)  # SQLite gives its -wal and -shm files the same mode
        except OSError as exc:
            log.info("could not create %s ahead of SQLite: %s", path, exc)
        engine = create_engine(f"sqlite:///{path}", creator=lambda: _connect(file))
    event.listen(engine, "connect", _on_connect)
    db = Database(engine, path)
    if migrate:
        with _closed_on_error(db):
            _migrate(db)
    return db


def _open_server(server: postgres.DatabaseUrl, *, migrate: bool) -> Database:
    """Connect to the team database and migrate it.

    Raises:
        SchemaTooNew: a newer Yak migrated it.
        StoreError: the URL is wrong, the server cannot be reached or refuses the credentials.
    """
    engine = create_engine(server.url, pool_pre_ping=True, pool_size=4, max_overflow=8)
    db = Database(engine, None, server=server)
    with _closed_on_error(db):
        if migrate:
            _migrate(db)
        else:
            with engine.connect():
                pass
    return db


@contextmanager
def _closed_on_error(db: Database) -> Iterator[None]:
    """Close ``db`` when the block fails (migrating it, checking it); a driver error leaves
    as ``db.translate``'s ``StoreError``, ``SchemaTooNew`` and the rest as they are."""
    try:
        yield
    except (DBAPIError, SQLAlchemyError) as exc:
        db.close()
        raise db.translate(exc) from exc
    except BaseException:
        db.close()
        raise


def _open_read_only(path: Path) -> Database:
    """Open an existing database read-only, trying each of ``READ_ONLY_MODES``; never migrates.

    Raises:
        SchemaTooNew: a newer Yak wrote it.
        StoreError: no mode can read it, or its schema is older than this Yak's (it cannot be
            upgraded without writing).
    """
    base = "file:" + quote(path.resolve().as_posix(), safe="/:")
    failure: StoreError | None = None
    for mode in READ_ONLY_MODES:
        uri = f"{base}?{mode}"
        engine = create_engine(f"sqlite:///{path}", creator=lambda uri=uri: _connect(uri, uri=True))
        event.listen(engine, "connect", _on_connect_read_only)
        db = Database(engine, path, read_only=True)
        try:
            _check_schema(db)
        except StoreError:
            db.close()
            raise
        except (DBAPIError, SQLAlchemyError) as exc:
            db.close()
            failure = translate(exc, path)
            if not _cannot_write(exc):
                raise failure from exc
            continue
        if "immutable" in mode:
            wal = path.with_name(path.name + "-wal")
            if wal.is_file() and wal.stat().st_size > 0:
                log.warning(
                    "%s is read-only and its last changes are still in %s; they are "
                    "not shown until Yak can write there again",
                    path,
                    wal.name,
                )
        return db
    assert failure is not None
    raise failure


def stored_revisions(db: Database) -> set[str] | None:
    """The revision ids in the database's ``alembic_version`` table, read with one plain query
    (the table Alembic keeps); ``None`` when there is no such table (a new or foreign file).

    Raises:
        DBAPIError: the file cannot be read (the callers translate it).
    """
    with db.engine.connect() as conn:
        try:
            rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").all()
        except (OperationalError, ProgrammingError) as exc:
            message = str(exc.orig).lower()
            if "no such table" in message or "does not exist" in message:
                return None
            raise
    return {str(row[0]) for row in rows}


def _at_head(db: Database) -> bool:
    """Whether the database is certainly at this Yak's newest migration, decided without
    Alembic. ``False`` means "ask Alembic" (new, older, newer or unusual), not "behind"."""
    head = head_revision()
    return head is not None and stored_revisions(db) == {head}


def _check_schema(db: Database) -> None:
    """Check, without writing, that the database's schema is this Yak's (Alembic is loaded
    only when :func:`_at_head` cannot tell, see ``yak.db.migrate``).

    Raises:
        SchemaTooNew: a newer Yak wrote it.
        StoreError: it is older than this Yak's (needs a migration, which needs writing).
    """
    if _at_head(db):
        return
    from yak.db import migrate

    migrate.check_schema(db)


def _migrate(db: Database) -> None:
    """Bring the schema to the newest migration; the usual case (already current) is answered
    by :func:`_at_head`, without Alembic (see ``yak.db.migrate``)."""
    if _at_head(db):
        return
    from yak.db import migrate

    migrate.upgrade(db)
