"""Alembic's part of opening a database: judging a schema that is not certainly current, and
upgrading it.

Imported only when ``yak.db.engine`` cannot tell from the stored revision alone that the schema
is this Yak's newest (a new, older, newer or unusual database): Alembic, with Mako and its
script machinery, is about a quarter of a reading command's start-up.
"""

from __future__ import annotations

import logging
from importlib import resources
from typing import TYPE_CHECKING

from alembic import command
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from filelock import FileLock, Timeout
from sqlalchemy.engine import Connection

from yak import paths
from yak.db import postgres
from yak.db.schema import SchemaBehind
from yak.errors import SchemaTooNew, StoreError
from yak.text import shown

if TYPE_CHECKING:  # the engine imports this module when a schema needs Alembic, not back
    from alembic.config import Config

    from yak.db.engine import Database

log = logging.getLogger(__name__)

MIGRATION_LOCK_TIMEOUT_S = 60.0


def alembic_config(connection: object | None = None) -> Config:
    """Alembic's configuration for Yak's migrations (``yak/db/migrations``), with
    ``connection`` (a SQLAlchemy connection) for the migration environment to use."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resources.files("yak.db") / "migrations"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def check_schema(db: Database) -> None:
    """Check, without writing, that the database's schema is this Yak's.

    Raises:
        SchemaTooNew: a newer Yak wrote it.
        StoreError: it is older than this Yak's (``SchemaBehind``: needs a migration, which
            needs writing).
    """
    script = ScriptDirectory.from_config(alembic_config())
    with db.engine.connect() as conn:
        if _is_current(conn, db, script):
            return
        current = MigrationContext.configure(conn).get_current_heads()
    if not current:
        raise SchemaBehind(
            f"The Yak database ({shown(db.path)}) is read-only and holds no Yak data yet; make it "
            "writable once so Yak can set it up."
        )
    raise SchemaBehind(
        f"The Yak database ({shown(db.path)}) is read-only and was written by an older version of "
        "Yak; make it writable once so this Yak can upgrade it."
    )


def upgrade(db: Database) -> None:
    """Bring the schema to the newest migration.

    The app and the CLI may open a new database at the same moment; without a lock both would
    create the tables and one would fail. Checking is lock-free; upgrading happens under a
    lock file beside the database (the server's own lock on PostgreSQL), re-checked once held.
    """
    script = ScriptDirectory.from_config(alembic_config())
    if _schema_is_current(db, script):
        return
    if db.server is not None or db.path is None:  # the server's lock, or a private database
        _upgrade(db, script)
        return
    lock = FileLock(
        str(db.path) + ".migrate-lock",
        timeout=MIGRATION_LOCK_TIMEOUT_S,
        mode=paths.PRIVATE_FILE_MODE,
    )
    try:
        with lock:
            _upgrade(db, script)
    except Timeout:
        raise StoreError(
            f"The Yak database ({db.where}) is being upgraded by another Yak "
            "program that has not finished; try again in a minute."
        ) from None


def _schema_is_current(db: Database, script: ScriptDirectory) -> bool:
    """Whether the database is at the newest migration; refuses one from a newer Yak."""
    with db.engine.connect() as conn:
        return _is_current(conn, db, script)


def _is_current(conn: Connection, db: Database, script: ScriptDirectory) -> bool:
    """Whether the schema on ``conn`` is at the newest migration.

    Raises:
        SchemaTooNew: it carries a migration this Yak does not know.
    """
    known = {rev.revision for rev in script.walk_revisions()}
    current = MigrationContext.configure(conn).get_current_heads()
    unknown = [rev for rev in current if rev not in known]
    if unknown:
        raise SchemaTooNew(
            f"The Yak database ({db.where}) was written by a newer version of Yak "
            f"(schema {', '.join(unknown)}); upgrade Yak to open it. Nothing was changed."
        )
    return set(current) == set(script.get_heads())


def _upgrade(db: Database, script: ScriptDirectory) -> None:
    """Apply pending migrations (the caller holds the migration lock; on PostgreSQL the
    upgrade's own transaction takes the server's, and PostgreSQL's DDL is transactional, so a
    failed upgrade leaves nothing half done)."""
    if db.server is None and _schema_is_current(db, script):  # finished while we waited
        return
    with db.engine.begin() as conn:
        if db.server is not None:
            postgres.migration_lock(conn)
            if _is_current(conn, db, script):
                return
        current = MigrationContext.configure(conn).get_current_heads()
        log.info("migrating database %s from %s", db.where, current or "empty")
        command.upgrade(alembic_config(conn), "head")
