"""ConversationStore: sessions and messages per workspace, and the memory watermarks.

Lives in the storage layer because both the chat service (sessions, transcript) and the memory
refresh (unfolded messages) read it. Returns ``yak.domain`` objects only.

Messages are ordered by ``id``: ids come from ``yak.ids.new_id`` (monotonic ULIDs), so id order is
creation order within and across sessions. A session's watermark is
``ChatSessionRow.folded_through``, the id of the last message folded into the memory document; it
is advanced by the memory store, never here. A message is *unfolded* when its id is greater than
its session's watermark (or the session has none).
"""

from __future__ import annotations

import json
from collections.abc import Collection

from sqlalchemy import delete, or_, select, update

from yak.db.engine import Database
from yak.db.models import ChatMessageRow, ChatSessionRow, WorkspaceRow, utcnow
from yak.domain import DEFAULT_SESSION_TITLE, ChatMessage, ChatSession, SessionOrigin, TokenUsage
from yak.errors import UsageError, WorkspaceNotFound
from yak.ids import new_id
from yak.text import one_line

DEFAULT_TITLE = DEFAULT_SESSION_TITLE
MAX_TITLE_CHARS = 200
ROLES = ("user", "assistant")


def clean_title(title: str | None) -> str:
    """A session title as stored: one line, surrounding blanks removed, at most 200 characters.

    Raises:
        UsageError: the title is empty or only blanks.
    """
    if title is None:
        return DEFAULT_TITLE
    if not title.strip():
        raise UsageError("A conversation title cannot be empty.")
    return one_line(title, MAX_TITLE_CHARS)


def _session(row: ChatSessionRow) -> ChatSession:
    return ChatSession(
        id=row.id,
        workspace_id=row.workspace_id,
        title=row.title,
        created_at=row.created_at,
        updated_at=row.updated_at,
        prompt_snapshot=row.prompt_snapshot,
        snapshot_memory_version=row.snapshot_memory_version,
        noted_memory_version=row.noted_memory_version,
        origin=SessionOrigin(row.origin or SessionOrigin.WINDOW),
    )


def _message(row: ChatMessageRow) -> ChatMessage:
    return ChatMessage(
        id=row.id,
        session_id=row.session_id,
        workspace_id=row.workspace_id,
        role=row.role,
        content=tuple(row.content or ()),
        created_at=row.created_at,
        model=row.model,
        usage=TokenUsage(
            input_tokens=row.input_tokens or 0,
            output_tokens=row.output_tokens or 0,
            cache_creation_input_tokens=row.cache_creation_input_tokens or 0,
            cache_read_input_tokens=row.cache_read_input_tokens or 0,
        ),
    )


def _unfolded_condition():
    return or_(
        ChatSessionRow.folded_through.is_(None), ChatMessageRow.id > ChatSessionRow.folded_through
    )


