"""The ports: what the core needs from the outside world, as Protocols.

The core services (``yak.memory``, ``yak.refresh``, ``yak.chat``, ``yak.workspace``,
``yak.settings``) depend only on these; the adapters implement them (``yak.db`` the
repositories and the refresh lock, ``yak.llm`` the model client and the key store), and the
composition root (``yak.bootstrap``) plugs one into the other. Tests plug in the same adapters
against a temporary database and a scripted model server. See ``docs/architecture.md``,
"Layers".

Repositories are synchronous (a database call on a worker thread); services call them through
``asyncio.to_thread``. Every method raises ``StoreError`` when the database fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, TypeVar, Unpack

from yak.domain import SessionOrigin, TokenUsage

T = TypeVar("T")

Burials = tuple[tuple[str, str], ...]
"""Tombstones to bury: ``(key, text)`` of each line (``yak.memory.history.provenance``)."""

if TYPE_CHECKING:
    from datetime import datetime

    from yak.domain import (
        ChatMessage,
        ChatSession,
        MemoryDocument,
        MemorySummary,
        Proposal,
        ProposalStatus,
        RefreshAttempt,
        RefreshOutcome,
        ReviewMode,
        Revision,
        RevisionSource,
        RewriteForm,
        Tombstone,
        UpkeepStats,
        Workspace,
        WorkspaceStamp,
        WriteEffects,
    )
    from yak.evidence import Evidence


class WorkspaceRepository(Protocol):
    """Stored workspaces, keyed by normalized path (see ``yak.paths``)."""

    def open(self, path: str, *, mark_opened: bool = True) -> Workspace:
        """Register or find the workspace of an existing folder (an alias by folder identity
        counts). Raises ``WorkspaceNotFound`` when the folder does not exist."""
        ...

    def find(self, path: str) -> Workspace | None:
        """The stored workspace for ``path`` (key or folder identity), never creating one."""
        ...

    def get(self, workspace_id: str) -> Workspace:
        """Raises ``WorkspaceNotFound`` for an unknown id."""
        ...

    def recent(self, limit: int) -> list[Workspace]:
        """Most recently opened first, at most ``limit``."""
        ...

    def reattach(self, workspace_id: str, new_path: str) -> Workspace:
        """Move a workspace's memory, history and sessions to another existing folder."""
        ...

    def set_memory_enabled(self, workspace_id: str, *, enabled: bool) -> Workspace:
        """Turn memory on or off for a workspace."""
        ...

    def set_review_mode(self, workspace_id: str, mode: ReviewMode) -> Workspace:
        """Set how the workspace's rewrites land (``auto`` or ``review``)."""
        ...

    def set_synced_file(self, workspace_id: str, path: str | None) -> Workspace:
        """Keep the file at ``path`` (absolute) in sync after every write, or stop (``None``)."""
        ...

    def memories_at(self, keys: Sequence[str]) -> dict[str, MemorySummary]:
        """The stored workspaces at exactly these keys with a non-empty document, by key."""
        ...

    def orphans_named(self, name: str) -> list[MemorySummary]:
        """Workspaces whose folder is gone, named ``name``, with a non-empty document, most
        recently updated first."""
        ...

    def orphans_beside(self, folder: str) -> list[tuple[MemorySummary, str]]:
        """Workspaces whose folder is gone, in the same parent folder as the one keyed
        ``folder``, with a non-empty document, most recently updated first: each with its
        document's text."""
        ...

    def declined_renames(self, folder: str) -> set[str]:
        """Ids of the orphans declined as the predecessor of the folder keyed ``folder``."""
        ...

    def decline_rename(self, folder: str, workspace_id: str) -> None:
        """Remember that orphan ``workspace_id`` is not the folder ``folder``'s predecessor."""
        ...

    def link(self, workspace_id: str, target_id: str) -> None:
        """Make ``workspace_id`` use ``target_id``'s document (the document repository then
        reads and writes that one). Raises ``UsageError`` (itself, a chain, a memory of its
        own)."""
        ...

    def unlink(self, workspace_id: str) -> Workspace | None:
        """Stop using another's document; returns the workspace it used, or ``None``."""
        ...

    def linked_to(self, workspace_id: str) -> Workspace | None:
        """The workspace whose document ``workspace_id`` uses, or ``None``."""
        ...


