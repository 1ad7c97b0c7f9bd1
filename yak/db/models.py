"""SQLAlchemy 2 ORM models. Every schema change also gets an Alembic migration under
``migrations/versions``; the app and the CLI migrate the database on start.

ORM objects never leave ``yak.db``: the repositories convert them to ``yak.domain`` values.
Timestamps are stored as UTC (naive in SQLite, made aware on the way out by ``UTCDateTime``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from yak.domain import DEFAULT_SESSION_TITLE

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A datetime stored naive-UTC and returned timezone-aware UTC."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: object) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored; use datetime.now(UTC)")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: object) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


def utcnow() -> datetime:
    """Now, timezone-aware UTC."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class WorkspaceRow(Base):
    """A project folder, keyed by its normalized path ("The workspace key" in
    docs/workspaces.md)."""

    __tablename__ = "workspaces"
    __table_args__ = (Index("ix_workspaces_shared_key", "shared_key", unique=True),)

    id: Mapped[str] = mapped_column(String(35), primary_key=True)  # ws_ + 32 hex
    path: Mapped[str] = mapped_column(Text, unique=True)
    st_dev: Mapped[str | None] = mapped_column(String(24))  # str: may exceed int64
    st_ino: Mapped[str | None] = mapped_column(String(24))
    memory_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    review_mode: Mapped[str] = mapped_column(String(8), default="auto", server_default="auto")
    synced_file: Mapped[str | None] = mapped_column(Text)  # kept in sync after every write
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # On a team database, a folder in a git repository with a remote is keyed by this
    # (``yak.identity.shared_key``) and ``path`` is where the machine that opened it last has
    # it (not unique there). NULL: keyed by ``path``.
    shared_key: Mapped[str | None] = mapped_column(Text)


class DeclinedRenameRow(Base):
    """An orphaned workspace a person said is not the predecessor of a folder (its key), so
    opening that folder no longer offers it ("Scopes" in docs/workspaces.md)."""

    __tablename__ = "declined_renames"

    folder: Mapped[str] = mapped_column(Text, primary_key=True)
    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorkspaceLinkRow(Base):
    """A workspace that uses another one's memory document (a git worktree sharing its main
    checkout's, when the person says so; "Scopes" in docs/workspaces.md)."""

    __tablename__ = "workspace_links"

    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    target_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class MemoryDocumentRow(Base):
    """The current memory document of a workspace; ``version`` increases with every write."""

    __tablename__ = "memory_documents"

    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    content: Mapped[str] = mapped_column(Text, default="")
    version: Mapped[int] = mapped_column(Integer, default=0)
    flags: Mapped[list[str]] = mapped_column(JSON, default=list)
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class MemoryRevisionRow(Base):
    """An applied write: append-only, never updated or deleted."""

    __tablename__ = "memory_revisions"
    __table_args__ = (Index("ix_memory_revisions_workspace_version", "workspace_id", "version"),)

    id: Mapped[str] = mapped_column(String(26), primary_key=True)  # ULID
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    lines: Mapped[int] = mapped_column(Integer)
    chars: Mapped[int] = mapped_column(Integer)
    flags: Mapped[list[str]] = mapped_column(JSON, default=list)
    model: Mapped[str | None] = mapped_column(String(100))
    session_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    restored_from: Mapped[str | None] = mapped_column(String(26))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Lines added and removed against the version it was based on.
    added: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    removed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The passages behind the lines a refresh wrote: JSON text (``yak.db.schema.evidence_text``),
    # NULL when there are none ("Evidence" in docs/memory.md).
    evidence: Mapped[str | None] = mapped_column(Text)


