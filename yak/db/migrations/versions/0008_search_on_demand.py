"""memory search on demand: the index catches up when a search runs, not in every write

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

The triggers of 0005 re-indexed the whole document (every trigram of up to 40,000 characters,
deleted and inserted) inside every write's transaction: about 2.5 ms of each save and refresh
on a 190-line document, for an index that only a search reads. They go; the table
``memory_search_indexed`` records, per workspace, the document version its index entry holds
and that entry's rowid in ``memory_search``. A search first brings stale entries up to date
(``yak.db.search``), or, where it cannot write, reads the stale documents as well.

Only where 0005 made the index (SQLite with FTS5 and the trigram tokenizer); elsewhere nothing.
The entries 0005 made have the document's rowid and are current (the triggers kept them so).
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TRIGGERS = ("memory_search_insert", "memory_search_update", "memory_search_delete")
# 0005's triggers, as it made them (a migration is a snapshot: the downgrade puts them back).
TRIGGERS_0005 = (
    """CREATE TRIGGER memory_search_insert AFTER INSERT ON memory_documents BEGIN
        INSERT INTO memory_search(rowid, workspace_id, content)
        VALUES (new.rowid, new.workspace_id, new.content);
    END""",
    """CREATE TRIGGER memory_search_update AFTER UPDATE OF content, workspace_id
    ON memory_documents BEGIN
        DELETE FROM memory_search WHERE rowid = old.rowid;
        INSERT INTO memory_search(rowid, workspace_id, content)
        VALUES (new.rowid, new.workspace_id, new.content);
    END""",
    """CREATE TRIGGER memory_search_delete AFTER DELETE ON memory_documents BEGIN
        DELETE FROM memory_search WHERE rowid = old.rowid;
    END""",
)


def _has_index(bind: sa.engine.Connection) -> bool:
    if bind.dialect.name != "sqlite":
        return False
    found = bind.execute(
        sa.text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memory_search'")
    ).first()
    return found is not None


def upgrade() -> None:
    bind = op.get_bind()
    if not _has_index(bind):
        return
    for name in TRIGGERS:
        bind.execute(sa.text(f"DROP TRIGGER IF EXISTS {name}"))
    bind.execute(
        sa.text(
            "CREATE TABLE memory_search_indexed ("
            "workspace_id TEXT PRIMARY KEY NOT NULL, "
            "version INTEGER NOT NULL, "
            "entry INTEGER NOT NULL)"
        )
    )
    bind.execute(
        sa.text(
            "INSERT INTO memory_search_indexed(workspace_id, version, entry) "
            "SELECT workspace_id, version, rowid FROM memory_documents"
        )
    )


def downgrade() -> None:
    bind = op.get_bind()
    if not _has_index(bind):
        return
    bind.execute(sa.text("DROP TABLE IF EXISTS memory_search_indexed"))
    bind.execute(sa.text("DELETE FROM memory_search"))
    for trigger in TRIGGERS_0005:
        bind.execute(sa.text(trigger))
    bind.execute(
        sa.text(
            "INSERT INTO memory_search(rowid, workspace_id, content) "
            "SELECT rowid, workspace_id, content FROM memory_documents"
        )
    )
