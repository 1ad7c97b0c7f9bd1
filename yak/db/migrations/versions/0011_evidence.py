"""evidence per line: the passage of a conversation behind each line a refresh wrote

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04

A revision and a proposal keep, in ``evidence`` (JSON text, NULL when there is none), the
passages that back the lines a refresh added or changed: a list of ``{"line", "session_id",
"message_id", "speaker", "quote"}`` ("Evidence" in docs/memory.md). Revisions and proposals
written before have none; their refresh lines read "no evidence recorded".
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_TABLES = ("memory_revisions", "memory_proposals")


def upgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("evidence", sa.Text(), nullable=True))


def downgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("evidence")