class WriteOptions(TypedDict):
    """The keyword arguments of :meth:`DocumentRepository.write`.

    Attributes:
        expected_version: the version the write is based on; ``None``: whatever is current.
        source: what wrote it (the revision's source).
        flags, model, session_ids, restored_from: the revision's metadata.
        watermarks: ``{session_id: last folded message id}`` advanced in the same transaction.
        effects: given the text being replaced, the write's line counts and tombstones.
        accepts: the pending proposal the write applies (marked accepted in the same
            transaction, with the version it became).
        accepted_as: how it is marked: ``accepted`` (default) or ``edited`` (edited and
            accepted).
        evidence: the passages behind the lines written, stored with the revision.
    """

    expected_version: int | None
    source: RevisionSource
    flags: NotRequired[tuple[str, ...]]
    model: NotRequired[str | None]
    session_ids: NotRequired[tuple[str, ...]]
    restored_from: NotRequired[str | None]
    watermarks: NotRequired[Mapping[str, str] | None]
    effects: NotRequired[Callable[[str], WriteEffects] | None]
    accepts: NotRequired[str | None]
    accepted_as: NotRequired[ProposalStatus]
    evidence: NotRequired[tuple[Evidence, ...]]


class DocumentRepository(Protocol):
    """Memory documents, their revisions and the session watermarks.

    ``write`` is the one primitive write: optimistic on ``expected_version`` (``None``: the
    current one), appending a revision, writing nothing when the text is already stored.
    The text must already be checked by the document rules (the service does that).
    """

    def read(self, workspace_id: str) -> MemoryDocument:
        """Raises ``UnreadableDocument`` when the stored bytes are not UTF-8."""
        ...

    def write(
        self, workspace_id: str, text: str, **options: Unpack[WriteOptions]
    ) -> MemoryDocument:
        """Write ``text`` as the next version (see :class:`WriteOptions`). Raises
        ``ConflictError`` (stale version, or a proposal no longer pending),
        ``UnreadableDocument`` never (the replaced text is read leniently), or
        ``WorkspaceNotFound``."""
        ...

    def read_raw(self, workspace_id: str) -> bytes:
        """The stored document's bytes exactly, readable or not."""
        ...

    def together(self, work: Callable[[], T]) -> T:
        """``work()`` (calls to any repository of this database, on this thread) in one
        transaction: one session and one commit instead of one per call; an error leaving
        ``work`` rolls back all of it (so ``work`` must not carry on past a ``StoreError``).
        Returns what ``work`` returns; raises what it raises."""
        ...

    def tombstones(self, workspace_id: str) -> list[Tombstone]: ...

    def confirmations(self, workspace_id: str) -> dict[str, datetime]:
        """When a person last confirmed each line: folded key -> time (UTC)."""
        ...

    def confirm_lines(self, workspace_id: str, keys: Collection[str]) -> datetime:
        """Record now as the confirmation of each folded key; returns that time (UTC)."""
        ...

    def passage_times(self, message_ids: Collection[str]) -> dict[str, datetime]:
        """When each stored message was written (UTC), by id; deleted ones are absent."""
        ...

    def evidence_history(self, workspace_id: str) -> list[tuple[datetime, tuple[Evidence, ...]]]:
        """When each revision that kept evidence was stored, with that evidence, oldest first."""
        ...

    def advance_watermarks(self, watermarks: Mapping[str, str]) -> None: ...

    def history(self, workspace_id: str) -> list[Revision]: ...

    def revisions_since(self, workspace_id: str, version: int) -> list[Revision]:
        """The revisions whose version is ``version`` or newer, **oldest first** (ties by id)."""
        ...

    def get_revision(self, workspace_id: str, revision: str) -> Revision:
        """By id, unique id prefix or version number. Raises ``RevisionNotFound``."""
        ...

    def summaries(self) -> list[MemorySummary]: ...

    def versions(self) -> dict[str, int]: ...

    def stamps(self) -> dict[str, WorkspaceStamp]:
        """Every workspace's stamp (document version, settings, waiting proposals) by id."""
        ...

    def data_version(self) -> int:
        """A number that moves when another connection (another process) wrote."""
        ...


class ProposalStore(Protocol):
    """Rewrites waiting for review, and what became of them. A proposal belongs to the
    document its workspace uses (a linked workspace's are its target's); accepting one is a
    document write (``DocumentRepository.write(accepts=…)``)."""

    def add_proposal(self, proposal: Proposal) -> Proposal:
        """Store a pending proposal; a refresh's supersedes the older pending refresh ones."""
        ...

    def proposals(self, workspace_id: str, *, pending_only: bool = True) -> list[Proposal]: ...

    def pending_counts(self) -> dict[str, int]: ...

    def supersede_proposals(self, workspace_id: str) -> int:
        """Mark the pending refresh proposals superseded; returns how many."""
        ...

    def rebase_proposals(self, rebased: Sequence[Proposal]) -> int:
        """Store pending proposals moved onto a newer version; returns how many."""
        ...

    def get_proposal(self, workspace_id: str, proposal_id: str) -> Proposal:
        """By id or unique prefix. Raises ``UsageError``."""
        ...

    def reject_proposal(
        self, workspace_id: str, proposal_id: str, *, bury: Burials, watermarks: Mapping[str, str]
    ) -> Proposal:
        """Raises ``UsageError`` (unknown) or ``ConflictError`` (no longer pending)."""
        ...

    def withdraw_proposal(self, workspace_id: str, proposal_id: str) -> Proposal:
        """Raises ``UsageError`` (unknown) or ``ConflictError`` (no longer pending)."""
        ...


