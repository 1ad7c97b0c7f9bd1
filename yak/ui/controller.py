"""AppController: drives the main window, its memory panel, the chat panel and Settings.

Widgets emit intents (open a folder, refresh, review, open Settings); it spawns coroutines that
await the core (:class:`yak.core.Core`) and calls the widgets back. Core events arrive through
the :class:`EventBridge`; the panel shows each ``RefreshStateChanged`` snapshot as it is
(docs/architecture.md, "The path of one refresh"). A key stored in Settings › Provider is checked
again by the refresh scheduler; applied settings set the refresh's quiet time.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import shiboken6
from PySide6.QtCore import QObject

from yak.config import Settings
from yak.core import Core
from yak.domain import Proposal, ProposalStatus, RefreshStatus, Workspace
from yak.errors import WorkspaceNotFound, YakError
from yak.events import MemoryChanged, ProposalsChanged, RefreshStateChanged, SyncedFileFailed
from yak.memory.history.hunks import hand_lines
from yak.presenters import (
    REFRESH_STOPPED,
    change_words,
    decided_elsewhere,
    describe_outcome,
    read_only_words,
)
from yak.ui.bridge import EventBridge
from yak.ui.chat.controller import ChatController
from yak.ui.chat.panel import ChatPanel
from yak.ui.main_window import MainWindow
from yak.ui.memory_panel import MemoryPanel
from yak.ui.review_dialog import ReviewDialog
from yak.ui.settings.dialog import SettingsDialog
from yak.ui.settings.memory_controller import MemoryPageController
from yak.ui.settings.memory_page import MemoryPage
from yak.ui.settings.provider_page import ProviderPage
from yak.ui.tasks import TaskGroup, settled
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
        self.tasks = TaskGroup()
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
        panel.view_reply_requested.connect(self._on_panel_view_reply_requested)
        panel.review_requested.connect(self._on_panel_review_requested)
        panel.diff_requested.connect(self._on_panel_diff_requested)
        self.review_dialog = ReviewDialog(window)
        self.review_dialog.accept_requested.connect(self._on_review_accept_requested)
        self.review_dialog.reject_requested.connect(self._on_review_reject_requested)
        self.review_dialog.edit_text_requested.connect(self._on_review_edit_text_requested)
        panel.provider_settings_requested.connect(self.open_provider_settings)
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
        self._deciding: str | None = None  # the proposal this window is accepting or rejecting

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
        try:
            workspace = await self._open_folder(path)
        except YakError as exc:
            self.window.cancel_opening()
            self.window.show_error(str(exc), title="Cannot open the folder")
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

    async def _last_folder(self) -> str | None:
        """The most recently opened workspace whose folder still exists (a start without a
        folder reopens it, as editors reopen the last project), or ``None``."""
        try:
            recent = await self.core.workspaces.recent()
        except YakError as exc:
            log.warning("reading recent workspaces failed: %s", exc)
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
        groups = (self.tasks, self.memory_controller.tasks, self.provider_page.tasks)
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
            self._on_panel_review_requested(self.workspace.id)

    def _on_window_memory_history_requested(self) -> None:
        if self.workspace is not None:
            self.open_settings(self.workspace.id)
            self.memory_controller.open_history(self.workspace.id)

    def _on_window_memory_edit_requested(self) -> None:
        if self.workspace is not None:
            self.open_settings(self.workspace.id)

    def _on_panel_refresh_requested(self, workspace_id: str) -> None:
        self.tasks.spawn(self._refresh(workspace_id), name="panel-refresh")

    def _on_panel_edit_requested(self, workspace_id: str) -> None:
        self.open_settings(workspace_id)

    def _on_panel_view_reply_requested(self, workspace_id: str) -> None:
        self.tasks.spawn(self._view_reply(workspace_id), name="view-refused-reply")

    def _on_panel_review_requested(self, workspace_id: str) -> None:
        self.tasks.spawn(self._review(workspace_id), name="review-proposal")

    def _on_panel_diff_requested(self, workspace_id: str) -> None:
        self.tasks.spawn(self._last_change(workspace_id), name="last-change")

    def _on_review_accept_requested(self, proposal_id: str, content: object) -> None:
        text = content if isinstance(content, str) else None
        self.tasks.spawn(self._decide(proposal_id, accept=True, content=text), name="accept")

    def _on_review_reject_requested(self, proposal_id: str) -> None:
        self.tasks.spawn(self._decide(proposal_id, accept=False), name="reject")

    def _on_review_edit_text_requested(self, text: str) -> None:
        if self.workspace is not None:
            self.open_settings(self.workspace.id, proposal=text)

    def _on_notice_use_enclosing_requested(self, path: str) -> None:
        self.tasks.spawn(self.open_workspace(path), name="open-enclosing")

    def _on_notice_copy_enclosing_requested(self, workspace_id: str) -> None:
        self.tasks.spawn(self._copy_enclosing(workspace_id), name="copy-enclosing")

    def _on_notice_reattach_requested(self, workspace_id: str) -> None:
        self.tasks.spawn(self._reattach_here(workspace_id), name="reattach-here")

    def _on_notice_rename_declined(self, workspace_id: str) -> None:
        self.tasks.spawn(self._decline_rename(workspace_id), name="decline-rename")

    def _on_notice_link_requested(self, path: str) -> None:
        self.tasks.spawn(self._link_worktree(path), name="link-worktree")

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
        shown = self.review_dialog.proposal
        workspace = self.workspace
        if (
            shown is not None
            and workspace is not None
            and event.workspace_id == workspace.id
            and self.review_dialog.isVisible()
            and shown.id != self._deciding
        ):
            self.tasks.replace("review-recheck", self._recheck_review(workspace.id, shown))

    def _close_guard(self) -> bool:
        """Let the window close unless Settings holds unsaved edits; then ask first and close
        the window once they are saved or discarded."""
        if not self.settings_dialog.has_unsaved_changes():
            return True
        self.settings_dialog.confirm_close(self.window.close)
        return False

    # --- coroutines ----------------------------------------------------------------------------
    async def _update_recent(self) -> None:
        try:
            recent = await self.core.workspaces.recent()
            waiting = await self.core.review.pending_counts()
            self.window.set_recent(recent, waiting=waiting)
        except YakError as exc:
            log.warning("reading recent workspaces failed: %s", exc)

    async def _offer_memory_elsewhere(self, workspace: Workspace) -> None:
        """Show the scope notice when the folder has no memory of its own but one is found
        elsewhere: an orphan it looks like before a rename first, else its git main
        checkout's, else the enclosing workspace's (these two unless put aside in this
        window)."""
        notice = self.window.scope_notice
        registry = self.core.workspaces
        try:
            renamed = await registry.renamed_from(workspace.path)
            main = enclosing = None
            if renamed is None and workspace.id not in self._dismissed:
                main = await registry.worktree_main(workspace.path)
                if main is None:
                    enclosing = await registry.enclosing(workspace.path)
        except YakError as exc:
            log.warning("looking for a memory elsewhere failed: %s", exc)
            return
        if self.workspace is None or self.workspace.id != workspace.id:
            return  # another folder was opened meanwhile
        if renamed is not None:
            notice.show_renamed(renamed)
        elif main is not None:
            notice.show_worktree(main)
        elif enclosing is not None:
            notice.show_enclosing(workspace, enclosing)
        else:
            notice.clear()

    async def _copy_enclosing(self, source_id: str) -> None:
        """Copy it here: the enclosing workspace's document becomes this one's first
        version (a ``copy`` revision); the panel reloads on ``MemoryChanged``."""
        workspace = self.workspace
        if workspace is None:
            return
        try:
            source = await self.core.workspaces.get(source_id)
            await self.core.memory.copy_from(workspace.id, source, expected_version=None)
        except YakError as exc:
            self.window.show_error(str(exc), title="Copy the memory")

    async def _reattach_here(self, orphan_id: str) -> None:
        """Use it: move the orphan's memory, history and conversations to the open folder,
        then show the folder again (its memory and conversations are the moved ones)."""
        workspace = self.workspace
        if workspace is None:
            return
        try:
            moved = await self.core.workspaces.reattach(orphan_id, workspace.path)
        except YakError as exc:
            self.window.show_error(str(exc), title="Use the memory")
            return
        await self.open_workspace(moved.path)
        self.memory_controller.reload()

    async def _link_worktree(self, main_path: str) -> None:
        """Share its memory: the open worktree uses the main checkout's document from now on;
        the panel shows it."""
        workspace = self.workspace
        if workspace is None:
            return
        try:
            await self.core.workspaces.link(workspace.path, main_path)
        except YakError as exc:
            self.window.show_error(str(exc), title="Share the memory")
            return
        await self._load_panel(workspace.id)

    async def _decline_rename(self, orphan_id: str) -> None:
        """Not this one: remembered, so this folder is not offered that memory again; the
        enclosing workspace's may be offered instead."""
        workspace = self.workspace
        if workspace is None:
            return
        try:
            await self.core.workspaces.decline_rename(workspace.path, orphan_id)
        except YakError as exc:
            self.window.show_error(str(exc), title="Not this one")
            return
        await self._offer_memory_elsewhere(workspace)

    async def _load_panel(self, workspace_id: str) -> None:
        await self._load_document(workspace_id)
        await settled(self._spawn_load_state(workspace_id))

    async def _load_document(self, workspace_id: str) -> None:
        try:
            document = await self.core.memory.read(workspace_id)
        except YakError as exc:
            self.window.show_status(str(exc), timeout_ms=15000)
            return
        self.window.memory_panel.show_document(document)
        try:
            origins = await self.core.memory.blame(workspace_id)
            titles = {s.id: s.title for s in await self.core.chat.sessions(workspace_id)}
        except YakError as exc:
            log.warning("reading where the memory's lines came from failed: %s", exc)
            return
        self.window.memory_panel.set_origins(workspace_id, origins, titles)

    def _spawn_load_state(self, workspace_id: str) -> asyncio.Task[Any]:
        """Read the panel's refresh state again; a read still running is cancelled (the
        newest wins)."""
        return self.tasks.replace("panel-state", self._load_state(workspace_id))

    async def _load_state(self, workspace_id: str) -> None:
        try:
            state = await self.core.refresh.snapshot(workspace_id)
        except YakError as exc:
            self.window.show_status(str(exc), timeout_ms=15000)
            return
        self.window.memory_panel.show_refresh_state(state)

    async def _key_changed(self) -> None:
        """An API key was stored or removed: check again (a new key enqueues the paused
        workspaces; the scheduler publishes the snapshots the key changed)."""
        await self.core.refresh.check_key()

    async def _refresh(self, workspace_id: str) -> None:
        """A forced refresh; the queue's events show it running, then its outcome."""
        try:
            outcome = await self.core.refresh.refresh_now(workspace_id)
        except YakError as exc:
            self.window.show_error(str(exc), title="Memory refresh")
            return
        ok = RefreshStatus(outcome.status) in (RefreshStatus.APPLIED, RefreshStatus.UP_TO_DATE)
        self.window.show_status(describe_outcome(outcome), timeout_ms=10000 if ok else 30000)

    async def _view_reply(self, workspace_id: str) -> None:
        """A refused reply, as a diff against the document in the review view (the editor's
        text is not replaced; Edit… opens it to copy from)."""
        try:
            attempt = await self.core.memory.last_attempt(workspace_id)
            document = await self.core.memory.read(workspace_id)
        except YakError as exc:
            self.window.show_error(str(exc), title="Memory refresh")
            return
        reply = attempt.reply if attempt is not None else None
        if attempt is None or not reply:
            self.window.show_error(
                "The last refresh kept no reply to show.", title="Memory refresh"
            )
            return
        self.review_dialog.show_change(
            f"The refresh reply was refused ({attempt.status}); the document is unchanged.",
            document.content,
            reply,
            (attempt.reason,) if attempt.reason else (),
            editable=True,
        )
        self.review_dialog.show()
        self.review_dialog.raise_()

    async def _review(self, workspace_id: str) -> None:
        """Open the oldest proposal waiting for review."""
        try:
            waiting = await self.core.review.proposals(workspace_id)
            if not waiting:
                self.window.show_status("No change waits for review.", timeout_ms=10000)
                return
            await self._show_proposal(workspace_id, waiting[0])
        except YakError as exc:
            self.window.show_error(str(exc), title="Memory review")
            return
        self.review_dialog.show()
        self.review_dialog.raise_()

    async def _show_proposal(self, workspace_id: str, proposal: Proposal) -> None:
        """Put ``proposal`` in the dialog with its base text and the lines a person wrote in
        it. Raises ``YakError`` (a read failed)."""
        base = await self.core.memory.version_text(workspace_id, proposal.base_version)
        current = await self.core.memory.read(workspace_id)
        origins = await self.core.memory.blame(workspace_id)
        hand = hand_lines(base, origins, current=current.version == proposal.base_version)
        titles = {s.id: s.title for s in await self.core.chat.sessions(workspace_id)}
        self.review_dialog.show_proposal(proposal, base, hand=hand, titles=titles)

    async def _recheck_review(self, workspace_id: str, shown: Proposal) -> None:
        """The inbox changed while the dialog shows ``shown``: when it is no longer waiting
        (decided in another window or by ``yak memory accept``/``reject``), say so; when it
        was rebased onto a newer version, show it as it is now."""
        try:
            stored = await self.core.review.get_proposal(workspace_id, shown.id)
        except YakError as exc:
            log.warning("cannot read proposal %s again: %s", shown.id, exc)
            return
        still_shown = self.review_dialog.proposal
        if still_shown is None or still_shown.id != shown.id or shown.id == self._deciding:
            return
        if stored.status is not ProposalStatus.PENDING:
            self.review_dialog.show_decided(decided_elsewhere(stored))
        elif (stored.base_version, stored.content) != (shown.base_version, shown.content):
            try:
                await self._show_proposal(workspace_id, stored)
            except YakError as exc:
                self.review_dialog.show_error(str(exc))

    async def _last_change(self, workspace_id: str) -> None:
        """The last refresh's diff, read-only."""
        try:
            attempt = await self.core.memory.last_attempt(workspace_id)
            if attempt is None or attempt.result_version is None:
                self.window.show_status("The last refresh changed nothing.", timeout_ms=10000)
                return
            new = await self.core.memory.version_text(workspace_id, attempt.result_version)
            old = await self.core.memory.version_text(workspace_id, attempt.base_version)
        except YakError as exc:
            self.window.show_error(str(exc), title="Memory refresh")
            return
        self.review_dialog.show_change(
            f"The refresh of version {attempt.base_version} wrote version "
            f"{attempt.result_version}: +{attempt.added} −{attempt.removed}",
            old,
            new,
        )
        self.review_dialog.show()
        self.review_dialog.raise_()

    async def _decide(self, proposal_id: str, *, accept: bool, content: str | None = None) -> None:
        """Accept (as proposed or edited) or reject a proposal of the window's workspace; on
        success the dialog closes, otherwise it says why."""
        workspace = self.workspace
        if workspace is None:
            return
        self._deciding = proposal_id
        try:
            if accept:
                await self.core.review.accept(
                    workspace.id, proposal_id, content=content, initiator=self
                )
            else:
                await self.core.review.reject(workspace.id, proposal_id)
        except YakError as exc:
            self.review_dialog.show_error(str(exc))
            return
        finally:
            self._deciding = None
        self.review_dialog.hide()
        self.window.show_status(
            "Accepted the change." if accept else "Rejected the change; its lines stay out.",
            timeout_ms=10000,
        )
        # Deciding folded the proposal's conversations: the status line reads them again.
        await self.core.refresh.reload(workspace.id)
        await self._load_panel(workspace.id)
