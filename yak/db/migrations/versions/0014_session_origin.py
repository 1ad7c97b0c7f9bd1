"""session origin: where a conversation was started

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07

A conversation keeps, in ``origin``, where it was started: ``window`` (the desktop app) or
``ask`` (a one-shot ``yak ask`` on the command line), so the window's conversation list can
mark the ones a command started. Conversations stored before are ``window``.
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chat_sessions") as batch:
        batch.add_column(
            sa.Column("origin", sa.String(16), nullable=False, server_default="window")
        )


def downgrade() -> None:
    with op.batch_alter_table("chat_sessions") as batch:
        batch.drop_column("origin")