@dataclass(frozen=True)
class SearchCandidates:
    """The documents that may contain a text, as :class:`SearchIndex` found them.

    Attributes:
        documents: ``(workspace, current document)`` pairs, most recently updated first (as
            the memory list orders them); only documents stored as text.
        method: ``"fts5"`` (or another index's name) when an index chose them, else
            ``"plain scan"`` (every non-empty document).
        why_scan: for a plain scan, why no index answered (a sentence); ``""`` otherwise.
    """

    documents: list[tuple[Workspace, str]]
    method: str
    why_scan: str = ""


class SearchIndex(Protocol):
    """Which current documents may contain a text: the database's full-text index when it has
    one, else every document ("Search" in docs/memory.md)."""

    def candidates(self, query: str) -> SearchCandidates:
        """The documents that may contain ``query`` (case aside), read in one go; the caller
        matches the lines."""
        ...


class AttemptRepository(Protocol):
    """Every refresh attempt, applied or not."""

    def record(
        self, outcome: RefreshOutcome, *, base_version: int, rebuild: bool = False
    ) -> RefreshAttempt: ...

    def list(self, workspace_id: str, limit: int | None = 50) -> list[RefreshAttempt]: ...

    def get(self, workspace_id: str, attempt_id: str) -> RefreshAttempt: ...

    def latest(self) -> dict[str, RefreshAttempt]:
        """The newest attempt of each workspace, without replies."""
        ...

    def upkeep(self, workspace_id: str | None = None) -> dict[str, UpkeepStats]:
        """Refreshes, model calls, tokens and outcomes over the last 7 and 30 days, per
        workspace with an attempt in them (only ``workspace_id``'s when given)."""
        ...


class ConversationRepository(Protocol):
    """Chat sessions and their messages."""

    def create_session(
        self, workspace_id: str, title: str, origin: SessionOrigin = SessionOrigin.WINDOW
    ) -> ChatSession: ...

    def sessions(self, workspace_id: str) -> list[ChatSession]: ...

    def session_titles(self, session_ids: Collection[str]) -> dict[str, str]:
        """``{session id: title}`` for those of ``session_ids`` that exist."""
        ...

    def get_session(self, session_id: str) -> ChatSession: ...

    def rename_session(self, session_id: str, title: str) -> ChatSession: ...

    def delete_session(self, session_id: str) -> None: ...

    def add_message(
        self,
        session_id: str,
        role: str,
        content: list[dict[str, Any]],
        *,
        model: str | None = None,
        usage: TokenUsage | None = None,
    ) -> ChatMessage: ...

    def messages(self, session_id: str) -> list[ChatMessage]: ...

    def take_prompt_snapshot(
        self, session_id: str, snapshot: str, memory_version: int, *, replacing: str | None = None
    ) -> ChatSession:
        """Store the session block of the system prompt and the memory version it was built
        from, unless the session already has one (then that one stays; with ``replacing``, it
        is replaced while it is still exactly that text); returns the session as stored (its
        ``prompt_snapshot`` is the one to send)."""
        ...

    def note_memory_version(self, session_id: str, version: int) -> None:
        """Remember that the session was told about the memory document at ``version``."""
        ...

    def unfolded_messages(self, workspace_id: str) -> list[ChatMessage]: ...

    def recent_messages(self, workspace_id: str, limit: int = 2000) -> list[ChatMessage]: ...

    def workspaces_with_unfolded(self) -> list[str]: ...


