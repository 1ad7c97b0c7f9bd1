"""keep in sync: the instruction file whose memory block follows every applied revision

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


# Plain ALTER TABLE, not a batch copy: copying ``workspaces`` would drop the old table, and
# with foreign keys on that deletes every row that references it.
def upgrade() -> None:
    op.add_column("workspaces", sa.Column("synced_file", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("workspaces", "synced_file")  # SQLite 3.35 or newer
