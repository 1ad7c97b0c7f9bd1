"""line confirmations: a person said a memory line still holds

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07

``yak memory stale --keep`` (and the panel's Keep) records, per workspace and folded line
(``yak.memory.provenance.fold_line``), when a person last confirmed it: the line's age counts
from then ("Age and staleness" in docs/memory.md).
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_confirmations",
        sa.Column("workspace_id", sa.String(length=35), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("confirmed_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_memory_confirmations_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("workspace_id", "key", name=op.f("pk_memory_confirmations")),
    )


def downgrade() -> None:
    op.drop_table("memory_confirmations")
