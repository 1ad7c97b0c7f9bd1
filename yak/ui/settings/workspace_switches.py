"""WorkspaceSwitches: the Settings memory editor's per-workspace switches (memory on or off,
review mode, ``AGENTS.md`` kept in sync), stored through the core, and the same settings
changed elsewhere (``yak memory disable``, ``mode``: ``WorkspaceChanged``) shown as stored.

Part of :class:`~yak.ui.settings.memory_controller.MemoryPageController`: it runs in that
controller's task group and says what happened under the editor.
"""

from __future__ import annotations

import os
from dataclasses import replace

from PySide6.QtCore import QObject

from yak.core import Core
from yak.domain import ReviewMode, Workspace
from yak.events import WorkspaceChanged
from yak.memory.sharing.sync import DEFAULT_SYNCED_FILE
from yak.ui.bridge import EventBridge
from yak.ui.settings.memory_page import MemoryPage
from yak.ui.tasks import FAILED, TaskGroup, logged


class WorkspaceSwitches(QObject):
    """Connects the editor's switches of ``page`` to the core.

    Args:
        page: the Settings memory page (its editor and list).
        core: the application core (workspaces, memory, refresh).
        bridge: the event bridge (``WorkspaceChanged``).
        tasks: the page controller's task group.
    """

    def __init__(
        self,
        page: MemoryPage,
        core: Core,
        bridge: EventBridge,
        tasks: TaskGroup,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.page = page
        self.core = core
        self.tasks = tasks
        editor = page.editor
        editor.memory_enabled_changed.connect(self._on_editor_memory_enabled_changed)
        editor.review_mode_changed.connect(self._on_editor_review_mode_changed)
        editor.sync_file_changed.connect(self._on_editor_sync_file_changed)
        bridge.workspace_changed.connect(self._on_bridge_workspace_changed)

    def _show_error(self, text: str) -> None:
        self.page.editor.show_message(text, error=True)

    # --- slots ---------------------------------------------------------------------------------
    def _on_editor_memory_enabled_changed(self, workspace_id: str, enabled: bool) -> None:
        self.tasks.run(
            self.core.workspaces.set_memory_enabled(workspace_id, enabled=enabled),
            name="memory-enabled",
            on_error=self._show_error,
            on_success=self._memory_enabled_set,
        )

    def _on_editor_review_mode_changed(self, workspace_id: str, review: bool) -> None:
        self.tasks.run(
            self.core.memory.set_review_mode(workspace_id, "review" if review else "auto"),
            name="memory-review-mode",
            on_error=self._show_error,
            on_success=self._review_mode_set,
        )

    def _on_editor_sync_file_changed(self, workspace_id: str, keep: bool) -> None:
        self.tasks.spawn(self._set_sync_file(workspace_id, keep), name="memory-sync-file")

    def _on_bridge_workspace_changed(self, event: WorkspaceChanged) -> None:
        editing = self.page.editor.workspace
        if (editing is not None and editing.id == event.workspace_id) or (
            self.page.model.summary_for(event.workspace_id) is not None
        ):
            self.tasks.spawn(
                self._workspace_updated(event.workspace_id), name="memory-page-workspace"
            )

    # --- coroutines ----------------------------------------------------------------------------
    async def _set_sync_file(self, workspace_id: str, keep: bool) -> None:
        """Keep the workspace's ``AGENTS.md`` in sync (written now, then after every applied
        revision), or stop; a file that cannot be written is said, nothing is kept and the
        box shows what is stored."""
        message = await self.tasks.attempt(
            self._keep_in_sync(workspace_id, keep), on_error=self._show_error
        )
        if message is not FAILED:
            self.page.editor.show_message(message)
            return
        await self.tasks.attempt(
            self.core.workspaces.get(workspace_id),
            on_error=logged(f"reading workspace {workspace_id} again"),
            on_success=self.page.editor.set_workspace,
        )

    async def _keep_in_sync(self, workspace_id: str, keep: bool) -> str:
        """Start or stop keeping the file in sync; the editor's box shows what is stored.
        Returns the sentence saying what happened."""
        workspaces, kept_file = self.core.workspaces, self.core.memory.kept_file
        workspace = await workspaces.get(workspace_id)
        if keep:
            path = os.path.join(workspace.path, DEFAULT_SYNCED_FILE)
            result = await kept_file.keep_in_sync(workspace_id, path)
            message = f"{result.path} is kept in sync after every change " + (
                "(written now)." if result.changed else "(already in sync)."
            )
        else:
            stopped = await kept_file.stop_keeping_in_sync(workspace_id)
            message = f"{stopped} is no longer kept in sync; the file stays as it is."
        self.page.editor.set_workspace(await workspaces.get(workspace_id))
        return message

    async def _workspace_updated(self, workspace_id: str) -> None:
        """Its settings changed (``yak memory disable``, ``mode``…): the editor's switches and
        the list's row show them as stored."""
        workspace = await self.tasks.attempt(
            self.core.workspaces.get(workspace_id),
            on_error=logged(f"reading workspace {workspace_id} again"),
        )
        if workspace is FAILED:
            return
        self.page.editor.set_workspace(workspace)
        summary = self.page.model.summary_for(workspace_id)
        if summary is not None and summary.workspace != workspace:
            self.page.upsert_summary(replace(summary, workspace=workspace))

    def _review_mode_set(self, workspace: Workspace) -> None:
        self.page.editor.set_workspace(workspace)
        self.page.editor.show_message(
            "Every rewrite now waits for your review."
            if workspace.review_mode is ReviewMode.REVIEW
            else "Supported lines now apply at once; doubtful ones still wait for your review."
        )

    async def _memory_enabled_set(self, workspace: Workspace) -> None:
        self.page.editor.set_workspace(workspace)
        summary = self.page.model.summary_for(workspace.id)
        if summary is not None:
            self.page.upsert_summary(replace(summary, workspace=workspace))
        await self.tasks.attempt(  # the panel's status line says whether memory is off
            self.core.refresh.reload(workspace.id),
            on_error=logged(f"reloading the refresh state of {workspace.id}"),
        )
        self.page.editor.show_message(
            "Memory is on for this workspace."
            if workspace.memory_enabled
            else "Memory is off for this workspace: it is not injected into conversations nor "
            "refreshed."
        )
