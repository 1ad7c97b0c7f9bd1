"""The memory's lines that name something gone from the workspace, for the person to keep, edit
or remove ("Checked at use" in docs/memory.md).

:class:`GoneLinesDialog` lists the lines with what each names that is missing, and a Keep,
Edit… and Remove button per line; it never awaits. :class:`GoneLinesController` keeps the
memory panel's count up to date (the check when a workspace's document is shown or changes, on a
worker thread within the check's bound, and each ``ReferencesChecked`` a conversation's start
publishes) and runs the dialog's requests: Keep puts the line aside until the next check, Edit…
opens Settings on the workspace, Remove saves the document without the line as a hand edit (so
a rewrite is told it was removed on purpose: its tombstone). Nothing is removed without the
person's click.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QVBoxLayout, QWidget

from yak.core import Core
from yak.events import ReferencesChecked
from yak.presenters import gone_detail
from yak.references import GoneReference, ReferenceCheck
from yak.ui.bridge import EventBridge
from yak.ui.layout import STRETCH, create_button, create_label, hbox, vbox
from yak.ui.memory_panel import MemoryPanel
from yak.ui.tasks import FAILED, TaskGroup, logged

NONE_LEFT_TEXT = "Every line left names something the workspace has."


class GoneLinesDialog(QDialog):
    """The lines naming what is gone, one row each: the line, what is missing, Keep, Edit…,
    Remove."""

    keep_requested = Signal(str, int)  # workspace id, line index: put it aside
    edit_requested = Signal(str)  # workspace id: open the editor
    remove_requested = Signal(str, int, str)  # workspace id, line index, the line

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace_id = ""
        self.gone: tuple[GoneReference, ...] = ()
        self._setup_ui()

    def _setup_ui(self) -> None:
        self.setObjectName("goneLinesDialog")
        self.setWindowTitle("Lines naming what is gone")
        self.resize(640, 360)
        self.intro_label = create_label(
            self,
            "These memory lines name files or commands the workspace no longer has. The agent "
            "sees them marked. Keep a line that is still right, edit it, or remove it.",
            word_wrap=True,
        )
        self.rows = QWidget(self)
        self.rows_layout = QVBoxLayout(self.rows)
        self.rows_layout.setContentsMargins(0, 0, 0, 0)
        self.error_label = create_label(self, object_name="goneError", word_wrap=True)
        self.close_button = create_button("Close", self, clicked=self.close)
        vbox(
            self.intro_label,
            self.rows,
            STRETCH,
            self.error_label,
            hbox(STRETCH, self.close_button),
            margins=10,
            parent=self,
        )

    def show_lines(self, workspace_id: str, gone: tuple[GoneReference, ...]) -> None:
        """Show ``gone``, the lines of ``workspace_id``'s document naming what is gone."""
        self.workspace_id = workspace_id
        self.gone = gone
        self.error_label.clear()
        while self.rows_layout.count():
            item = self.rows_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.setParent(None)  # gone now (its button may be the one clicked)
                widget.deleteLater()
        if not gone:
            self.rows_layout.addWidget(create_label(self.rows, NONE_LEFT_TEXT, word_wrap=True))
        for entry in gone:
            self.rows_layout.addWidget(self._row(entry))

    def show_error(self, message: str) -> None:
        """Say why the last request failed (the lines stay as they are)."""
        self.error_label.setText(message)

    def row_texts(self) -> list[str]:
        """The lines listed, as shown."""
        return [entry.line for entry in self.gone]

    def _row(self, entry: GoneReference) -> QWidget:
        row = QWidget(self.rows)
        row.setObjectName(f"goneLine{entry.index}")
        line = create_label(row, entry.line, object_name="goneLineText", word_wrap=True)
        detail = create_label(row, gone_detail(entry), object_name="goneLineDetail")
        keep = create_button(
            "Keep",
            row,
            tooltip="The line is still right: leave it as it is",
            clicked=lambda: self.keep_requested.emit(self.workspace_id, entry.index),
        )
        keep.setObjectName("goneKeep")
        edit = create_button(
            "Edit…",
            row,
            tooltip="Open the memory in the editor",
            clicked=lambda: self.edit_requested.emit(self.workspace_id),
        )
        edit.setObjectName("goneEdit")
        remove = create_button(
            "Remove",
            row,
            tooltip="Remove this line (a hand edit: a refresh will not bring it back)",
            clicked=lambda: self.remove_requested.emit(self.workspace_id, entry.index, entry.line),
        )
        remove.setObjectName("goneRemove")
        vbox(hbox((line, 1), keep, edit, remove), detail, margins=(0, 4, 0, 4), parent=row)
        return row


