"""trusted memory: change summaries, review mode, proposals, tombstones

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

import difflib

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def _changes(old: str, new: str) -> tuple[int, int]:
    """Lines added and removed (the same rule as ``yak.linediff.line_changes``, kept here so the
    migration does not change when the code does)."""
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    added = removed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def upgrade() -> None:
    with op.batch_alter_table("workspaces", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("review_mode", sa.String(length=8), server_default="auto", nullable=False)
        )
    with op.batch_alter_table("memory_revisions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("added", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("removed", sa.Integer(), server_default="0", nullable=False))
    with op.batch_alter_table("refresh_attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("added", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("removed", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("proposal_id", sa.String(length=26), nullable=True))
    op.create_table(
        "memory_proposals",
        sa.Column("id", sa.String(length=26), nullable=False),
        sa.Column("workspace_id", sa.String(length=35), nullable=False),
        sa.Column("base_version", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("added", sa.Integer(), nullable=False),
        sa.Column("removed", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("model", sa.String(length=100), nullable=True),
        sa.Column("session_ids", sa.JSON(), nullable=False),
        sa.Column("watermarks", sa.JSON(), nullable=False),
        sa.Column("flags", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("decided_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_memory_proposals_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_proposals")),
    )
    with op.batch_alter_table("memory_proposals", schema=None) as batch_op:
        batch_op.create_index(
            "ix_memory_proposals_workspace_status", ["workspace_id", "status"], unique=False
        )
    op.create_table(
        "memory_tombstones",
        sa.Column("workspace_id", sa.String(length=35), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_memory_tombstones_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("workspace_id", "key", name=op.f("pk_memory_tombstones")),
    )
    _backfill_revision_changes()


def _backfill_revision_changes() -> None:
    """Every stored revision gets its added/removed lines against the one before it (one pass
    per workspace, oldest first; a revision whose text cannot be read keeps 0 and 0)."""
    bind = op.get_bind()
    # As bytes: SQLite may hold text that is not UTF-8; PostgreSQL's text always is.
    raw = (
        "convert_to(content, 'UTF8')"
        if bind.dialect.name == "postgresql"
        else "CAST(content AS BLOB)"
    )
    rows = bind.execute(
        sa.text(
            f"SELECT id, workspace_id, {raw} FROM memory_revisions "
            "ORDER BY workspace_id, version, id"
        )
    ).all()
    previous: dict[str, str] = {}
    for revision_id, workspace_id, raw in rows:
        text = bytes(raw or b"").decode("utf-8", "replace")
        added, removed = _changes(previous.get(workspace_id, ""), text)
        previous[workspace_id] = text
        if added or removed:
            bind.execute(
                sa.text("UPDATE memory_revisions SET added = :a, removed = :r WHERE id = :id"),
                {"a": added, "r": removed, "id": revision_id},
            )


def downgrade() -> None:
    op.drop_table("memory_tombstones")
    with op.batch_alter_table("memory_proposals", schema=None) as batch_op:
        batch_op.drop_index("ix_memory_proposals_workspace_status")
    op.drop_table("memory_proposals")
    with op.batch_alter_table("refresh_attempts", schema=None) as batch_op:
        batch_op.drop_column("proposal_id")
        batch_op.drop_column("removed")
        batch_op.drop_column("added")
    with op.batch_alter_table("memory_revisions", schema=None) as batch_op:
        batch_op.drop_column("removed")
        batch_op.drop_column("added")
    with op.batch_alter_table("workspaces", schema=None) as batch_op:
        batch_op.drop_column("review_mode")