@dataclass(frozen=True)
class Completion:
    """A finished model reply. ``content`` holds Anthropic-style blocks as dicts
    (``{"type": "text", "text": ...}``, ``{"type": "tool_use", "id", "name", "input"}``)."""

    content: tuple[dict[str, Any], ...]
    stop_reason: str | None
    model: str
    usage: TokenUsage = field(default_factory=TokenUsage)

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed assistant text."""

    text: str


@dataclass(frozen=True)
class ToolUseStarted:
    """The model started a tool call (its input is complete only in the final Completion)."""

    id: str
    name: str


StreamEvent = TextDelta | ToolUseStarted

SystemPrompt = str | list[dict[str, Any]]
"""A system prompt: plain text, or Messages API text blocks (``{"type": "text", "text": ...}``,
optionally with ``"cache_control": {"type": "ephemeral"}`` to mark a prompt-cache breakpoint)."""


class ModelClient(Protocol):
    """One connection to an Anthropic-compatible Messages API.

    Errors are Yak's own: ``MissingApiKey``, ``RateLimited``, ``Overloaded``,
    ``ProviderUnavailable``, ``IncompleteResponse``, ``ProviderError``.
    """

    @property
    def base_url(self) -> str: ...

    async def stream(
        self,
        *,
        model: str,
        system: SystemPrompt,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int = 8192,
        on_event: Callable[[StreamEvent], None] | None = None,
    ) -> Completion: ...

    async def complete(
        self,
        *,
        model: str,
        system: SystemPrompt,
        messages: list[dict[str, Any]],
        max_tokens: int = 8192,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
    ) -> Completion: ...

    async def count_tokens(
        self,
        *,
        model: str,
        system: SystemPrompt,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
    ) -> int | None:
        """The input tokens of a request as the endpoint counts them (``POST
        /v1/messages/count_tokens``), or ``None`` when the endpoint cannot count (it has no
        such route). Nothing is generated. Raises the errors above."""
        ...

    async def check(self, *, model: str) -> str: ...

    async def aclose(self) -> None: ...

    def warm_up(self, *, without_key: bool = True) -> bool:
        """Pay the client's one-time costs now (the SDK import, seconds; building the client),
        so the first request leaves at once. Synchronous and slow: call it on a worker thread.
        Without an API key only the SDK is loaded, or nothing at all when ``without_key`` is
        false (a request is about to fail on the missing key: no point in waiting seconds).

        Returns:
            ``True`` when the client was built, ``False`` when no key was available.
        """
        ...


class EndpointForms(Protocol):
    """The rewrite form that worked per memory endpoint and model ("The rewrite forms" in
    docs/refresh.md). Blocking: call it off the event loop's thread."""

    def remembered(self, base_url: str, model: str) -> RewriteForm | None: ...

    def remember(self, base_url: str, model: str, form: RewriteForm) -> None: ...


ModelClientFactory = Callable[[], ModelClient]
"""Builds a model client for the current settings (base URL, key); called per use. A factory
may also have a ``built_from()`` method returning a hashable value that changes whenever the
client it builds would (base URL, key, time limit; blocking, like the factory): the refresher
then keeps its client while that value stays the same (``yak.refresh.client``)."""


def build_ready_client(
    factory: ModelClientFactory, *, without_key: bool = True
) -> tuple[ModelClient, bool]:
    """A model client from ``factory`` with its one-time costs paid: the factory reads the key
    (an OS keyring can block) and ``warm_up()`` imports the SDK (seconds, the first time; with
    no key, only when ``without_key``). Blocking: call it on a worker thread. Returns the
    client and whether it could be built (``False``: no API key yet; the first request will
    say so)."""
    client = factory()
    return client, client.warm_up(without_key=without_key)


async def ready_model_client(factory: ModelClientFactory) -> ModelClient:
    """:func:`build_ready_client` on a worker thread: a caller on the event-loop thread (a turn,
    a refresh) so never freezes a window; when a background warm-up is importing the SDK
    already, this waits for it off the loop instead of importing again."""
    # For a request about to be sent: without a key it fails at once (MissingApiKey), not after
    # the SDK's import.
    client, _built = await asyncio.to_thread(build_ready_client, factory, without_key=False)
    return client


class KeyStore(Protocol):
    """Where the API key lives (environment first, then a key for this session only, then the
    OS keyring). May block: the settings service calls it on a worker thread."""

    def api_key(self) -> str | None: ...

    def key_source(self) -> str | None:
        """``"environment"``, ``"session"``, ``"keyring"`` or ``None``."""
        ...

    def set_api_key(self, key: str) -> None: ...

    def can_store(self) -> bool:
        """Whether :meth:`set_api_key` can save a key (a usable OS keyring exists)."""
        ...

    def use_session_key(self, key: str | None) -> None:
        """Use ``key`` until the process ends, in memory only (``None`` forgets it)."""
        ...

    def delete_api_key(self) -> None: ...


class RefreshLock(Protocol):
    """A lock that keeps one refresh of a workspace in flight across processes."""

    async def acquire(self, workspace_id: str, *, wait_s: float) -> bool:
        """Wait up to ``wait_s`` seconds; ``False`` when another holder kept it."""
        ...

    def release(self, workspace_id: str) -> None: ...


class Clock(Protocol):
    """Monotonic seconds (the refresh queue's debounce and backoff)."""

    def __call__(self) -> float: ...


__all__: Sequence[str] = [
    "AttemptRepository",
    "Burials",
    "Clock",
    "Completion",
    "ConversationRepository",
    "DocumentRepository",
    "KeyStore",
    "ModelClient",
    "ModelClientFactory",
    "ProposalStore",
    "RefreshLock",
    "SearchCandidates",
    "SearchIndex",
    "StreamEvent",
    "SystemPrompt",
    "TextDelta",
    "ToolUseStarted",
    "WorkspaceRepository",
    "WriteOptions",
]
