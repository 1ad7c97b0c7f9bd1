"""AppController: drives the main window, its memory panel, the chat panel and Settings.

Widgets emit intents (open a folder, refresh, review, open Settings); it spawns coroutines that
await the core (:class:`yak.core.Core`) and calls the widgets back. Core events arrive through
the :class:`EventBridge`; the panel shows each ``RefreshStateChanged`` snapshot as it is
(docs/architecture.md, "The path of one refresh"). A key stored in Settings › Provider is checked
again by the refresh scheduler; applied settings set the refresh's quiet time.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from datetime import datetime
from typing import Any

import shiboken6
from PySide6.QtCore import QObject

from yak.config import Settings
from yak.core import Core
from yak.domain import (
    LineOrigin,
    MemorySummary,
    RefreshOutcome,
    RefreshStatus,
    Workspace,
)
from yak.errors import WorkspaceNotFound
from yak.events import MemoryChanged, ProposalsChanged, RefreshStateChanged, SyncedFileFailed
from yak.memory.freshness.age import LineAge
from yak.memory.freshness.stale import stale_lines
from yak.presenters import (
    REFRESH_STOPPED,
    change_words,
    describe_outcome,
    read_only_words,
)
from yak.ui.bridge import EventBridge
from yak.ui.chat.controller import ChatController
from yak.ui.chat.panel import ChatPanel
from yak.ui.gone_lines import GoneLinesController
from yak.ui.main_window import MainWindow
from yak.ui.memory_panel import MemoryPanel
from yak.ui.review_controller import ReviewController
from yak.ui.settings.dialog import SettingsDialog
from yak.ui.settings.memory_controller import MemoryPageController
from yak.ui.settings.memory_page import MemoryPage
from yak.ui.settings.provider_page import ProviderPage
from yak.ui.stale_dialog import StaleReview
from yak.ui.tasks import FAILED, ErrorSink, TaskGroup, logged, settled
from yak.ui.window_lock import WindowLock

log = logging.getLogger(__name__)

MEMORY_PAGE = MemoryPage.title
PROVIDER_PAGE = ProviderPage.title


class AppController(QObject):
    """The window's controller.

    Args:
        window: the main window to drive.
        core: the application core.
        bridge: the event bridge on the core's bus.

    Attributes:
        settings_dialog: the Settings dialog (Memory and Provider pages).
        memory_controller: the Settings memory page's controller.
        chat_controller: the chat panel's controller.
        provider_page: Settings › Provider.
        review: drives the review dialog (``review_dialog``).
    """

    def __init__(
        self,
        *,
        window: MainWindow,
        core: Core,
        bridge: EventBridge,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.window = window
        self.core = core
        self.bridge = bridge
        self.tasks = TaskGroup(window, progress=window)
        self.settings_dialog = SettingsDialog(window)
        self.memory_page = MemoryPage(self.settings_dialog)
        self.settings_dialog.add_page(MEMORY_PAGE, self.memory_page)
        self.memory_controller = MemoryPageController(self.memory_page, core, bridge, self)
        self._setup_chat()

        panel = MemoryPanel(window.memory_dock)
        window.set_memory_panel(panel)
        window.open_folder_requested.connect(self._on_window_open_folder_requested)
        window.settings_requested.connect(self._on_window_settings_requested)
        window.memory_refresh_requested.connect(self._on_window_memory_refresh_requested)
        window.memory_review_requested.connect(self._on_window_memory_review_requested)
        window.memory_history_requested.connect(self._on_window_memory_history_requested)
        window.memory_edit_requested.connect(self._on_window_memory_edit_requested)
        window.close_guard = self._close_guard
        panel.refresh_requested.connect(self._on_panel_refresh_requested)
        panel.retry_requested.connect(self._on_panel_refresh_requested)
        panel.stop_requested.connect(self._on_panel_stop_requested)
        panel.edit_requested.connect(self._on_panel_edit_requested)
        self.review = ReviewController(
            window=window, core=core, tasks=self.tasks, decided=self._load_panel, parent=self
        )
        self.review_dialog = self.review.dialog
        self.review.edit_text_requested.connect(self._on_review_edit_text_requested)
        panel.view_reply_requested.connect(self.review.view_reply)
        panel.review_requested.connect(self.review.review)
        panel.diff_requested.connect(self.review.last_change)
        self.stale_review = StaleReview(
            window, core, self.tasks, reload=self._load_document, open_editor=self.open_settings
        )
        panel.stale_review_requested.connect(self.stale_review.open)
        panel.provider_settings_requested.connect(self.open_provider_settings)
        self.gone_lines = GoneLinesController(
            core, bridge, panel, edit=self.open_settings, parent=self
        )
        notice = window.scope_notice
        notice.use_enclosing_requested.connect(self._on_notice_use_enclosing_requested)
        notice.copy_enclosing_requested.connect(self._on_notice_copy_enclosing_requested)
        notice.reattach_requested.connect(self._on_notice_reattach_requested)
        notice.rename_declined.connect(self._on_notice_rename_declined)
        notice.link_requested.connect(self._on_notice_link_requested)
        notice.dismissed.connect(self._on_notice_dismissed)
        self._dismissed: set[str] = set()  # workspaces whose offer was put aside
        self.window_lock = WindowLock(core.data_dir, self)  # one window per workspace
        self.window_lock.show_requested.connect(self._on_window_lock_show_requested)
        # Set when, at start, the folder asked for is open in another Yak window: that app
        # runs the start-up refreshes, this one does not run them again.
        self.other_window_open = False
        self._held_elsewhere = False  # the last open_workspace found its folder held
        self._handed_over = False  # … and its holder came to the front when asked
        bridge.memory_changed.connect(self._on_bridge_memory_changed)
        bridge.refresh_state_changed.connect(self._on_bridge_refresh_state_changed)
        bridge.synced_file_failed.connect(self._on_bridge_synced_file_failed)
        bridge.proposals_changed.connect(self._on_bridge_proposals_changed)

    def _setup_chat(self) -> None:
        """The chat panel in the window, and Settings › Provider beside Settings › Memory."""
        core = self.core
        self.chat_panel = ChatPanel()
        self.chat_controller = ChatController(
            self.chat_panel, core.chat, core.settings, parent=self
        )
        self.window.set_chat_panel(self.chat_panel)
        self.window.set_conversation_actions(self.chat_panel.conversation_actions())
        self.window.workspace_changed.connect(self.chat_controller.set_workspace)
        self.chat_controller.provider_settings_requested.connect(self.open_provider_settings)
        self.chat_controller.conversation_left.connect(core.refresh.conversation_closed)
        self.provider_page = ProviderPage(settings=core.settings, chat=core.chat)
        self.settings_dialog.add_page(PROVIDER_PAGE, self.provider_page)
        self.provider_page.key_saved.connect(self._on_provider_key_saved)
        self.provider_page.settings_applied.connect(self._on_provider_settings_applied)

    # --- entry points ----------------------------------------------------------------------------
    @property
    def workspace(self) -> Workspace | None:
        """The workspace open in the window."""
        return self.window.workspace

    async def start(self, workspace_path: str | None = None) -> bool:
        """Check for an API key (in the background), open ``workspace_path`` when given (an
        error is shown in the window, never raised), fill the recent menu, and start reading
        the Settings memory list. The folder goes first: the window already shows it as
        opening.

        Returns:
            ``False`` when ``workspace_path`` is open in another Yak window, which came to the
            front when asked: this window has nothing to show and the app should quit.
            ``True`` otherwise.
        """
        if self.core.read_only:
            data_dir = None if self.core.data_dir is None else str(self.core.data_dir)
            self.window.show_read_only(read_only_words(data_dir))
            self.chat_controller.panel.set_read_only(True)
        self.chat_controller.refresh_key_notice()
        reopening = not workspace_path
        if reopening:
            workspace_path = await self._last_folder()
        if (
            not workspace_path
            or await self.open_workspace(workspace_path, quiet_if_open_elsewhere=reopening) is None
        ):
            # Another app shows that workspace and ran the start-up refreshes already.
            self.other_window_open = self._held_elsewhere
            if self._handed_over:
                return False
            await self._update_recent()  # (opening a workspace fills it too)
        # Read the memory list now, in the background, so Settings opens with it at once
        # (and re-reads it then, in the background too).
        self.memory_controller.reload()
        return True

    async def open_workspace(
        self, path: str, *, quiet_if_open_elsewhere: bool = False
    ) -> Workspace | None:
        """Open the folder ``path`` as the window's workspace; ``None`` (and a message in the
        window) when it cannot be opened. A folder the window shows as opening (given on the
        command line, see ``MainWindow.show_opening``) gives way to the workspace, or to the
        window as it was when it cannot be opened.

        A workspace open in another Yak window (another process on this data directory) is
        not opened a second time beside it: that window is asked to come to the front and the
        status bar says so; when it does not answer, a message says where the folder is open.
        With ``quiet_if_open_elsewhere`` (the last workspace reopened at start) neither happens.
        The window stays as it was.
        """
        self._held_elsewhere = self._handed_over = False
        workspace = await self.tasks.attempt(
            self._open_folder(path), on_error=self._cannot_open, progress=f"Opening {path}…"
        )
        if workspace is FAILED:
            return None
        if not self.window_lock.claim(workspace.id):
            self._held_elsewhere = True
            self.window.cancel_opening()
            if quiet_if_open_elsewhere:
                await self._update_recent()
                return None
            if await self.window_lock.ask_holder_to_show(workspace.id):
                self._handed_over = True
                self.window.show_status(
                    f"{workspace.path} is open in another Yak window, now in front.",
                    timeout_ms=10000,
                )
                await self._update_recent()
                return None
            self.window.show_error(
                f"{workspace.path} is already open in another Yak window. Switch to that "
                "window, or close it and open the folder here.",
                title="Already open",
            )
            await self._update_recent()
            return None
        log.info("opened workspace %s (%s)", workspace.path, workspace.id)
        self.window.set_workspace(workspace)
        self._focus_prompt()
        await self._load_panel(workspace.id)
        await self._offer_memory_elsewhere(workspace)
        await self._update_recent()
        return workspace

    async def _open_folder(self, path: str) -> Workspace:
        """The workspace of ``path``, registered and marked opened; in a read-only database
        only one already stored (nothing can be written there).

        Raises:
            WorkspaceNotFound: no such folder, or, read-only, a folder the database does not
                know. UsageError, StoreError.
        """
        if not self.core.read_only:
            return await self.core.workspaces.open(path)
        workspace, stored = await self.core.workspaces.for_read(path)
        if not stored:
            raise WorkspaceNotFound(
                f"{workspace.path} has no memory or conversations in the read-only Yak "
                "database, and nothing can be added to it"
            )
        return workspace

    def _cannot_open(self, text: str) -> None:
        self.window.cancel_opening()
        self.window.show_error(text, title="Cannot open the folder")

    def _error_box(self, title: str) -> ErrorSink:
        """The sink of an action the user asked for: a message box titled ``title``."""
        return functools.partial(self.window.show_error, title=title)

    def _status_error(self, text: str) -> None:
        self.window.show_status(text, timeout_ms=15000)

    async def _last_folder(self) -> str | None:
        """The most recently opened workspace whose folder still exists (a start without a
        folder reopens it, as editors reopen the last project), or ``None``."""
        recent = await self.tasks.attempt(
            self.core.workspaces.recent(), on_error=logged("reading recent workspaces")
        )
        if recent is FAILED:
            return None
        return next((w.path for w in recent if os.path.isdir(w.path)), None)

    def _focus_prompt(self) -> None:
        """The cursor goes to the chat's prompt box whenever a workspace is shown, with what
        was typed while it opened."""
        typed = self.window.take_early_prompt()
        if typed:
            self.chat_panel.input.edit.insertPlainText(typed)
        self.chat_panel.focus_input()

    def open_settings(
        self, workspace_id: str | None = None, *, proposal: str | None = None
    ) -> None:
        """Show Settings on the memory page, on ``workspace_id`` when given."""
        self.settings_dialog.show_page(MEMORY_PAGE)
        self.memory_controller.reload()
        target = workspace_id or (self.workspace.id if self.workspace else None)
        if target is not None:
            self.memory_controller.show_workspace(target, proposal=proposal)

    def open_provider_settings(self) -> None:
        """Show Settings on the Provider page (where an API key is added)."""
        self.settings_dialog.show_page(PROVIDER_PAGE)

    async def aclose(self, grace_s: float = 1.0) -> None:
        """Quitting: stop the chat's reply (it has up to ``grace_s`` seconds to store what was
        said), close Settings, and cancel the controllers' work before the core closes."""
        await self.chat_controller.aclose(grace_s)
        if shiboken6.isValid(self.settings_dialog):  # not when the window was deleted first
            self.settings_dialog.hide()
        groups = (
            self.tasks,
            self.memory_controller.tasks,
            self.provider_page.tasks,
            self.gone_lines.tasks,
        )
        for group in groups:
            group.close()
        for group in groups:
            await group.drain()
        self.window_lock.release()

    # --- slots ---------------------------------------------------------------------------------
    def _on_window_lock_show_requested(self) -> None:
        # Another `yak DIR` (or Open Folder… in another window) asked for this workspace.
        window = self.window
        if window.isMinimized():
            window.showNormal()
        window.raise_()
        window.activateWindow()

    def _on_panel_stop_requested(self, workspace_id: str) -> None:
        if self.core.refresh.stop(workspace_id):
            self.window.show_status(REFRESH_STOPPED, timeout_ms=15000)

    def _on_window_open_folder_requested(self, path: str) -> None:
        self.tasks.spawn(self.open_workspace(path), name="open-workspace")

    def _on_window_settings_requested(self) -> None:
        self.open_settings()

    def _on_window_memory_refresh_requested(self) -> None:
        if self.workspace is not None:
            self._on_panel_refresh_requested(self.workspace.id)

    def _on_window_memory_review_requested(self) -> None:
        if self.workspace is not None:
            self.review.review(self.workspace.id)

    def _on_window_memory_history_requested(self) -> None:
        if self.workspace is not None:
            self.open_settings(self.workspace.id)
            self.memory_controller.open_history(self.workspace.id)

    def _on_window_memory_edit_requested(self) -> None:
        if self.workspace is not None:
            self.open_settings(self.workspace.id)

    def _on_panel_refresh_requested(self, workspace_id: str) -> None:
        # A forced refresh; the queue's events show it running, then its outcome.
        self.tasks.run(
            self.core.refresh.refresh_now(workspace_id),
            name="panel-refresh",
            on_error=self._error_box("Memory refresh"),
            on_success=self._show_outcome,
            progress="Refreshing the memory…",
        )

    def _on_panel_edit_requested(self, workspace_id: str) -> None:
        self.open_settings(workspace_id)

    def _on_review_edit_text_requested(self, text: str) -> None:
        if self.workspace is not None:
            self.open_settings(self.workspace.id, proposal=text)

    def _on_notice_use_enclosing_requested(self, path: str) -> None:
        self.tasks.spawn(self.open_workspace(path), name="open-enclosing")

    def _on_notice_copy_enclosing_requested(self, workspace_id: str) -> None:
        self.tasks.run(
            self._copy_enclosing(workspace_id),
            name="copy-enclosing",
            on_error=self._error_box("Copy the memory"),
        )

    def _on_notice_reattach_requested(self, workspace_id: str) -> None:
        # Use it: the orphan's memory, history and conversations move to the open folder,
        # which is then shown again (its memory and conversations are the moved ones).
        if self.workspace is not None:
            self.tasks.run(
                self.core.workspaces.reattach(workspace_id, self.workspace.path),
                name="reattach-here",
                on_error=self._error_box("Use the memory"),
                on_success=self._reattached,
            )

    def _on_notice_rename_declined(self, workspace_id: str) -> None:
        # Not this one: remembered, so this folder is not offered that memory again; the
        # enclosing workspace's may be offered instead.
        workspace = self.workspace
        if workspace is not None:
            self.tasks.run(
                self.core.workspaces.decline_rename(workspace.path, workspace_id),
                name="decline-rename",
                on_error=self._error_box("Not this one"),
                on_success=lambda _: self._offer_memory_elsewhere(workspace),
            )

    def _on_notice_link_requested(self, path: str) -> None:
        # Share its memory: the open worktree uses the main checkout's document from now on.
        workspace = self.workspace
        if workspace is not None:
            self.tasks.run(
                self.core.workspaces.link(workspace.path, path),
                name="link-worktree",
                on_error=self._error_box("Share the memory"),
                on_success=lambda _: self._load_panel(workspace.id),
            )

    def _on_notice_dismissed(self) -> None:
        if self.workspace is not None:
            self._dismissed.add(self.workspace.id)

    def _on_provider_key_saved(self) -> None:
        self.tasks.spawn(self._key_changed(), name="api-key-changed")

    def _on_provider_settings_applied(self, settings: Settings) -> None:
        self.core.refresh.queue.set_debounce(settings.refresh_idle_s)

    def _on_bridge_memory_changed(self, event: MemoryChanged) -> None:
        if self.workspace is not None and event.workspace_id == self.workspace.id:
            # A new version makes any earlier refresh verdict in the status bar stale.
            self.window.show_status(
                f"Memory updated to version {event.version} ({change_words(event.source)})."
            )
            self.tasks.spawn(self._load_document(event.workspace_id), name="panel-document")

    def _on_bridge_synced_file_failed(self, event: SyncedFileFailed) -> None:
        # After the "Memory updated" line of the same write, so this one stays on screen.
        self.window.show_status(event.message, timeout_ms=30000)

    def _on_bridge_refresh_state_changed(self, event: RefreshStateChanged) -> None:
        self.window.memory_panel.show_refresh_state(event.snapshot)

    def _on_bridge_proposals_changed(self, event: ProposalsChanged) -> None:
        # File › Open Recent says how many changes wait in each folder.
        self.tasks.replace("recent-menu", self._update_recent())
        self.review.proposals_changed(event)

    def _close_guard(self) -> bool:
        """Let the window close unless Settings holds unsaved edits; then ask first and close
        the window once they are saved or discarded."""
        if not self.settings_dialog.has_unsaved_changes():
            return True
        self.settings_dialog.confirm_close(self.window.close)
        return False

    # --- coroutines ----------------------------------------------------------------------------
    async def _update_recent(self) -> None:
        await self.tasks.attempt(
            self._read_recent(),
            on_error=logged("reading recent workspaces"),
            on_success=lambda found: self.window.set_recent(found[0], waiting=found[1]),
        )

    async def _read_recent(self) -> tuple[list[Workspace], dict[str, int]]:
        return await self.core.workspaces.recent(), await self.core.review.pending_counts()

    async def _offer_memory_elsewhere(self, workspace: Workspace) -> None:
        """Show the scope notice when the folder has no memory of its own but one is found
        elsewhere: an orphan it looks like before a rename first, else its git main
        checkout's, else the enclosing workspace's (these two unless put aside in this
        window)."""
        found = await self.tasks.attempt(
            self._memory_elsewhere(workspace), on_error=logged("looking for a memory elsewhere")
        )
        if found is FAILED or self.workspace is None or self.workspace.id != workspace.id:
            return  # (or another folder was opened meanwhile)
        renamed, main, enclosing = found
        notice = self.window.scope_notice
        if renamed is not None:
            notice.show_renamed(renamed)
        elif main is not None:
            notice.show_worktree(main)
        elif enclosing is not None:
            notice.show_enclosing(workspace, enclosing)
        else:
            notice.clear()

    async def _memory_elsewhere(
        self, workspace: Workspace
    ) -> tuple[MemorySummary | None, MemorySummary | None, MemorySummary | None]:
        """``(renamed, main, enclosing)``: the memories :meth:`_offer_memory_elsewhere` may
        offer, at most one of them found."""
        registry = self.core.workspaces
        renamed = await registry.renamed_from(workspace.path)
        if renamed is not None or workspace.id in self._dismissed:
            return renamed, None, None
        main = await registry.worktree_main(workspace.path)
        if main is not None:
            return None, main, None
        return None, None, await registry.enclosing(workspace.path)

    async def _copy_enclosing(self, source_id: str) -> None:
        """Copy it here: the enclosing workspace's document becomes this one's first
        version (a ``copy`` revision); the panel reloads on ``MemoryChanged``."""
        workspace = self.workspace
        if workspace is not None:
            source = await self.core.workspaces.get(source_id)
            await self.core.memory.copy_from(workspace.id, source, expected_version=None)

    async def _reattached(self, moved: Workspace) -> None:
        await self.open_workspace(moved.path)
        self.memory_controller.reload()

    async def _load_panel(self, workspace_id: str) -> None:
        await self._load_document(workspace_id)
        await settled(self._spawn_load_state(workspace_id))

    async def _load_document(self, workspace_id: str) -> None:
        panel = self.window.memory_panel
        document = await self.tasks.attempt(
            self.core.memory.read(workspace_id), on_error=self._status_error
        )
        if document is FAILED:
            return
        panel.show_document(document)
        self.gone_lines.check(workspace_id)
        await self.tasks.attempt(
            self._read_origins(workspace_id),
            on_error=logged("reading where the memory's lines came from"),
            on_success=lambda found: self._show_origins(workspace_id, *found),
        )

    async def _read_origins(
        self, workspace_id: str
    ) -> tuple[list[LineOrigin], dict[str, str], list[LineAge]]:
        origins = await self.core.memory.blame(workspace_id)
        titles = {s.id: s.title for s in await self.core.chat.sessions(workspace_id)}
        ages = await self.core.memory.line_ages(workspace_id)
        return origins, titles, ages

    def _show_origins(
        self,
        workspace_id: str,
        origins: list[LineOrigin],
        titles: dict[str, str],
        ages: list[LineAge],
    ) -> None:
        after_days = self.core.settings.current().stale_after_days
        today = datetime.now().astimezone().date()
        stale = stale_lines(ages, today=today, after_days=after_days)
        self.window.memory_panel.set_origins(workspace_id, origins, titles, ages=ages, stale=stale)

    def _spawn_load_state(self, workspace_id: str) -> asyncio.Task[Any]:
        """Read the panel's refresh state again; a read still running is cancelled (the
        newest wins)."""
        return self.tasks.replace("panel-state", self._load_state(workspace_id))

    async def _load_state(self, workspace_id: str) -> None:
        await self.tasks.attempt(
            self.core.refresh.snapshot(workspace_id),
            on_error=self._status_error,
            on_success=self.window.memory_panel.show_refresh_state,
        )

    async def _key_changed(self) -> None:
        """An API key was stored or removed: check again (a new key enqueues the paused
        workspaces; the scheduler publishes the snapshots the key changed)."""
        await self.core.refresh.check_key()

    def _show_outcome(self, outcome: RefreshOutcome) -> None:
        ok = RefreshStatus(outcome.status) in (RefreshStatus.APPLIED, RefreshStatus.UP_TO_DATE)
        self.window.show_status(describe_outcome(outcome), timeout_ms=10000 if ok else 30000)
