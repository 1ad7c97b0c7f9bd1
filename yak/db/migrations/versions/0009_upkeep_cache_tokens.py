"""refresh attempts keep their prompt-cache tokens

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03

A refresh request marks prompt-cache breakpoints after the rules and after the numbered
document ("Cached requests" in docs/refresh.md), so its input splits three ways: uncached,
written to the cache and read from it. ``input_tokens`` keeps the uncached part as before; two
columns keep the other two, for the memory's upkeep figures (``yak memory stats``, Settings ›
Memory). Attempts stored before this have 0 in both.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("refresh_attempts") as batch:
        batch.add_column(
            sa.Column("cache_write_tokens", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("cache_read_tokens", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("refresh_attempts") as batch:
        batch.drop_column("cache_read_tokens")
        batch.drop_column("cache_write_tokens")