class RefreshAttemptRow(Base):
    """Every refresh attempt, applied or not, with the reply kept for refused ones."""

    __tablename__ = "refresh_attempts"
    __table_args__ = (Index("ix_refresh_attempts_workspace_created", "workspace_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(26), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text, default="")
    base_version: Mapped[int] = mapped_column(Integer)
    result_version: Mapped[int | None] = mapped_column(Integer)
    model: Mapped[str | None] = mapped_column(String(100))
    reply: Mapped[str | None] = mapped_column(Text)
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    duration_s: Mapped[float] = mapped_column(Float, default=0.0)
    session_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    flags: Mapped[list[str]] = mapped_column(JSON, default=list)
    rebuild: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    added: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    removed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    proposal_id: Mapped[str | None] = mapped_column(String(26))
    cache_write_tokens: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    cache_read_tokens: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class MemoryProposalRow(Base):
    """A rewrite waiting for review, who made it, and what became of it ("The inbox" in
    docs/memory.md)."""

    __tablename__ = "memory_proposals"
    __table_args__ = (Index("ix_memory_proposals_workspace_status", "workspace_id", "status"),)

    id: Mapped[str] = mapped_column(String(26), primary_key=True)  # ULID
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    base_version: Mapped[int] = mapped_column(Integer)
    content: Mapped[str] = mapped_column(Text)
    reasons: Mapped[list[str]] = mapped_column(JSON, default=list)
    added: Mapped[int] = mapped_column(Integer, default=0)
    removed: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    model: Mapped[str | None] = mapped_column(String(100))
    session_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    watermarks: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    flags: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    origin: Mapped[str] = mapped_column(String(16), default="refresh", server_default="refresh")
    client: Mapped[str | None] = mapped_column(String(100))
    # The ``yak mcp`` server process that made an agent's proposal (``mcp_…``), else NULL.
    owner: Mapped[str | None] = mapped_column(String(40))
    result_version: Mapped[int | None] = mapped_column(Integer)
    superseded_by: Mapped[str | None] = mapped_column(String(26))
    conflicts_with: Mapped[int | None] = mapped_column(Integer)
    evidence: Mapped[str | None] = mapped_column(Text)  # as a revision's
    # Why it waits, as data: JSON text (``yak.db.schema.held_lines_text``), NULL when none.
    held_lines: Mapped[str | None] = mapped_column(Text)


class MemoryTombstoneRow(Base):
    """A line a person removed on purpose, by its folded key (one per workspace and key)."""

    __tablename__ = "memory_tombstones"

    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(Text, primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class MemoryConfirmationRow(Base):
    """When a person last confirmed a memory line still holds, by its folded key (one per
    workspace and key)."""

    __tablename__ = "memory_confirmations"

    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(Text, primary_key=True)
    confirmed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ChatSessionRow(Base):
    """A conversation. ``folded_through`` is the memory watermark: the id of the last message
    folded into the memory document (NULL: none yet)."""

    __tablename__ = "chat_sessions"
    __table_args__ = (Index("ix_chat_sessions_workspace", "workspace_id"),)

    id: Mapped[str] = mapped_column(String(26), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(Text, default=DEFAULT_SESSION_TITLE)
    folded_through: Mapped[str | None] = mapped_column(String(26))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The session block of the system prompt as its first turn sent it (NULL: no turn yet),
    # the memory version it was built from, and the last version a hand edit was noted at.
    prompt_snapshot: Mapped[str | None] = mapped_column(Text)
    snapshot_memory_version: Mapped[int | None] = mapped_column(Integer)
    noted_memory_version: Mapped[int | None] = mapped_column(Integer)
    # Where it was started: ``window`` or ``ask`` (``yak.domain.SessionOrigin``).
    origin: Mapped[str] = mapped_column(String(16), default="window", server_default="window")


class ChatMessageRow(Base):
    """A message: Anthropic-style content blocks as JSON. Ordered by ``id`` (monotonic ULID)."""

    __tablename__ = "chat_messages"
    __table_args__ = (
        Index("ix_chat_messages_session_id", "session_id", "id"),
        Index("ix_chat_messages_workspace_id", "workspace_id", "id"),
    )

    id: Mapped[str] = mapped_column(String(26), primary_key=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("chat_sessions.id", ondelete="CASCADE"))
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    model: Mapped[str | None] = mapped_column(String(100))
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cache_creation_input_tokens: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    cache_read_input_tokens: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


def table_of(model: type[Base]) -> Table:
    """The Core table of ``model``, for prebuilt Core statements."""
    return model.metadata.tables[model.__tablename__]
