"""memory search: an FTS5 (trigram) index of the current documents, kept by triggers

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Made only where SQLite has FTS5 and its trigram tokenizer (SQLite 3.34 or newer); elsewhere
nothing is created and searches scan the documents ("Search" in docs/memory.md).
"""

import logging

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

log = logging.getLogger(__name__)

TRIGGERS = (
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


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    try:
        with bind.begin_nested():
            bind.execute(
                sa.text(
                    "CREATE VIRTUAL TABLE memory_search USING "
                    "fts5(workspace_id UNINDEXED, content, tokenize='trigram')"
                )
            )
    except sa.exc.OperationalError as exc:  # no FTS5, or no trigram tokenizer (before 3.34)
        log.warning("no full-text index for memory search (%s); searches scan", exc.orig)
        return
    for trigger in TRIGGERS:
        bind.execute(sa.text(trigger))
    bind.execute(
        sa.text(
            "INSERT INTO memory_search(rowid, workspace_id, content) "
            "SELECT rowid, workspace_id, content FROM memory_documents"
        )
    )


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    for name in ("memory_search_insert", "memory_search_update", "memory_search_delete"):
        bind.execute(sa.text(f"DROP TRIGGER IF EXISTS {name}"))
    bind.execute(sa.text("DROP TABLE IF EXISTS memory_search"))
