"""shared identity: a workspace of a team database keyed by its git remote

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

``workspaces.shared_key`` holds the identity (``git:<host>/<repo>//<folder inside>``) of a
workspace keyed by its repository's remote rather than by its path; its ``path`` is then the
folder on the machine that opened it last, which another machine's unrelated folder may share,
so on PostgreSQL the path is no longer unique. SQLite keeps the constraint (shared identity is
used on a team database only, and dropping it there would mean rebuilding the table).
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


# Plain ALTER TABLE, not a batch copy: copying ``workspaces`` would drop the old table, and
# with foreign keys on that deletes every row that references it.
def upgrade() -> None:
    op.add_column("workspaces", sa.Column("shared_key", sa.Text(), nullable=True))
    op.create_index("ix_workspaces_shared_key", "workspaces", ["shared_key"], unique=True)
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint("uq_workspaces_path", "workspaces", type_="unique")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.create_unique_constraint("uq_workspaces_path", "workspaces", ["path"])
    op.drop_index("ix_workspaces_shared_key", table_name="workspaces")
    op.drop_column("workspaces", "shared_key")  # SQLite 3.35 or newer
