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
from typing import TYPE_CHECKING

from yak.aio import Offload, to_thread
from yak.aio import in_place as in_place_offload
from yak.bus import EventBus
from yak.config import MAX_WAIT_S
from yak.core import Core, Services
from yak.domain import RewriteForm
from yak.memory.inbox.review import ReviewInbox
from yak.memory.service import MemoryService
from yak.settings import SettingsService
from yak.workspace.registry import WorkspaceRegistry

# The adapters and the conversation and refresh services are imported where they are built:
# a command that only reads a current local database loads neither SQLAlchemy nor the agent.
# The ports name types only (their dataclasses and Protocols cost a reading command's start).
if TYPE_CHECKING:
    from yak.db.engine import Database
    from yak.db.sqlite_read import Reader
    from yak.ports import (
        AttemptRepository,
        Clock,
        ConversationRepository,
        DocumentRepository,
        KeyStore,
        ModelClient,
        ModelClientFactory,
        ProposalStore,
        RefreshLock,
        SearchCandidates,
        SearchIndex,
        WorkspaceRepository,
    )
    from yak.refresh.queue import Scheduler

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
    max_wait_s: float = MAX_WAIT_S,
    timer_scheduler: Scheduler | None = None,
    poll_interval_s: float = 1.0,
    max_tool_rounds: int | None = None,
    rewrite_form: RewriteForm | None = None,
    in_place: bool = False,
    fast_reads: bool = True,
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
        debounce_s: the refresh's quiet time; default the settings' ``refresh_idle_s``.
        max_wait_s: the longest a refresh waits after the first unfolded turn (the benchmark of
            the memory's upkeep compares bounds).
        timer_scheduler: the queue's timers (tests fire them by hand).
        poll_interval_s: seconds between checks for writes by another process.
        max_tool_rounds: the agent's cap on tool rounds per turn (tests lower it).
        rewrite_form: how the memory model answers a refresh, whatever the settings say (the
            memory evaluation compares the forms); ``None``: the settings' ``memory_form``
            (``auto``: the tool where the endpoint supports it, found out and remembered in
            ``endpoints.json``).
        in_place: the services make their repository, file and key store calls in place
            (``yak.aio.in_place``) instead of on worker threads: for a command that only reads
            and drives the core with ``yak.aio.run_in_place``, without an event loop.
        fast_reads: with ``read_only_fallback``, serve the reads of the local SQLite file through
            the plain ``sqlite3`` reader (a command that only reads); ``False``: the SQLAlchemy
            adapters only, read-only when the file cannot be written (the desktop app, which
            reads and writes for as long as it runs).

    Raises:
        SchemaTooNew: a newer Yak wrote the database; nothing is changed.
        StoreError: the database cannot be opened, read or written.
    """
    options = _Options(
        clock=clock,
        model_client=model_client,
        env=env,
        debounce_s=debounce_s,
        max_wait_s=max_wait_s,
        timer_scheduler=timer_scheduler,
        poll_interval_s=poll_interval_s,
        max_tool_rounds=max_tool_rounds,
        rewrite_form=rewrite_form,
        offload=in_place_offload if in_place else to_thread,
    )
    if key_store is None:
        from yak.llm.credentials import KeyringKeyStore

        key_store = KeyringKeyStore()
    if database_url is None:
        database_url = (os.environ if env is None else env).get("YAK_DATABASE_URL", "")
    url = database_url.strip() or None
    reader = _fast_reader(data_dir) if read_only_fallback and fast_reads and url is None else None
    if reader is not None:
        return _build_reading(reader, data_dir, key_store=key_store, options=options)
    from yak.db.engine import open_database

    database = open_database(data_dir, read_only_fallback=read_only_fallback, url=url)
    try:
        # A core run in place has no loop for the refresh queue: its services wait for a use.
        core = _build(
            _Storage.of(database), data_dir, key_store=key_store, options=options, lazy=in_place
        )
    except BaseException:
        database.close()
        raise
    return core


class _Options:
    """``open_core``'s keyword arguments for the services (a plain class: see ``yak.cli``)."""

    def __init__(
        self,
        *,
        clock: Clock | None,
        model_client: ModelClientFactory | None,
        env: dict[str, str] | None,
        debounce_s: float | None,
        max_wait_s: float,
        timer_scheduler: Scheduler | None,
        poll_interval_s: float,
        max_tool_rounds: int | None,
        rewrite_form: RewriteForm | None,
        offload: Offload,
    ) -> None:
        self.clock = clock
        self.model_client = model_client
        self.env = env
        self.debounce_s = debounce_s
        self.max_wait_s = max_wait_s
        self.timer_scheduler = timer_scheduler
        self.poll_interval_s = poll_interval_s
        self.max_tool_rounds = max_tool_rounds
        self.rewrite_form = rewrite_form
        self.offload = offload


class _Storage:
    """The repositories a core is built on, the conversations built on first use, and how to
    close them all."""

    def __init__(
        self,
        *,
        workspaces: WorkspaceRepository,
        documents: DocumentRepository,
        proposals: ProposalStore,
        attempts: AttemptRepository,
        conversations: Callable[[], ConversationRepository],
        search_index: SearchIndex,
        lock: Callable[[], RefreshLock],
        read_only: Callable[[], bool],
        close: Callable[[], None],
    ) -> None:
        self.workspaces = workspaces
        self.documents = documents
        self.proposals = proposals
        self.attempts = attempts
        self.conversations = conversations
        self.search_index = search_index
        self.lock = lock
        self.read_only = read_only
        self.close = close

    @classmethod
    def of(cls, database: Database) -> _Storage:
        """The SQLAlchemy repositories on ``database``; the refresh lock is the server's on a
        team database (one refresh per workspace across machines), else a lock file."""
        from yak.db.attempts import SqlAttemptRepository
        from yak.db.conversations import SqlConversationRepository
        from yak.db.documents import SqlDocumentRepository
        from yak.db.proposals import ProposalRepository
        from yak.db.search import SqlSearchIndex
        from yak.db.workspaces import SqlWorkspaceRepository

        def lock() -> RefreshLock:
            if database.shared:
                from yak.db.postgres import AdvisoryRefreshLock

                return AdvisoryRefreshLock(database.engine)
            from yak.db.locks import FileRefreshLock

            return FileRefreshLock(None if database.path is None else database.path.parent)

        conversations = SqlConversationRepository(database)
        return cls(
            workspaces=SqlWorkspaceRepository(database, shared_identity=database.shared),
            documents=SqlDocumentRepository(database),
            proposals=ProposalRepository(database),
            attempts=SqlAttemptRepository(database),
            conversations=lambda: conversations,
            search_index=SqlSearchIndex(database),
            lock=lock,
            read_only=lambda: database.read_only,
            close=database.close,
        )


class _LazySearchIndex:
    """The search index of the database a reading core opens on first use (``SearchIndex``)."""

    def __init__(self, index: Callable[[], SearchIndex]) -> None:
        self._index = index

    def candidates(self, query: str) -> SearchCandidates:
        """``SearchIndex.candidates`` of the full database's index."""
        return self._index().candidates(query)


def _fast_reader(data_dir: Path | None) -> Reader | None:
    """The plain ``sqlite3`` read path (``yak.db.sqlite_read``) for a command that only reads,
    when the database is the local SQLite file in ``data_dir`` and its schema is current;
    ``None`` otherwise (an in-memory database, a schema to migrate), and the SQLAlchemy
    adapters serve. The one place that chooses it; ``open_core`` never asks for a team database
    (a URL)."""
    if data_dir is None:
        return None
    from yak.db.sqlite_read import open_reader

    return open_reader(data_dir)


def _build_reading(
    reader: Reader, data_dir: Path | None, *, key_store: KeyStore, options: _Options
) -> Core:
    """A core whose reads go through ``reader``; anything else (a write, a rarer read, the
    conversations) opens the SQLAlchemy database on first use, read-only when it cannot be
    written."""
    from yak.db.sqlite_read import AttemptReader, DocumentReader, ProposalReader, WorkspaceReader

    opened: list[_Storage] = []

    def full() -> _Storage:
        if not opened:
            from yak.db.engine import open_database

            opened.append(_Storage.of(open_database(data_dir, read_only_fallback=True)))
        return opened[0]

    def close() -> None:
        try:
            reader.close()
        finally:
            if opened:
                opened[0].close()

    storage = _Storage(
        workspaces=WorkspaceReader(reader, lambda: full().workspaces),
        documents=DocumentReader(reader, lambda: full().documents),
        proposals=ProposalReader(reader, lambda: full().proposals),
        attempts=AttemptReader(reader, lambda: full().attempts),
        conversations=lambda: full().conversations(),
        search_index=_LazySearchIndex(lambda: full().search_index),
        lock=lambda: full().lock(),
        read_only=lambda: bool(opened) and opened[0].read_only(),
        close=close,
    )
    try:
        return _build(storage, data_dir, key_store=key_store, options=options, lazy=True)
    except BaseException:
        close()
        raise


def _build(
    storage: _Storage, data_dir: Path | None, *, key_store: KeyStore, options: _Options, lazy: bool
) -> Core:
    from yak.llm.endpoints import EndpointForms  # a small module: json and a lock

    bus = EventBus()
    offload = options.offload
    endpoint_forms = EndpointForms(data_dir)
    settings = SettingsService(
        data_dir,
        key_store=key_store,
        env=options.env,
        offload=offload,
        endpoint_forms=endpoint_forms,
    )
    memory = MemoryService(
        workspaces=storage.workspaces,
        documents=storage.documents,
        proposals=storage.proposals,
        attempts=storage.attempts,
        bus=bus,
        poll_interval_s=options.poll_interval_s,
        search_index=storage.search_index,
        offload=offload,
    )
    review = ReviewInbox(memory=memory, proposals=storage.proposals, bus=bus, offload=offload)
    clients = options.model_client or _ProviderFactory(settings, key_store)

    def build_services() -> Services:
        from yak.chat.service import ChatService
        from yak.refresh.refresher import MemoryRefresher
        from yak.refresh.scheduler import RefreshScheduler

        conversations = storage.conversations()
        refresher = MemoryRefresher(
            memory=memory,
            review=review,
            workspaces=storage.workspaces,
            conversations=conversations,
            model_client=clients,
            settings=settings.current,
            lock=storage.lock(),
            bus=bus,
            form=options.rewrite_form,
            endpoint_forms=endpoint_forms,
        )
        queue_options: dict[str, object] = {
            "debounce_s": settings.current().refresh_idle_s
            if options.debounce_s is None
            else options.debounce_s,
            "max_wait_s": options.max_wait_s,
            "clock": options.clock or time.monotonic,
        }
        if options.timer_scheduler is not None:
            queue_options["scheduler"] = options.timer_scheduler
        scheduler = RefreshScheduler(
            refresher=refresher,
            memory=memory,
            review=review,
            conversations=conversations,
            settings=settings,
            bus=bus,
            **queue_options,
        )
        chat = ChatService(
            conversations=conversations,
            workspaces=storage.workspaces,
            documents=storage.documents,
            bus=bus,
            settings=settings.current,
            model_client=clients,
            max_tool_rounds=options.max_tool_rounds,
            line_ages=memory.ages_on_thread,
        )
        return Services(refresh=scheduler, chat=chat, refresher=refresher)

    core = Core(
        workspaces=WorkspaceRegistry(storage.workspaces, offload=offload),
        memory=memory,
        review=review,
        settings=settings,
        bus=bus,
        data_dir=data_dir,
        read_only=storage.read_only(),
        close_storage=storage.close,
        build_services=build_services,
    )
    if not lazy:
        core.services  # noqa: B018 - a full core subscribes its services to the bus at once
    return core


class _ProviderFactory:
    """Builds a ``Provider`` for the current settings and key (``ModelClientFactory``), and
    says what it builds it from (``built_from``), so the refresher keeps its client until that
    changes (``yak.refresh.client.KeptModelClient``)."""

    def __init__(self, settings: SettingsService, key_store: KeyStore) -> None:
        self._settings = settings
        self._key_store = key_store

    def __call__(self) -> ModelClient:
        from yak.llm.provider import Provider

        current = self._settings.current()
        return Provider(
            base_url=current.base_url,
            api_key=self._key_store.api_key(),
            timeout_s=current.request_timeout_s,
        )

    def built_from(self) -> tuple[str | None, str | None, float, str | None]:
        """(base URL setting, API key, time limit in seconds, ``ANTHROPIC_BASE_URL``): what a
        client built now would use; equal values build an equivalent client. Blocking (the key
        store may ask the OS keyring): call it on a worker thread."""
        current = self._settings.current()
        return (
            current.base_url,
            self._key_store.api_key(),
            current.request_timeout_s,
            os.environ.get("ANTHROPIC_BASE_URL"),
        )
