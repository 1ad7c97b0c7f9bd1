"""proposal owner: the MCP server process that made an agent's proposal

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07

An agent's proposal keeps, in ``owner`` (NULL for every other proposal), the id of the ``yak
mcp`` server process that took it (``mcp_`` and a ULID, new for each start). Withdrawing a
proposal and listing "your proposals" go by this id, never by the client's self-reported name,
which two agents may share ("The MCP server" in docs/memory.md). Proposals written before have
none: no agent can withdraw them, the developer still can reject them.
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_proposals") as batch:
        batch.add_column(sa.Column("owner", sa.String(40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("memory_proposals") as batch:
        batch.drop_column("owner")
