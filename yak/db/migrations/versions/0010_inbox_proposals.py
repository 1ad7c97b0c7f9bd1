"""the review inbox: many proposals, each with its origin and its recorded outcome

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03

A proposal records who made it (``origin``: refresh, agent, import; ``client``: the agent's
client name), the version it became when accepted (``result_version``), the proposal that
superseded it (``superseded_by``) and, while it waits, the document version it no longer
applies to cleanly (``conflicts_with``). Existing proposals were all made by refreshes or by
agents; those with the ``agent`` flag become agent proposals ("The inbox" in docs/memory.md).
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_proposals") as batch:
        batch.add_column(
            sa.Column("origin", sa.String(16), nullable=False, server_default="refresh")
        )
        batch.add_column(sa.Column("client", sa.String(100), nullable=True))
        batch.add_column(sa.Column("result_version", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("superseded_by", sa.String(26), nullable=True))
        batch.add_column(sa.Column("conflicts_with", sa.Integer(), nullable=True))
    proposals = sa.table(
        "memory_proposals",
        sa.column("origin", sa.String()),
        sa.column("reasons", sa.Text()),
        sa.column("flags", sa.Text()),
    )
    # The flag "agent" marks every proposal made over MCP before origins were stored.
    op.execute(
        proposals.update()
        .where(sa.cast(proposals.c.flags, sa.Text()).like('%"agent"%'))
        .values(origin="agent")
    )


def downgrade() -> None:
    with op.batch_alter_table("memory_proposals") as batch:
        for column in ("conflicts_with", "superseded_by", "result_version", "client", "origin"):
            batch.drop_column(column)
