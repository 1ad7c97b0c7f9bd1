"""held lines: why a proposal waits, as data beside its reasons

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05

A proposal keeps, in ``held_lines`` (JSON text, NULL when there is none), each reason it waits
as a kind and its details: a list of ``{"kind", "line"}`` objects, with ``"detail"`` (the
token not said, the number of the line restated…) and ``"lines"`` when they have any ("The
inbox" in docs/memory.md). Its ``reasons`` still hold the sentences. Proposals written before
have none; the review dialog then names no reason beside their added lines.
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_proposals") as batch:
        batch.add_column(sa.Column("held_lines", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("memory_proposals") as batch:
        batch.drop_column("held_lines")
