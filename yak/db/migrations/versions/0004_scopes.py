"""scopes: orphaned workspaces declined as a folder's predecessor, workspaces sharing another's
document

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "declined_renames",
        sa.Column("folder", sa.Text(), nullable=False),
        sa.Column("workspace_id", sa.String(length=35), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_declined_renames_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("folder", "workspace_id", name=op.f("pk_declined_renames")),
    )
    op.create_table(
        "workspace_links",
        sa.Column("workspace_id", sa.String(length=35), nullable=False),
        sa.Column("target_id", sa.String(length=35), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_workspace_links_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["workspaces.id"],
            name=op.f("fk_workspace_links_target_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("workspace_id", name=op.f("pk_workspace_links")),
    )


def downgrade() -> None:
    op.drop_table("workspace_links")
    op.drop_table("declined_renames")
