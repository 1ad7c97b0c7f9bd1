"""StaleDialog: the memory's stale lines, to keep, edit or remove ("Age and staleness" in
docs/memory.md).

Each line is a checkable row (``line 3 · confirmed 2026-08-09 · text``). Keep confirms the
checked lines (their age counts from now; the document is not written), Remove removes them as
a hand edit (each gets its tombstone), Edit… opens the editor. The dialog never awaits: it emits
what the person chose, and :class:`StaleReview` (built by the controller) does it, then closes
it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QListWidget, QListWidgetItem, QWidget

from yak.memory.freshness.stale import StaleLine
from yak.presenters import stale_reason_words
from yak.ui.layout import STRETCH, create_button, create_label, hbox, vbox
from yak.ui.tasks import FAILED

if TYPE_CHECKING:
    from yak.core import Core
    from yak.ui.main_window import MainWindow
    from yak.ui.tasks import TaskGroup


class StaleDialog(QDialog):
    """The stale lines of one workspace's memory.

    Args:
        workspace_id: whose lines they are (carried by the signals' receiver).
        stale: the stale lines, in document order.
        after_days: the threshold, for the heading.
    """

    keep_requested = Signal(list)  # 1-based line numbers: confirm they still hold
    remove_requested = Signal(list)  # 1-based line numbers: remove them by hand
    edit_requested = Signal()  # open the editor on the document

    def __init__(
        self,
        parent: QWidget | None,
        *,
        workspace_id: str,
        stale: Sequence[StaleLine],
        after_days: int,
    ) -> None:
        super().__init__(parent)
        self.workspace_id = workspace_id
        self.setObjectName("staleDialog")
        self.setWindowTitle("Stale memory lines")
        self._setup_ui(stale, after_days)

    def _setup_ui(self, stale: Sequence[StaleLine], after_days: int) -> None:
        heading = create_label(
            self,
            f"No conversation said these lines, and no one confirmed them, for {after_days} "
            "days. Keep the ones that still hold, remove the others, or edit them.",
            word_wrap=True,
        )
        self.lines_list = QListWidget(self)
        self.lines_list.setObjectName("staleLines")
        for line in stale:
            confirmed = line.last_confirmed.astimezone().date().isoformat()
            reasons = ", ".join(stale_reason_words(r) for r in line.reasons)
            item = QListWidgetItem(
                f"line {line.line} · confirmed {confirmed} · {reasons} · {line.text}"
            )
            item.setData(Qt.ItemDataRole.UserRole, line.line)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.lines_list.addItem(item)
        self.keep_button = create_button(
            "Keep",
            self,
            tooltip="The checked lines still hold: they leave this list",
            clicked=lambda: self._emit(self.keep_requested),
        )
        self.remove_button = create_button(
            "Remove",
            self,
            tooltip="Remove the checked lines (a refresh will not bring them back)",
            clicked=lambda: self._emit(self.remove_requested),
        )
        self.edit_button = create_button("Edit…", self, clicked=self.edit_requested)
        self.close_button = create_button("Close", self, clicked=self.reject)
        vbox(
            heading,
            (self.lines_list, 1),
            hbox(
                self.keep_button, self.remove_button, self.edit_button, STRETCH, self.close_button
            ),
            parent=self,
        )
        self.resize(640, 320)

    def checked_lines(self) -> list[int]:
        """The 1-based numbers of the checked lines, in order."""
        rows = (self.lines_list.item(i) for i in range(self.lines_list.count()))
        return [
            int(item.data(Qt.ItemDataRole.UserRole))
            for item in rows
            if item.checkState() == Qt.CheckState.Checked
        ]

    def _emit(self, signal: object) -> None:
        chosen = self.checked_lines()
        if chosen:
            signal.emit(chosen)  # type: ignore[attr-defined]


class StaleReview:
    """Opens a :class:`StaleDialog` on the panel's stale lines and does what the person chose
    through the memory service (keep: ``keep_lines``; remove: ``remove_lines``), then has the
    panel read again; a failure is shown, the dialog stays open.

    Args:
        window: the main window (its memory panel holds the stale lines; errors shown there).
        core: the application core.
        tasks: the controller's tasks.
        reload: reads the panel's document, origins and stale lines again.
        open_editor: opens the editor on a workspace (Edit…).
    """

    def __init__(
        self,
        window: MainWindow,
        core: Core,
        tasks: TaskGroup,
        *,
        reload: Callable[[str], Awaitable[None]],
        open_editor: Callable[[str], None],
    ) -> None:
        self._window = window
        self._core = core
        self._tasks = tasks
        self._reload = reload
        self._open_editor = open_editor
        self.dialog: StaleDialog | None = None  # the last one opened

    def open(self, workspace_id: str) -> None:
        """Show the panel's stale lines of ``workspace_id`` in a new dialog (window-modal)."""
        dialog = StaleDialog(
            self._window,
            workspace_id=workspace_id,
            stale=self._window.memory_panel.stale,
            after_days=self._core.settings.current().stale_after_days,
        )
        self.dialog = dialog
        memory = self._core.memory

        def keep(lines: list[int]) -> None:
            work = memory.keep_lines(workspace_id, lines)
            self._tasks.spawn(self._decided(dialog, workspace_id, work), name="stale-keep")

        def remove(lines: list[int]) -> None:
            work = memory.remove_lines(workspace_id, lines, initiator=self)
            self._tasks.spawn(self._decided(dialog, workspace_id, work), name="stale-remove")

        def edit() -> None:
            dialog.accept()
            self._open_editor(workspace_id)

        dialog.keep_requested.connect(keep)
        dialog.remove_requested.connect(remove)
        dialog.edit_requested.connect(edit)
        dialog.open()

    async def _decided(
        self, dialog: StaleDialog, workspace_id: str, work: Awaitable[object]
    ) -> None:
        done = await self._tasks.attempt(
            work, on_error=lambda sentence: self._window.show_error(sentence, title="Stale lines")
        )
        if done is FAILED:
            return
        dialog.accept()
        await self._reload(workspace_id)
