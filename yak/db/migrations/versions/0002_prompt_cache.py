"""prompt cache: per-session prompt snapshot, cache token usage per message

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chat_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("prompt_snapshot", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("snapshot_memory_version", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("noted_memory_version", sa.Integer(), nullable=True))
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "cache_creation_input_tokens", sa.Integer(), server_default="0", nullable=False
            )
        )
        batch_op.add_column(
            sa.Column("cache_read_input_tokens", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.drop_column("cache_read_input_tokens")
        batch_op.drop_column("cache_creation_input_tokens")
    with op.batch_alter_table("chat_sessions", schema=None) as batch_op:
        batch_op.drop_column("noted_memory_version")
        batch_op.drop_column("snapshot_memory_version")
        batch_op.drop_column("prompt_snapshot")
