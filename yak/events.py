"""Plain Python events published by the services (the bus that carries them is ``yak.bus``).

The Qt-free core publishes these; ``yak.ui.bridge`` subscribes and re-emits them as Qt signals.
Subscribers run synchronously in the publisher's thread, so services publish from the asyncio
loop thread (never from a worker thread).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from yak.domain import QueueState, RefreshOutcome, RefreshState
from yak.references import ReferenceCheck


@dataclass(frozen=True)
class MemoryChanged:
    """A workspace's memory document now has ``version``; ``source`` is the revision source
    (``"refresh"``, ``"hand"``, ``"import"``, ``"restore"``, ``"clear"``) or ``"external"`` when
    another process (the CLI) changed it. ``initiator`` is whoever asked for the write (a view
    passes itself and skips its own change), ``None`` for background work.

    Published only by the memory service."""

    workspace_id: str
    version: int
    source: str
    initiator: object | None = None
    # When it was written (``None``: not known, e.g. another process wrote it). Not part of
    # the event's identity: two events about one version are the same change.
    updated_at: datetime | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ReferencesChecked:
    """A workspace's memory document was checked against its folder ("Checked at use" in
    docs/memory.md): ``check`` says which lines name something gone, for ``version`` of the
    document. Published by the agent when a conversation's memory snapshot is taken."""

    workspace_id: str
    version: int
    check: ReferenceCheck


@dataclass(frozen=True)
class RefreshStateChanged:
    """Where a workspace's refresh stands now, as a whole snapshot (queue state, last attempt,
    document time, key): a view shows it as it is, never merged with anything else. Published
    only by the refresh scheduler."""

    snapshot: RefreshState

    @property
    def workspace_id(self) -> str:
        """The workspace the snapshot is of."""
        return self.snapshot.workspace_id

    @property
    def state(self) -> QueueState:
        """Its queue state."""
        return self.snapshot.state


@dataclass(frozen=True)
class RefreshFinished:
    """A refresh attempt ended; ``outcome.status`` is its outcome (the store's status words)."""

    workspace_id: str
    outcome: RefreshOutcome


@dataclass(frozen=True)
class RefreshWaiting:
    """A refresh of the workspace waits for another one (another window, a command, or another
    machine on a shared database) to finish before it starts; ``RefreshFinished`` follows."""

    workspace_id: str


@dataclass(frozen=True)
class MessageAdded:
    """A message was stored in a session."""

    workspace_id: str
    session_id: str
    message_id: str


@dataclass(frozen=True)
class TurnCompleted:
    """An assistant turn finished normally (not aborted, not failed). The refresh queue listens."""

    workspace_id: str
    session_id: str


@dataclass(frozen=True)
class SessionsChanged:
    """A session was created, renamed or deleted in the workspace."""

    workspace_id: str


@dataclass(frozen=True)
class ProposalsChanged:
    """A workspace's review inbox changed: a proposal was made, accepted or rejected.
    ``pending`` is how many now wait."""

    workspace_id: str
    pending: int


@dataclass(frozen=True)
class WorkspaceChanged:
    """A workspace's stored settings changed (memory switch, review mode, kept-in-sync file)
    and a view showing them should read them again. Published by the memory service when its
    watcher notices the change (another process's, or this one's, within a poll)."""

    workspace_id: str


@dataclass(frozen=True)
class SyncedFileFailed:
    """An applied revision could not be written into the workspace's kept-in-sync instruction
    file (read-only, not UTF-8, broken markers…); the revision itself is stored. Published
    only by the memory service."""

    workspace_id: str
    version: int
    path: str
    reason: str

    @property
    def message(self) -> str:
        """One sentence for the user."""
        return (
            f"Memory version {self.version} is saved, but {self.path} could not be kept in "
            f"sync: {self.reason}"
        )
