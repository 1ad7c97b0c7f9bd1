"""EventBridge: re-emits the core's plain Python events (:mod:`yak.events`) as Qt signals.

The services publish on the asyncio loop thread, which under qasync is the Qt main thread, so the
signals are emitted directly. Each signal carries the event object unchanged; a view that wrote
the memory itself finds itself as ``MemoryChanged.initiator`` and skips that change.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from yak.bus import EventBus
from yak.events import (
    MemoryChanged,
    MessageAdded,
    ProposalsChanged,
    ReferencesChecked,
    RefreshFinished,
    RefreshStateChanged,
    SessionsChanged,
    SyncedFileFailed,
    TurnCompleted,
    WorkspaceChanged,
)


class EventBridge(QObject):
    """One Qt signal per core event type; connect widgets' slots to these.

    Args:
        bus: the event bus the services publish on.
    """

    memory_changed = Signal(object)  # MemoryChanged
    refresh_state_changed = Signal(object)  # RefreshStateChanged
    refresh_finished = Signal(object)  # RefreshFinished
    message_added = Signal(object)  # MessageAdded
    turn_completed = Signal(object)  # TurnCompleted
    sessions_changed = Signal(object)  # SessionsChanged
    synced_file_failed = Signal(object)  # SyncedFileFailed
    proposals_changed = Signal(object)  # ProposalsChanged
    workspace_changed = Signal(object)  # WorkspaceChanged
    references_checked = Signal(object)  # ReferencesChecked

    def __init__(self, bus: EventBus, parent: QObject | None = None) -> None:
        super().__init__(parent)
        routes = {
            MemoryChanged: self.memory_changed,
            RefreshStateChanged: self.refresh_state_changed,
            RefreshFinished: self.refresh_finished,
            MessageAdded: self.message_added,
            TurnCompleted: self.turn_completed,
            SessionsChanged: self.sessions_changed,
            SyncedFileFailed: self.synced_file_failed,
            ProposalsChanged: self.proposals_changed,
            WorkspaceChanged: self.workspace_changed,
            ReferencesChecked: self.references_checked,
        }
        self._unsubscribers: list[Callable[[], None]] = [
            bus.subscribe(event_type, signal.emit) for event_type, signal in routes.items()
        ]

    def close(self) -> None:
        """Stop listening to the bus (on quit, or when a test tears the window down)."""
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self._unsubscribers.clear()
