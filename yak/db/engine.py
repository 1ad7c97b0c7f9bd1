"""Opening the database: WAL, a busy timeout, foreign keys, Alembic migrations on start.

The app and the CLI share one SQLite file. WAL lets the CLI write while the app reads; the busy
timeout makes short write collisions wait instead of failing. Write transactions stay short.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from yak.errors import SchemaTooNew, StoreError

log = logging.getLogger(__name__)

DB_FILE = "yak.db"
BUSY_TIMEOUT_MS = 5000


def _on_connect(dbapi_conn: sqlite3.Connection, _record: object) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def translate(exc: Exception, path: Path | None = None) -> StoreError:
    """Turn a SQLAlchemy/sqlite3 error into a ``StoreError`` with a sentence a user can act on."""
    where = f" ({path})" if path else ""
    # The driver's own message only: str() of a SQLAlchemy error carries the SQL and its
    # parameters, which may hold a user's document and must not reach a user-facing sentence.
    detail = str(getattr(exc, "orig", None) or exc.__class__.__name__)
    message = detail.lower()
    if "locked" in message or "busy" in message:
        return StoreError(f"The Yak database{where} is busy in another program; try again.")
    if "readonly" in message or "read-only" in message:
        return StoreError(f"The Yak database{where} is read-only; check the folder's permissions.")
    if "disk" in message and ("full" in message or "i/o" in message):
        return StoreError(f"The disk holding the Yak database{where} is full or failing.")
    if "not a database" in message or "malformed" in message:
        return StoreError(f"The Yak database{where} is damaged: {detail}")
    if "unable to open" in message:
        return StoreError(f"The Yak database{where} cannot be opened; check the folder exists and "
                          "is writable.")
    log.error("database error (%s): %s", exc.__class__.__name__, detail)
    return StoreError(f"The Yak database{where} failed: {detail}")


def _alembic_config(connection: object | None = None) -> Config:
    config = Config()
    location = resources.files("yak.db") / "migrations"
    config.set_main_option("script_location", str(location))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


class Database:
    """The open database: an engine and a session factory.

    Use ``with db.session() as s:`` for one short transaction; SQLAlchemy and sqlite3 errors
    leave it as ``StoreError`` (commit on success, rollback on error).
    """

    def __init__(self, engine: Engine, path: Path | None) -> None:
        self.engine = engine
        self.path = path
        self._factory = sessionmaker(engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction; commits on success, rolls back and raises ``StoreError`` on failure."""
        try:
            with self._factory() as s, s.begin():
                yield s
        except (DBAPIError, SQLAlchemyError) as exc:
            raise translate(exc, self.path) from exc

    def data_version(self) -> int:
        """``PRAGMA data_version`` on a fresh connection: changes when another connection commits."""
        with self.engine.connect() as conn:
            return int(conn.execute(text("PRAGMA data_version")).scalar_one())

    def close(self) -> None:
        """Dispose of the engine's connections."""
        self.engine.dispose()


def open_database(data_dir: Path | None, *, migrate: bool = True) -> Database:
    """Open (creating if needed) and migrate the database in ``data_dir``.

    Args:
        data_dir: the folder holding ``yak.db``; ``None`` for a private in-memory database
            (tests and benchmarks only).
        migrate: apply pending Alembic migrations.

    Raises:
        SchemaTooNew: the database carries a migration this Yak does not know (a newer Yak
            wrote it); nothing is changed.
        StoreError: the file cannot be opened, read or written.
    """
    path = None if data_dir is None else Path(data_dir) / DB_FILE
    if path is None:
        from sqlalchemy.pool import StaticPool

        engine = create_engine("sqlite://", poolclass=StaticPool,
                               connect_args={"check_same_thread": False})
    else:
        engine = create_engine(f"sqlite:///{path}", connect_args={
            "check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000})
    event.listen(engine, "connect", _on_connect)
    db = Database(engine, path)
    if migrate:
        try:
            _migrate(db)
        except SchemaTooNew:
            db.close()
            raise
        except (DBAPIError, SQLAlchemyError) as exc:
            db.close()
            raise translate(exc, path) from exc
    return db


def _migrate(db: Database) -> None:
    script = ScriptDirectory.from_config(_alembic_config())
    known = {rev.revision for rev in script.walk_revisions()}
    with db.engine.begin() as conn:
        current = MigrationContext.configure(conn).get_current_heads()
        unknown = [rev for rev in current if rev not in known]
        if unknown:
            raise SchemaTooNew(
                f"The Yak database ({db.path}) was written by a newer version of Yak "
                f"(schema {', '.join(unknown)}); upgrade Yak to open it. Nothing was changed."
            )
        if set(current) == set(script.get_heads()):
            return
        log.info("migrating database %s from %s", db.path, current or "empty")
        command.upgrade(_alembic_config(conn), "head")