class GoneLinesController(QObject):
    """Drives the panel's count of gone lines and the dialog that reviews them.

    Args:
        core: the application core.
        bridge: the core's events as signals.
        panel: the memory panel that shows the count.
        edit: opens Settings' editor on a workspace.
    """

    def __init__(
        self,
        core: Core,
        bridge: EventBridge,
        panel: MemoryPanel,
        *,
        edit: Callable[[str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.panel = panel
        self._edit = edit
        self.tasks = TaskGroup()
        self.dialog = GoneLinesDialog(panel.window())
        self._kept: dict[str, set[str]] = {}  # workspace id -> lines put aside until rechecked
        panel.gone_review_requested.connect(self._on_panel_gone_review_requested)
        bridge.references_checked.connect(self._on_bridge_references_checked)
        self.dialog.keep_requested.connect(self._on_dialog_keep_requested)
        self.dialog.edit_requested.connect(self._on_dialog_edit_requested)
        self.dialog.remove_requested.connect(self._on_dialog_remove_requested)

    def check(self, workspace_id: str) -> None:
        """Check the workspace's document against its folder again (the newest check wins)."""
        self.tasks.replace("gone-check", self._check(workspace_id))

    async def _check(self, workspace_id: str) -> None:
        checked = await self.tasks.attempt(
            self.core.memory.check_references(workspace_id),
            on_error=logged("checking the memory's references"),
        )
        if checked is not FAILED:
            self._show(workspace_id, checked[1])

    def _show(self, workspace_id: str, found: ReferenceCheck) -> None:
        kept = self._kept.get(workspace_id, set())
        shown = ReferenceCheck(tuple(g for g in found.gone if g.line not in kept), found.gave_up)
        self.panel.show_references(workspace_id, shown)
        if self.dialog.isVisible() and self.dialog.workspace_id == workspace_id:
            self.dialog.show_lines(workspace_id, shown.gone)

    def _on_bridge_references_checked(self, event: ReferencesChecked) -> None:
        self._kept.pop(event.workspace_id, None)  # a new conversation checked afresh
        self._show(event.workspace_id, event.check)

    def _on_panel_gone_review_requested(self, workspace_id: str) -> None:
        self.dialog.show_lines(workspace_id, self.panel.references.gone)
        self.dialog.show()
        self.dialog.raise_()

    def _on_dialog_keep_requested(self, workspace_id: str, index: int) -> None:
        kept = {g.line for g in self.dialog.gone if g.index == index}
        self._kept.setdefault(workspace_id, set()).update(kept)
        check = self.panel.references
        left = ReferenceCheck(tuple(g for g in check.gone if g.index != index), check.gave_up)
        self.panel.show_references(workspace_id, left)
        self.dialog.show_lines(workspace_id, left.gone)

    def _on_dialog_edit_requested(self, workspace_id: str) -> None:
        self.dialog.hide()
        self._edit(workspace_id)

    def _on_dialog_remove_requested(self, workspace_id: str, index: int, line: str) -> None:
        self.tasks.spawn(self._remove(workspace_id, index, line), name="remove-gone-line")

    async def _remove(self, workspace_id: str, index: int, line: str) -> None:
        """Save the document without line ``index`` (a hand edit on the version checked); a
        document changed since then is refused, and the dialog says so."""
        sink = self.dialog.show_error
        document = await self.tasks.attempt(self.core.memory.read(workspace_id), on_error=sink)
        if document is FAILED:
            return
        lines = document.content.split("\n")
        if index >= len(lines) or lines[index] != line:
            self.dialog.show_error("The memory changed since it was checked; look again.")
            self.check(workspace_id)
            return
        text = "\n".join(lines[:index] + lines[index + 1 :])
        saved = await self.tasks.attempt(
            self.core.memory.save(workspace_id, text, expected_version=document.version),
            on_error=sink,
        )
        if saved is not FAILED:
            self.check(workspace_id)
