"""The composition root: the one place that builds Yak's object graph.

:func:`open_core` opens the database, builds the adapters (repositories, the refresh lock, the
key store, the model client factory) and the core services around one event bus, and returns
a frozen :class:`yak.core.Core`. The desktop app, the command line, the tests and the benchmarks
all get their core here; no other module constructs a repository, a model client or a refresher (see
``docs/architecture.md``, "Layers").
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from yak.chat.service import ChatService
from yak.core import Core
from yak.db.attempts import SqlAttemptRepository
from yak.db.conversations import SqlConversationRepository
from yak.db.documents import SqlDocumentRepository
from yak.db.engine import Database, open_database
from yak.db.locks import FileRefreshLock
from yak.db.postgres import AdvisoryRefreshLock
from yak.db.workspaces import SqlWorkspaceRepository
from yak.events import EventBus
from yak.llm.credentials import KeyringKeyStore
from yak.llm.provider import Provider
from yak.memory.service import MemoryService
from yak.ports import Clock, KeyStore, ModelClient, ModelClientFactory, RefreshLock
from yak.refresh.queue import Scheduler
from yak.refresh.refresher import MemoryRefresher
from yak.refresh.scheduler import RefreshScheduler
from yak.settings import SettingsService
from yak.workspace.registry import WorkspaceRegistry

log = logging.getLogger(__name__)


def open_core(
    data_dir: Path | None,
    *,
    database_url: str | None = None,
    clock: Clock | None = None,
    model_client: ModelClientFactory | None = None,
    key_store: KeyStore | None = None,
    read_only_fallback: bool = False,
    env: dict[str, str] | None = None,
    debounce_s: float | None = None,
    timer_scheduler: Scheduler | None = None,
    poll_interval_s: float = 1.0,
    max_tool_rounds: int | None = None,
) -> Core:
    """Open the database in ``data_dir`` (migrating it), or the team database on a PostgreSQL
    server, and build the core around it.

    Synchronous (it migrates the database): the desktop app calls it on a worker thread.

    Args:
        data_dir: the data directory holding ``yak.db`` and ``settings.json``; ``None`` for a
            private in-memory database (tests and benchmarks).
        database_url: a PostgreSQL URL for the team database (``--database-url``); default
            ``YAK_DATABASE_URL`` from ``env``; ``""`` means the SQLite file in ``data_dir``.
            ``settings.json`` stays in ``data_dir`` either way.
        clock: monotonic seconds for the refresh queue (tests drive it by hand).
        model_client: builds the model client per use; default a ``Provider`` for the
            settings' base URL with the key store's key.
        key_store: where the API key lives; default the environment, then the OS keyring.
        read_only_fallback: open a database that cannot be written read-only (commands that
            only read).
        env: the environment for settings overrides (default ``os.environ``).
        debounce_s: the refresh debounce; default the settings' value.
        timer_scheduler: the queue's timers (tests fire them by hand).
        poll_interval_s: seconds between checks for writes by another process.
        max_tool_rounds: the agent's cap on tool rounds per turn (tests lower it).

    Raises:
        SchemaTooNew: a newer Yak wrote the database; nothing is changed.
        StoreError: the database cannot be opened, read or written.
    """
    if database_url is None:
        database_url = (os.environ if env is None else env).get("YAK_DATABASE_URL", "")
    database = open_database(
        data_dir, read_only_fallback=read_only_fallback, url=database_url.strip() or None
    )
    try:
        return _build(
            database,
            data_dir,
            clock=clock,
            model_client=model_client,
            key_store=key_store or KeyringKeyStore(),
            env=env,
            debounce_s=debounce_s,
            timer_scheduler=timer_scheduler,
            poll_interval_s=poll_interval_s,
            max_tool_rounds=max_tool_rounds,
        )
    except BaseException:
        database.close()
        raise


def _build(
    database: Database,
    data_dir: Path | None,
    *,
    clock: Clock | None,
    model_client: ModelClientFactory | None,
    key_store: KeyStore,
    env: dict[str, str] | None,
    debounce_s: float | None,
    timer_scheduler: Scheduler | None,
    poll_interval_s: float,
    max_tool_rounds: int | None,
) -> Core:
    bus = EventBus()
    settings = SettingsService(data_dir, key_store=key_store, env=env)
    workspace_repository = SqlWorkspaceRepository(database, shared_identity=database.shared)
    lock: RefreshLock = (
        AdvisoryRefreshLock(database.engine)
        if database.shared
        else FileRefreshLock(None if database.path is None else database.path.parent)
    )
    documents = SqlDocumentRepository(database)
    conversations = SqlConversationRepository(database)
    memory = MemoryService(
        workspaces=workspace_repository,
        documents=documents,
        attempts=SqlAttemptRepository(database),
        bus=bus,
        poll_interval_s=poll_interval_s,
    )
    clients = model_client or _provider_factory(settings, key_store)
    refresher = MemoryRefresher(
        memory=memory,
        workspaces=workspace_repository,
        conversations=conversations,
        model_client=clients,
        settings=settings.current,
        lock=lock,
        bus=bus,
    )
    queue_options: dict[str, object] = {
        "debounce_s": settings.current().debounce_s if debounce_s is None else debounce_s,
        "clock": clock or time.monotonic,
    }
    if timer_scheduler is not None:
        queue_options["scheduler"] = timer_scheduler
    scheduler = RefreshScheduler(
        refresher=refresher,
        memory=memory,
        conversations=conversations,
        settings=settings,
        bus=bus,
        **queue_options,
    )
    chat = ChatService(
        conversations=conversations,
        workspaces=workspace_repository,
        documents=documents,
        bus=bus,
        settings=settings.current,
        model_client=clients,
        max_tool_rounds=max_tool_rounds,
    )
    return Core(
        workspaces=WorkspaceRegistry(workspace_repository),
        memory=memory,
        refresh=scheduler,
        chat=chat,
        settings=settings,
        bus=bus,
        refresher=refresher,
        data_dir=data_dir,
        read_only=database.read_only,
        close_storage=database.close,
    )


def _provider_factory(settings: SettingsService, key_store: KeyStore) -> Callable[[], ModelClient]:
    """A ``Provider`` per use, for the base URL and time limit in effect then and the key
    store's key."""

    def build() -> ModelClient:
        current = settings.current()
        return Provider(
            base_url=current.base_url,
            api_key=key_store.api_key(),
            timeout_s=current.request_timeout_s,
        )

    return build
