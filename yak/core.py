"""The ``Core``: what the composition root (``yak.bootstrap.open_core``) returns and every
front end drives. The desktop UI imports this type, never the adapters behind it (see
``docs/architecture.md``, "Layers")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # built on first use: a command that only reads never loads them
    from yak.bus import EventBus
    from yak.chat.service import ChatService
    from yak.memory.inbox.review import ReviewInbox
    from yak.memory.service import MemoryService
    from yak.memory.sharing.kept_file import KeptFile
    from yak.memory.watcher import MemoryWatcher
    from yak.refresh.refresher import MemoryRefresher
    from yak.refresh.scheduler import RefreshScheduler
    from yak.settings import SettingsService
    from yak.workspace.registry import WorkspaceRegistry


@dataclass(frozen=True)
class Services:
    """The services a conversation and the refresh queue need (their modules load the agent,
    the tools and the refresh machinery), built together."""

    refresh: RefreshScheduler
    chat: ChatService
    refresher: MemoryRefresher


@dataclass(frozen=True)
class Core:
    """The running core: every service a front end drives, around one event bus.

    Attributes:
        workspaces: path → workspace, for every front end.
        memory: the documents, their history and attempts (the only writer).
        review: the review inbox (proposals waiting for the person).
        kept_file: the instruction file each workspace keeps in sync.
        watcher: notices writes by other processes.
        refresh: the refresh scheduler (queue, key gate, state).
        chat: sessions and agent turns.
        settings: ``settings.json``, the environment and the API key.
        bus: where the services publish their events.
        refresher: the guarded rewrite itself (forced refreshes go through ``refresh``).
        data_dir: the data directory (``None`` for an in-memory database).
        read_only: the database was opened read-only (a command that only reads).
        close_storage: closes the database (``aclose`` and ``close`` call it).
        build_services: builds ``refresh``, ``chat`` and ``refresher``; the composition root
            calls it at once for a full core, and leaves it to the first use for a command that
            only reads.
    """

    workspaces: WorkspaceRegistry
    memory: MemoryService
    review: ReviewInbox
    settings: SettingsService
    bus: EventBus
    data_dir: Path | None
    read_only: bool
    close_storage: Callable[[], None]
    build_services: Callable[[], Services] = field(repr=False, compare=False)

    @cached_property
    def services(self) -> Services:
        """The refresh scheduler, the chat service and the refresher (built on first use)."""
        return self.build_services()

    @property
    def kept_file(self) -> KeptFile:
        """The instruction file each workspace keeps in sync (the memory service's)."""
        return self.memory.kept_file

    @property
    def watcher(self) -> MemoryWatcher:
        """Notices writes by other processes (the memory service's)."""
        return self.memory.watcher

    @property
    def refresh(self) -> RefreshScheduler:
        """The refresh scheduler (queue, key gate, state)."""
        return self.services.refresh

    @property
    def chat(self) -> ChatService:
        """Sessions and agent turns."""
        return self.services.chat

    @property
    def refresher(self) -> MemoryRefresher:
        """The guarded rewrite itself (forced refreshes go through ``refresh``)."""
        return self.services.refresher

    def _services_built(self) -> bool:
        return "services" in self.__dict__

    async def aclose(self) -> None:
        """Stop the background work (pending refreshes are dropped: their conversations stay
        unfolded and are picked up next start) and close the database."""
        self.watcher.stop_watching()
        try:
            if self._services_built():
                await self.refresh.aclose()
        finally:
            self.close_storage()

    def close(self) -> None:
        """Close the database without a running loop (a command that never started one)."""
        self.watcher.stop_watching()
        if self._services_built():
            self.refresh.queue.cancel()
        self.close_storage()