class SqlConversationRepository:
    """Sessions (ULID ids, titles) and their messages (ordered by monotonic ULID id).

    Synchronous; async callers use ``asyncio.to_thread``. Errors: ``UsageError`` for an unknown
    session, ``WorkspaceNotFound`` for an unknown workspace, ``StoreError`` when the database
    fails.
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- sessions ---------------------------------------------------------------------------
    def create_session(
        self,
        workspace_id: str,
        title: str = DEFAULT_TITLE,
        origin: SessionOrigin = SessionOrigin.WINDOW,
    ) -> ChatSession:
        """Create an empty session in a stored workspace.

        Args:
            workspace_id: a workspace already registered by the memory store.
            title: one line, at most 200 characters (longer is shortened with "…").
            origin: where it is started (the window, or ``yak ask``).

        Raises:
            WorkspaceNotFound: no workspace has that id.
            UsageError: the title is blank.
        """
        text = clean_title(title)
        now = utcnow()
        with self.db.session() as s:
            if s.get(WorkspaceRow, workspace_id) is None:
                raise WorkspaceNotFound(f"No workspace with id {workspace_id} is stored.")
            row = ChatSessionRow(
                id=new_id(),
                workspace_id=workspace_id,
                title=text,
                created_at=now,
                updated_at=now,
                origin=str(origin),
            )
            s.add(row)
        return _session(row)

    def sessions(self, workspace_id: str) -> list[ChatSession]:
        """The workspace's sessions, most recently updated first."""
        with self.db.session() as s:
            rows = s.scalars(
                select(ChatSessionRow)
                .where(ChatSessionRow.workspace_id == workspace_id)
                .order_by(ChatSessionRow.updated_at.desc(), ChatSessionRow.id.desc())
            ).all()
            return [_session(r) for r in rows]

    def session_titles(self, session_ids: Collection[str]) -> dict[str, str]:
        """``{session id: title}`` for those of ``session_ids`` that exist (a refresh names
        the conversations it folds; reading every session of the workspace cost more)."""
        if not session_ids:
            return {}
        with self.db.session() as s:
            rows = s.execute(
                select(ChatSessionRow.id, ChatSessionRow.title).where(
                    ChatSessionRow.id.in_(list(session_ids))
                )
            )
            return {session_id: title for session_id, title in rows}

    def get_session(self, session_id: str) -> ChatSession:
        """The session with that id. Raises ``UsageError`` for an unknown id."""
        with self.db.session() as s:
            return _session(self._row(s, session_id))

    def rename_session(self, session_id: str, title: str) -> ChatSession:
        """Give a session a new title (see :func:`clean_title`); ``updated_at`` is kept so
        renaming does not reorder the list.

        Raises:
            UsageError: unknown session or blank title.
        """
        text = clean_title(title)
        with self.db.session() as s:
            row = self._row(s, session_id)
            row.title = text
        return _session(row)

    def delete_session(self, session_id: str) -> None:
        """Delete a session and its messages. Memory already folded from it stays in the document.

        Raises:
            UsageError: unknown session.
        """
        with self.db.session() as s:
            row = self._row(s, session_id)
            s.execute(delete(ChatMessageRow).where(ChatMessageRow.session_id == session_id))
            s.delete(row)

    # --- messages ---------------------------------------------------------------------------
    def add_message(
        self,
        session_id: str,
        role: str,
        content: list[dict],
        *,
        model: str | None = None,
        usage: TokenUsage | None = None,
    ) -> ChatMessage:
        """Append a message and touch the session's ``updated_at``.

        Args:
            session_id: an existing session.
            role: ``"user"`` or ``"assistant"`` (tool results are user messages).
            content: Anthropic-style content blocks, JSON-serializable dicts.
            model: the model that wrote an assistant message.
            usage: tokens the model call used (the cache reads and writes included).

        Raises:
            UsageError: unknown session.
            ValueError: a role other than user/assistant, or content that is not a list of
                JSON-serializable dicts (programming errors).
        """
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {role!r}")
        if not isinstance(content, (list, tuple)) or not all(isinstance(b, dict) for b in content):
            raise ValueError("content must be a list of content-block dicts")
        blocks = json.loads(json.dumps(list(content)))  # a private, JSON-clean copy
        usage = usage or TokenUsage()
        now = utcnow()
        with self.db.session() as s:
            session = self._row(s, session_id)
            row = ChatMessageRow(
                id=new_id(),
                session_id=session_id,
                workspace_id=session.workspace_id,
                role=role,
                content=blocks,
                model=model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_creation_input_tokens=usage.cache_creation_input_tokens,
                cache_read_input_tokens=usage.cache_read_input_tokens,
                created_at=now,
            )
            s.add(row)
            session.updated_at = now
        return _message(row)

    def messages(self, session_id: str) -> list[ChatMessage]:
        """All messages of a session, oldest first. Raises ``UsageError`` for an unknown id."""
        with self.db.session() as s:
            self._row(s, session_id)
            rows = s.scalars(
                select(ChatMessageRow)
                .where(ChatMessageRow.session_id == session_id)
                .order_by(ChatMessageRow.id)
            ).all()
            return [_message(r) for r in rows]

    # --- the prompt snapshot ----------------------------------------------------------------
    def take_prompt_snapshot(
        self, session_id: str, snapshot: str, memory_version: int, *, replacing: str | None = None
    ) -> ChatSession:
        """Store the session block of the system prompt and the memory version it was built
        from, unless the session already has one: the first stored snapshot stays for the
        session's life, so every request of the session (also after a restart, or when two
        processes start a turn at once) sends the same bytes. With ``replacing``, the stored
        snapshot is replaced when it is still exactly ``replacing`` (memory switched off during
        the session: "Memory off" in docs/memory.md).

        Returns:
            The session as stored; its ``prompt_snapshot`` is the one to send.

        Raises:
            UsageError: unknown session.
        """
        with self.db.session() as s:
            row = self._row(s, session_id)
            unset = (
                ChatSessionRow.prompt_snapshot.is_(None)
                if replacing is None
                else ChatSessionRow.prompt_snapshot == replacing
            )
            s.execute(  # one statement: of two writers only the first one's snapshot is kept
                update(ChatSessionRow)
                .where(ChatSessionRow.id == session_id, unset)
                .values(prompt_snapshot=snapshot, snapshot_memory_version=memory_version)
                .execution_options(synchronize_session=False)
            )
            s.refresh(row)
            return _session(row)

    def note_memory_version(self, session_id: str, version: int) -> None:
        """Remember that the session was told about the memory document at ``version`` (a hand
        edit is noted once per version). Raises ``UsageError`` for an unknown session."""
        with self.db.session() as s:
            row = self._row(s, session_id)
            row.noted_memory_version = max(version, row.noted_memory_version or 0)

    # --- memory input -----------------------------------------------------------------------
    def unfolded_messages(self, workspace_id: str) -> list[ChatMessage]:
        """Every message of every session of the workspace after that session's watermark,
        oldest first across sessions (by id) — the input of a memory refresh."""
        with self.db.session() as s:
            rows = s.scalars(
                select(ChatMessageRow)
                .join(ChatSessionRow, ChatSessionRow.id == ChatMessageRow.session_id)
                .where(ChatSessionRow.workspace_id == workspace_id, _unfolded_condition())
                .order_by(ChatMessageRow.id)
            ).all()
            return [_message(r) for r in rows]

    def recent_messages(self, workspace_id: str, limit: int = 2000) -> list[ChatMessage]:
        """The newest ``limit`` messages of the workspace regardless of watermarks, oldest first
        (``refresh --rebuild``)."""
        if limit <= 0:
            return []
        with self.db.session() as s:
            rows = s.scalars(
                select(ChatMessageRow)
                .where(ChatMessageRow.workspace_id == workspace_id)
                .order_by(ChatMessageRow.id.desc())
                .limit(limit)
            ).all()
            return [_message(r) for r in reversed(rows)]

    def workspaces_with_unfolded(self) -> list[str]:
        """Ids of workspaces that have messages past a watermark (enqueued on app start),
        sorted."""
        with self.db.session() as s:
            ids = s.scalars(
                select(ChatSessionRow.workspace_id)
                .distinct()
                .join(ChatMessageRow, ChatMessageRow.session_id == ChatSessionRow.id)
                .where(_unfolded_condition())
                .order_by(ChatSessionRow.workspace_id)
            ).all()
            return list(ids)

    # --- helpers ----------------------------------------------------------------------------
    @staticmethod
    def _row(s, session_id: str) -> ChatSessionRow:
        row = s.get(ChatSessionRow, session_id)
        if row is None:
            raise UsageError(f"No conversation with id {session_id} exists.")
        return row
