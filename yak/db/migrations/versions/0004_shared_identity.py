"""shared identity: a workspace of a team database keyed by its git remote

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

``workspaces.shared_key`` holds the identity (``git:<host>/<repo>//<folder inside>``) of a
workspace keyed by its repository's remote rather than by its path; its ``path`` is then the
folder on the machine that opened it last, which another machine's unrelated folder may share,
so on PostgreSQL the path is no longer unique. SQLite keeps the constraint (shared identity is
used on a team database only, and dropping it there would mean rebuilding the table).
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workspaces", schema=None) as batch_op:
        batch_op.add_column(sa.Column("shared_key", sa.Text(), nullable=True))
    op.create_index("ix_workspaces_shared_key", "workspaces", ["shared_key"], unique=True)
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint("uq_workspaces_path", "workspaces", type_="unique")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.create_unique_constraint("uq_workspaces_path", "workspaces", ["path"])
    op.drop_index("ix_workspaces_shared_key", table_name="workspaces")
    with op.batch_alter_table("workspaces", schema=None) as batch_op:
        batch_op.drop_column("shared_key")
