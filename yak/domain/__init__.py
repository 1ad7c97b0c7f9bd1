"""Small frozen dataclasses that cross layer boundaries, and the memory rules' constants: the
place the core's types are imported from.

ORM rows and SDK objects never leave ``yak.db`` / ``yak.llm``; these do. Timestamps are
timezone-aware UTC ``datetime`` objects. Each module holds one concern: ``documents`` (the
memory document and its history), ``workspaces``, ``proposals`` (the review inbox),
``conversations`` and ``refreshes`` (outcomes, attempts, the queue, the upkeep figures).
"""

from yak.domain.conversations import (
    DEFAULT_SESSION_TITLE,
    ChatMessage,
    ChatSession,
    ModelCheck,
    SessionOrigin,
    TokenUsage,
)
from yak.domain.documents import (
    CHARS_PER_TOKEN,
    FLOOR_MIN_CHARS,
    FLOOR_RATIO,
    MAX_CHARS,
    MAX_LINES,
    LineOrigin,
    MemoryDocument,
    Revision,
    RevisionSource,
    Tombstone,
    WriteEffects,
    count_lines,
    estimate_tokens,
)
from yak.domain.proposals import (
    Proposal,
    ProposalOrigin,
    ProposalStatus,
)
from yak.domain.refreshes import (
    FORM_FLAG_PREFIX,
    STORE_ERROR,
    UPKEEP_WINDOWS_DAYS,
    QueueState,
    RefreshAttempt,
    RefreshOutcome,
    RefreshState,
    RefreshStatus,
    RewriteForm,
    UpkeepFigures,
    UpkeepStats,
    forms_in,
)
from yak.domain.workspaces import (
    MemorySummary,
    ReviewMode,
    Workspace,
    WorkspaceStamp,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "ChatMessage",
    "ChatSession",
    "DEFAULT_SESSION_TITLE",
    "FLOOR_MIN_CHARS",
    "FLOOR_RATIO",
    "FORM_FLAG_PREFIX",
    "LineOrigin",
    "MAX_CHARS",
    "MAX_LINES",
    "MemoryDocument",
    "MemorySummary",
    "ModelCheck",
    "Proposal",
    "ProposalOrigin",
    "ProposalStatus",
    "QueueState",
    "RefreshAttempt",
    "RefreshOutcome",
    "RefreshState",
    "RefreshStatus",
    "ReviewMode",
    "Revision",
    "RevisionSource",
    "RewriteForm",
    "STORE_ERROR",
    "SessionOrigin",
    "TokenUsage",
    "Tombstone",
    "UPKEEP_WINDOWS_DAYS",
    "UpkeepFigures",
    "UpkeepStats",
    "Workspace",
    "WorkspaceStamp",
    "WriteEffects",
    "count_lines",
    "estimate_tokens",
    "forms_in",
]
