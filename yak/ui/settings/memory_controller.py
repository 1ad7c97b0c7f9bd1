"""MemoryPageController: runs what the Settings memory page asks for, through the core.

The page's widgets emit intents (save, import, export, delete, restore, refresh, re-attach,
select a workspace); this controller spawns one coroutine per intent, awaits the core's services
(the memory service, the workspace registry, the refresh scheduler; their repository calls run
on worker threads), and drives the widgets with the result. Every error a user can cause ends as
a visible sentence on the page.

Every write it asks for names the controller as its initiator, so the ``MemoryChanged`` it
causes is skipped here (the write's own result already updated the page). Every other change
reaches the page through the event bridge: a write by a refresh, another window or another
process reaches the editor, which shows it or raises its banner (never a silent overwrite of
unsaved edits), and the list (a memory the CLI created appears; the selection and the scroll
position stay); a finished refresh or a pause for want of an API key updates the Status column;
settings changed elsewhere (``yak memory disable``, ``mode``) reach the editor's switches and the
list's row (``WorkspaceChanged``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import replace

from PySide6.QtCore import QObject

from yak.core import Core
from yak.domain import MemoryDocument, QueueState, RefreshStatus, Workspace
from yak.errors import ConflictError, YakError
from yak.events import (
    MemoryChanged,
    ProposalsChanged,
    RefreshFinished,
    RefreshStateChanged,
    WorkspaceChanged,
)
from yak.memory.search import search_documents
from yak.memory.sharing.sync import DEFAULT_SYNCED_FILE
from yak.presenters import describe_outcome
from yak.ui import dialogs
from yak.ui.bridge import EventBridge
from yak.ui.settings.history_dialog import HistoryDialog
from yak.ui.settings.import_preview import ImportPreviewDialog, preview_import
from yak.ui.settings.memory_list import summary_from
from yak.ui.settings.memory_page import MemoryPage
from yak.ui.tasks import TaskGroup

log = logging.getLogger(__name__)

SEARCH_DELAY_S = 0.2  # the filter searches the documents once typing pauses this long


class MemoryPageController(QObject):
    """Connects a :class:`MemoryPage` to the core.

    Args:
        page: the page to drive.
        core: the application core (memory, workspaces, refresh).
        bridge: the event bridge (memory changes, refresh states and outcomes).
    """

    def __init__(
        self, page: MemoryPage, core: Core, bridge: EventBridge, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.page = page
        self.memory = core.memory
        self.workspaces = core.workspaces
        self.refresh = core.refresh
        self.chat = core.chat
        self.tasks = TaskGroup()
        self.history_dialog: HistoryDialog | None = None
        self.preview_dialog: ImportPreviewDialog | None = None  # Import…'s diff, while open
        # workspace id -> (proposal text or None, note) for its next load into the editor
        self._pending: dict[str, tuple[str | None, str]] = {}
        editor = page.editor
        page.workspace_selected.connect(self._on_page_workspace_selected)
        page.import_requested.connect(self._on_page_import_requested)
        page.export_requested.connect(self._on_page_export_requested)
        page.delete_requested.connect(self._on_page_delete_requested)
        page.reattach_requested.connect(self._on_page_reattach_requested)
        page.search_requested.connect(self._on_page_search_requested)
        editor.save_requested.connect(self._on_editor_save_requested)
        editor.refresh_requested.connect(self._on_editor_refresh_requested)
        editor.history_requested.connect(self._on_editor_history_requested)
        editor.memory_enabled_changed.connect(self._on_editor_memory_enabled_changed)
        editor.review_mode_changed.connect(self._on_editor_review_mode_changed)
        editor.sync_file_changed.connect(self._on_editor_sync_file_changed)
        bridge.memory_changed.connect(self._on_bridge_memory_changed)
        bridge.refresh_finished.connect(self._on_bridge_refresh_finished)
        bridge.refresh_state_changed.connect(self._on_bridge_refresh_state_changed)
        bridge.workspace_changed.connect(self._on_bridge_workspace_changed)
        bridge.proposals_changed.connect(self._on_bridge_proposals_changed)
        self._reloads_running: set[str] = set()
        self._reloads_again: set[str] = set()

    # --- entry points ----------------------------------------------------------------------------
    def reload(self) -> None:
        """Reload the workspace list (when the page is shown)."""
        self.tasks.spawn(self._reload(), name="memory-page-reload")

    def show_workspace(
        self, workspace_id: str, *, proposal: str | None = None, note: str = ""
    ) -> None:
        """Select ``workspace_id`` and load it into the editor (through the unsaved guard).

        Args:
            proposal: text to put in the editor instead of the stored document (a refused
                refresh reply); the user trims it and saves it as a hand edit.
            note: a message to show under the editor once loaded.
        """
        if proposal is not None or note:
            self._pending[workspace_id] = (proposal, note)
        editing = self.page.editor.workspace
        if editing is not None and editing.id == workspace_id:
            if proposal is not None:
                self.page.resolve_unsaved(lambda: self._spawn_load(workspace_id))
            return
        self.page.select_workspace(workspace_id)

    # --- slots ---------------------------------------------------------------------------------
    def _on_page_workspace_selected(self, workspace_id: str) -> None:
        self._spawn_load(workspace_id)

    def _spawn_load(self, workspace_id: str) -> None:
        # The newest choice wins: a load still running for another workspace is cancelled.
        self.tasks.replace("memory-page-load", self._load(workspace_id))

    def _on_editor_save_requested(self, workspace_id: str, text: str, base_version: int) -> None:
        self.tasks.spawn(self._save(workspace_id, text, base_version), name="memory-save")

    def _on_editor_refresh_requested(self, workspace_id: str) -> None:
        self.tasks.spawn(self._refresh(workspace_id), name="memory-page-refresh")

    def _on_editor_history_requested(self, workspace_id: str) -> None:
        self.open_history(workspace_id)

    def open_history(self, workspace_id: str) -> None:
        """Open the History dialog of ``workspace_id`` (History… here and in the Memory menu)."""
        self.tasks.spawn(self._open_history(workspace_id), name="memory-history")

    def _on_editor_memory_enabled_changed(self, workspace_id: str, enabled: bool) -> None:
        self.tasks.spawn(self._set_memory_enabled(workspace_id, enabled), name="memory-enabled")

    def _on_editor_review_mode_changed(self, workspace_id: str, review: bool) -> None:
        self.tasks.spawn(self._set_review_mode(workspace_id, review), name="memory-review-mode")

    def _on_editor_sync_file_changed(self, workspace_id: str, keep: bool) -> None:
        self.tasks.spawn(self._set_sync_file(workspace_id, keep), name="memory-sync-file")

    def _on_page_import_requested(self, workspace_id: str, path: str, base_version: int) -> None:
        self.tasks.spawn(self._import(workspace_id, path, base_version), name="memory-import")

    def _on_page_export_requested(self, workspace_id: str, path: str, fmt: str) -> None:
        self.tasks.spawn(self._export(workspace_id, path, fmt), name="memory-export")

    def _on_page_delete_requested(self, workspace_id: str, base_version: int) -> None:
        self.tasks.spawn(self._delete(workspace_id, base_version), name="memory-delete")

    def _on_page_search_requested(self, text: str) -> None:
        # The newest filter wins: a search still running for older text is cancelled.
        self.tasks.replace("memory-page-search", self._search(text))

    async def _search(self, text: str) -> None:
        """Find the documents containing the filter text (after a short pause, so typing a
        word runs one search) and let the page show them beside the folder matches."""
        if not text.strip():
            return
        await asyncio.sleep(SEARCH_DELAY_S)
        try:
            found = await search_documents(self.memory, text)
        except YakError as exc:  # the filter still matches folders
            log.warning("memory search failed: %s", exc)
            return
        self.page.show_content_matches(
            text, frozenset(h.workspace.id for h in found.hits), plain_scan=bool(found.why_scan)
        )

    def _on_page_reattach_requested(self, workspace_id: str, folder: str) -> None:
        self.tasks.spawn(self._reattach(workspace_id, folder), name="memory-reattach")

    def _on_bridge_memory_changed(self, event: MemoryChanged) -> None:
        if event.initiator is self:
            return  # the write's own result already updated the page
        editing = self.page.editor.workspace
        listed = self.page.model.summary_for(event.workspace_id) is not None
        if (editing is not None and editing.id == event.workspace_id) or listed:
            self.tasks.spawn(self._document_updated(event), name="memory-page-updated")
        elif self.page.isVisible():  # a memory new to the list (the CLI created it)
            self._reload_soon("memory-list", self._reload_list)

    def _on_bridge_refresh_finished(self, _event: RefreshFinished) -> None:
        if self.page.isVisible():
            self._reload_soon("memory-statuses", self._reload_statuses)

    def _on_bridge_refresh_state_changed(self, event: RefreshStateChanged) -> None:
        # Only the pause (no API key) and its end show in the list; running/pending do not.
        paused = event.state == QueueState.PAUSED
        if self.page.isVisible() and paused != (
            event.workspace_id in self.page.model.paused_workspaces
        ):
            self._reload_soon("memory-statuses", self._reload_statuses)

    def _on_bridge_proposals_changed(self, event: ProposalsChanged) -> None:
        # The Status cell says how many changes wait, whoever proposed or decided them.
        self.page.model.set_waiting(event.workspace_id, event.pending)

    def _on_bridge_workspace_changed(self, event: WorkspaceChanged) -> None:
        editing = self.page.editor.workspace
        if (editing is not None and editing.id == event.workspace_id) or (
            self.page.model.summary_for(event.workspace_id) is not None
        ):
            self.tasks.spawn(
                self._workspace_updated(event.workspace_id), name="memory-page-workspace"
            )

    def _on_history_restore_requested(self, revision_id: str) -> None:
        dialog = self.history_dialog
        if dialog is None:
            return
        workspace_id = dialog.property("workspace_id")
        self.page.resolve_unsaved(
            lambda: self.tasks.spawn(
                self._restore(workspace_id, revision_id), name="memory-restore"
            )
        )

    def _on_history_open_reply_requested(self, reply: str) -> None:
        dialog = self.history_dialog
        if dialog is None:
            return
        workspace_id = dialog.property("workspace_id")
        dialog.close()
        self.show_workspace(workspace_id, proposal=reply)

    def _reload_soon(self, key: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` now, or once more after the run in flight (events come in bursts)."""
        if key in self._reloads_running:
            self._reloads_again.add(key)
            return
        self._reloads_running.add(key)

        async def run() -> None:
            try:
                while True:
                    self._reloads_again.discard(key)
                    await work()
                    if key not in self._reloads_again:
                        return
            finally:
                self._reloads_running.discard(key)

        self.tasks.spawn(run(), name=key)

    # --- coroutines ----------------------------------------------------------------------------
    async def _reload(self, *, keep_view: bool = False) -> None:
        try:
            summaries = await self.memory.list_documents()
        except YakError as exc:
            self.page.editor.show_message(str(exc), error=True)
            return
        self.page.set_summaries(summaries, keep_view=keep_view)
        editing = self.page.editor.workspace
        if editing is not None and self.page.model.summary_for(editing.id) is None:
            await self._ensure_listed(editing, self.page.editor.document)
        await self._reload_statuses()

    async def _reload_list(self) -> None:
        await self._reload(keep_view=True)

    async def _reload_statuses(self) -> None:
        try:
            states = await self.refresh.snapshots()
            upkeep = await self.memory.upkeep()
        except YakError as exc:
            log.warning("reading the last refresh attempts failed: %s", exc)
            return
        self.page.set_statuses(states)
        self.page.set_upkeep(upkeep)

    async def _read(self, workspace_id: str) -> tuple[Workspace, MemoryDocument] | None:
        """The workspace and its stored document; ``None`` after showing why they cannot be
        read under the editor."""
        try:
            return (
                await self.workspaces.get(workspace_id),
                await self.memory.read(workspace_id),
            )
        except YakError as exc:
            self.page.editor.show_message(str(exc), error=True)
            return None

    async def _load(self, workspace_id: str) -> None:
        editor = self.page.editor
        read = await self._read(workspace_id)
        if read is None:
            return
        workspace, document = read
        proposal, note = self._pending.pop(workspace_id, (None, ""))
        if proposal is not None and not note:
            note = (
                "Showing the refused refresh reply as unsaved edits: trim it and Save to "
                "keep it as a hand edit."
            )
        editor.load(workspace, document, proposal=proposal, note=note)
        self.page.update_upkeep()
        await self._ensure_listed(workspace, document)
        await self._load_origins(workspace_id)

    async def _load_origins(self, workspace_id: str) -> None:
        """The origin of each stored line, for the editor's "why is this here?" row."""
        try:
            origins = await self.memory.blame(workspace_id)
            titles = {s.id: s.title for s in await self.chat.sessions(workspace_id)}
        except YakError as exc:
            log.warning("reading where the memory's lines came from failed: %s", exc)
            return
        self.page.editor.set_origins(workspace_id, origins, titles)

    async def _ensure_listed(self, workspace: Workspace, document: MemoryDocument | None) -> None:
        if document is None:
            return
        summary = self.page.model.summary_for(workspace.id)
        orphaned = summary.orphaned if summary else not os.path.isdir(workspace.path)
        waiting = summary.proposals if summary else 0
        self.page.upsert_summary(
            summary_from(workspace, document, orphaned=orphaned, proposals=waiting)
        )

    async def _save(self, workspace_id: str, text: str, base_version: int) -> None:
        editor = self.page.editor
        try:
            document = await self.memory.save(
                workspace_id, text, expected_version=base_version, initiator=self
            )
        except ConflictError as exc:
            try:
                current = await self.memory.read(workspace_id)
            except YakError as read_exc:
                editor.save_refused(f"{exc} {read_exc}")
                return
            editor.show_conflict(current)
            return
        except YakError as exc:
            editor.save_refused(str(exc))
            return
        editor.save_succeeded(document)
        await self._written(workspace_id, document)

    async def _document_updated(self, event: MemoryChanged) -> None:
        try:
            document = await self.memory.read(event.workspace_id)
        except YakError as exc:
            log.warning("re-reading memory after an update failed: %s", exc)
            return
        self.page.editor.document_changed(document, source=event.source)
        await self._written(event.workspace_id, document)

    async def _update_row(self, workspace_id: str, document: MemoryDocument) -> None:
        summary = self.page.model.summary_for(workspace_id)
        if summary is not None:
            self.page.upsert_summary(
                summary_from(
                    summary.workspace,
                    document,
                    orphaned=summary.orphaned,
                    proposals=summary.proposals,
                )
            )
        elif (
            self.page.editor.workspace is not None and self.page.editor.workspace.id == workspace_id
        ):
            await self._ensure_listed(self.page.editor.workspace, document)

    async def _refresh(self, workspace_id: str) -> None:
        editor = self.page.editor
        editor.set_refresh_busy(True)
        editor.show_message("Refreshing the memory…")
        try:
            outcome = await self.refresh.refresh_now(workspace_id)
        except YakError as exc:
            editor.show_message(str(exc), error=True)
            return
        finally:
            editor.set_refresh_busy(False)
        if editor.workspace is not None and editor.workspace.id == workspace_id:
            ok = RefreshStatus(outcome.status) in (RefreshStatus.APPLIED, RefreshStatus.UP_TO_DATE)
            # A missing key is advice (add one in Provider), not an alarm.
            editor.show_message(describe_outcome(outcome), error=not ok and not outcome.missing_key)

    async def _open_history(self, workspace_id: str) -> None:
        read = await self._read(workspace_id)
        if read is None:
            return
        workspace, document = read
        if self.history_dialog is not None:
            self.history_dialog.close()
        dialog = HistoryDialog(workspace, [], [], document.content, parent=self.page)
        dialog.setProperty("workspace_id", workspace_id)
        dialog.restore_requested.connect(self._on_history_restore_requested)
        dialog.open_reply_requested.connect(self._on_history_open_reply_requested)
        self.history_dialog = dialog
        await self._fill_history(dialog, workspace_id, document)
        dialog.show()

    async def _fill_history(
        self, dialog: HistoryDialog, workspace_id: str, document: MemoryDocument
    ) -> None:
        try:
            revisions = await self.memory.history(workspace_id)
            attempts = await self.memory.attempts(workspace_id)
        except YakError as exc:
            self.page.editor.show_message(str(exc), error=True)
            return
        selected = dialog.selected_revision()
        dialog.set_history(revisions, attempts, document.content)
        if selected is not None:
            dialog.select_revision(selected.version)

    async def _write(
        self,
        workspace_id: str,
        write: Awaitable[MemoryDocument],
        note: Callable[[MemoryDocument], str],
    ) -> MemoryDocument | None:
        """Await a write through the memory service (made with this controller as its
        initiator), then show its result where the user looks: the error in the editor, or the
        new document in the editor (when it shows that workspace) with ``note(document)``, the
        list row and the open history. Returns the document, or ``None`` on error."""
        editor = self.page.editor
        try:
            document = await write
            workspace = await self.workspaces.get(workspace_id)
        except YakError as exc:
            editor.show_message(str(exc), error=True)
            return None
        if editor.workspace is not None and editor.workspace.id == workspace_id:
            editor.load(workspace, document, note=note(document))
        await self._written(workspace_id, document)
        return document

    async def _written(self, workspace_id: str, document: MemoryDocument) -> None:
        """The workspace's document is now ``document``: its list row, and its history when
        that is open."""
        await self._update_row(workspace_id, document)
        await self._refill_history(workspace_id, document)
        editing = self.page.editor.workspace
        if editing is not None and editing.id == workspace_id:
            await self._load_origins(workspace_id)

    async def _refill_history(self, workspace_id: str, document: MemoryDocument) -> None:
        dialog = self.history_dialog
        if (
            dialog is not None
            and dialog.isVisible()
            and dialog.property("workspace_id") == workspace_id
        ):
            await self._fill_history(dialog, workspace_id, document)

    async def _restore(self, workspace_id: str, revision_id: str) -> None:
        editor = self.page.editor
        base = editor.document.version if editor.document is not None else None
        await self._write(
            workspace_id,
            self.memory.restore(workspace_id, revision_id, expected_version=base, initiator=self),
            lambda d: f"Restored as version {d.version}.",
        )

    async def _import(self, workspace_id: str, path: str, base_version: int) -> None:
        """Read the file, show what it would change (the diff against the stored version the
        editor shows) and replace the memory only when the person says so; a file with the
        same text or that cannot be imported is said under the editor."""
        editor = self.page.editor
        document = editor.document
        try:
            data, imported = await self.memory.read_import(path)
        except YakError as exc:
            editor.show_message(str(exc), error=True)
            return
        if document is None or document.workspace_id != workspace_id:
            return  # another workspace was chosen meanwhile
        if imported == document.content:
            editor.show_message(f"{path} has the same text as the memory; nothing changed.")
            return

        def answered(replace: bool) -> None:
            self.preview_dialog = None
            if replace:
                self.tasks.spawn(
                    self._write(
                        workspace_id,
                        self.memory.import_bytes(
                            workspace_id,
                            data,
                            source_name=os.path.basename(path),
                            expected_version=base_version,
                            initiator=self,
                        ),
                        lambda d: f"Imported {path} as version {d.version}.",
                    ),
                    name="memory-import-write",
                )
            else:
                editor.show_message(f"Not imported: the memory stays version {base_version}.")

        self.preview_dialog = preview_import(
            self.page,
            name=os.path.basename(path),
            current=document.content,
            imported=imported,
            version=base_version,
            on_answer=answered,
        )

    async def _export(self, workspace_id: str, path: str, fmt: str) -> None:
        editor = self.page.editor
        try:
            workspace = await self.workspaces.get(workspace_id)
            written = await self.memory.export_file(workspace, path, fmt, force=True)
        except YakError as exc:
            editor.show_message(str(exc), error=True)
            return
        editor.show_message(f"Exported {written:,} bytes ({fmt}) to {path}.")

    async def _delete(self, workspace_id: str, base_version: int) -> None:
        await self._write(
            workspace_id,
            self.memory.clear(workspace_id, expected_version=base_version, initiator=self),
            lambda _d: "The memory was deleted; History can restore it.",
        )

    async def _reattach(self, workspace_id: str, folder: str) -> None:
        try:
            workspace = await self.workspaces.reattach(workspace_id, folder)
            self.memory.watcher.forget(workspace_id)  # it lives on under its new id
        except YakError as exc:
            dialogs.inform(self.page, title="Re-attach failed", text=str(exc))
            return
        self.memory.watcher.forget(workspace_id)  # its memory lives under the new id now
        self.page.model.remove(workspace_id)
        editing = self.page.editor.workspace
        if editing is not None and editing.id == workspace_id:
            self.page.editor.clear_workspace()
        await self._reload()
        self.show_workspace(workspace.id, note=f"Re-attached to {workspace.path}.")

    async def _set_sync_file(self, workspace_id: str, keep: bool) -> None:
        """Keep the workspace's ``AGENTS.md`` in sync (written now, then after every applied
        revision), or stop; a file that cannot be written is said, nothing is kept and the
        box shows what is stored."""
        editor = self.page.editor
        try:
            workspace = await self.workspaces.get(workspace_id)
            if keep:
                path = os.path.join(workspace.path, DEFAULT_SYNCED_FILE)
                result = await self.memory.kept_file.keep_in_sync(workspace_id, path)
                message = f"{result.path} is kept in sync after every change " + (
                    "(written now)." if result.changed else "(already in sync)."
                )
            else:
                stopped = await self.memory.kept_file.stop_keeping_in_sync(workspace_id)
                message = f"{stopped} is no longer kept in sync; the file stays as it is."
            editor.set_workspace(await self.workspaces.get(workspace_id))
        except YakError as exc:
            editor.show_message(str(exc), error=True)
            try:
                editor.set_workspace(await self.workspaces.get(workspace_id))
            except YakError as again:
                log.warning("cannot read workspace %s again: %s", workspace_id, again)
            return
        editor.show_message(message)

    async def _workspace_updated(self, workspace_id: str) -> None:
        """Its settings changed (``yak memory disable``, ``mode``…): the editor's switches and
        the list's row show them as stored."""
        try:
            workspace = await self.workspaces.get(workspace_id)
        except YakError as exc:
            log.warning("cannot read workspace %s again: %s", workspace_id, exc)
            return
        self.page.editor.set_workspace(workspace)
        summary = self.page.model.summary_for(workspace_id)
        if summary is not None and summary.workspace != workspace:
            self.page.upsert_summary(replace(summary, workspace=workspace))

    async def _set_review_mode(self, workspace_id: str, review: bool) -> None:
        try:
            workspace = await self.memory.set_review_mode(
                workspace_id, "review" if review else "auto"
            )
        except YakError as exc:
            self.page.editor.show_message(str(exc), error=True)
            return
        self.page.editor.set_workspace(workspace)
        self.page.editor.show_message(
            "Every rewrite now waits for your review."
            if review
            else "Supported lines now apply at once; doubtful ones still wait for your review."
        )

    async def _set_memory_enabled(self, workspace_id: str, enabled: bool) -> None:
        try:
            workspace = await self.workspaces.set_memory_enabled(workspace_id, enabled=enabled)
        except YakError as exc:
            self.page.editor.show_message(str(exc), error=True)
            return
        self.page.editor.set_workspace(workspace)
        summary = self.page.model.summary_for(workspace_id)
        if summary is not None:
            self.page.upsert_summary(replace(summary, workspace=workspace))
        try:  # the panel's status line says whether memory is off
            await self.refresh.reload(workspace_id)
        except YakError as exc:
            log.warning("cannot reload the refresh state of %s: %s", workspace_id, exc)
        self.page.editor.show_message(
            "Memory is on for this workspace."
            if enabled
            else "Memory is off for this workspace: it is not injected into conversations nor "
            "refreshed."
        )
