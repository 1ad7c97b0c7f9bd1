"""ConversationStore: sessions and messages per workspace, and the memory watermarks.

Lives in the storage layer because both the chat service (sessions, transcript) and the memory
refresh (unfolded messages) read it. Returns ``yak.domain`` objects only.
"""

from __future__ import annotations

from yak.db.engine import Database
from yak.domain import ChatMessage, ChatSession, TokenUsage


class ConversationStore:
    """Sessions (ULID ids, titles) and their messages (ordered by monotonic ULID id)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def create_session(self, workspace_id: str, title: str = "New conversation") -> ChatSession:
        raise NotImplementedError

    def sessions(self, workspace_id: str) -> list[ChatSession]:
        """Most recently updated first."""
        raise NotImplementedError

    def get_session(self, session_id: str) -> ChatSession:
        """Raises ``UsageError`` for an unknown id."""
        raise NotImplementedError

    def rename_session(self, session_id: str, title: str) -> ChatSession:
        raise NotImplementedError

    def delete_session(self, session_id: str) -> None:
        """Delete a session and its messages. Memory already folded from it stays in the document."""
        raise NotImplementedError

    def add_message(self, session_id: str, role: str, content: list[dict], *,
                    model: str | None = None, usage: TokenUsage | None = None) -> ChatMessage:
        """Append a message (role ``user`` or ``assistant``; content blocks as JSON dicts) and
        touch the session's ``updated_at``."""
        raise NotImplementedError

    def messages(self, session_id: str) -> list[ChatMessage]:
        """All messages of a session, oldest first."""
        raise NotImplementedError

    def unfolded_messages(self, workspace_id: str) -> list[ChatMessage]:
        """Every message of every session of the workspace after that session's watermark,
        oldest first across sessions (by id) — the input of a memory refresh."""
        raise NotImplementedError

    def recent_messages(self, workspace_id: str, limit: int = 2000) -> list[ChatMessage]:
        """The newest ``limit`` messages of the workspace regardless of watermarks, oldest first
        (``refresh --rebuild``)."""
        raise NotImplementedError

    def workspaces_with_unfolded(self) -> list[str]:
        """Ids of workspaces that have messages past a watermark (enqueued on app start)."""
        raise NotImplementedError
