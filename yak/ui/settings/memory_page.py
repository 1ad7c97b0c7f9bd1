"""Settings › Memory: every workspace with a memory, and the inline editor for one of them.

The page puts the list (:class:`yak.ui.settings.memory_list.MemoryListModel` in a table, with a
filter, Re-attach… for orphaned folders, and under it the edited workspace's upkeep: its refreshes,
model calls, tokens and outcomes over the last 7 and 30 days, "Cost" in docs/memory.md) beside the
editor
(:class:`yak.ui.settings.memory_editor.MemoryEditor`). Switching workspace, closing, importing,
exporting or deleting with unsaved edits asks Save / Discard / Cancel first.

Widgets here never await: they emit intent signals, and
:class:`yak.ui.settings.memory_controller.MemoryPageController` runs the work and calls back.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime

from PySide6.QtCore import QModelIndex, QSettings, QStandardPaths, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHeaderView,
    QLineEdit,
    QMessageBox,
    QSplitter,
    QTableView,
    QWidget,
)

from yak.domain import UPKEEP_WINDOWS_DAYS, MemorySummary, RefreshState, UpkeepStats, Workspace
from yak.memory.document import (
    EXPORT_SUFFIXES,
    MARKDOWN_SUFFIXES,
    default_export_name,
    export_format_for,
)
from yak.presenters import upkeep_line
from yak.ui import dialogs
from yak.ui.layout import blocked_signals, create_button, create_label, hbox, vbox
from yak.ui.settings.memory_editor import MemoryEditor
from yak.ui.settings.memory_list import MemoryListModel
from yak.ui.settings.page import SettingsPage

# "Last updated" is re-rendered this often while the page is shown (milliseconds).
TIMES_INTERVAL_MS = 30_000
# Where Import… and Export… remember the folder they last used (MemoryPage.folder_store).
IMPORT_FOLDER_KEY = "memory/import_folder"
EXPORT_FOLDER_KEY = "memory/export_folder"
LIST_MIN_WIDTH_PX = 250  # with the editor, Settings fits in 900 px
COLUMN_PADDING_PX = 20  # a cell's margins and the header's sort arrow
# The Export… dialog's file types: (filter, default suffix without its dot, export format).
_EXPORT_NAMES = {"text": "Plain text", "markdown": "Markdown", "json": "JSON with history"}
_EXPORT_FILTERS = tuple(
    (f"{_EXPORT_NAMES[fmt]} (*{suffix})", suffix[1:], fmt)
    for fmt, suffix in EXPORT_SUFFIXES.items()
)


class MemoryPage(SettingsPage):
    """The Settings memory page: the workspace list beside the inline editor.

    As a :class:`SettingsPage`, its edits are the editor's: ``apply()`` saves them,
    ``load()`` shows the stored document again, and ``changed`` is emitted when the editor
    gains or loses unsaved edits.
    """

    title = "Memory"

    workspace_selected = Signal(str)  # workspace id: load it into the editor
    import_requested = Signal(str, str, int)  # workspace id, file path, base version
    export_requested = Signal(str, str, str)  # workspace id, file path, format
    delete_requested = Signal(str, int)  # workspace id, base version
    reattach_requested = Signal(str, str)  # workspace id, new folder
    search_requested = Signal(str)  # the filter text: find the documents that contain it

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__(parent)
        self.model = MemoryListModel(self, now=now)
        self._after_save: Callable[[], object] | None = None
        self.question_box: QMessageBox | None = None
        self.file_dialog: QFileDialog | None = None  # the open Import/Export/Re-attach dialog
        # The folders Import… and Export… last used (Qt's per-user settings, beside the
        # window's geometry).
        self.folder_store = QSettings(
            QSettings.Format.IniFormat, QSettings.Scope.UserScope, "Yak", "dialogs"
        )
        self._plain_scan = False  # the last text search read every document (no index)
        self._upkeep: dict[str, UpkeepStats] = {}
        self._setup_ui()
        self.times_timer = QTimer(self)
        self.times_timer.setInterval(TIMES_INTERVAL_MS)
        self.times_timer.timeout.connect(self._on_times_timer_timeout)

    def _setup_ui(self) -> None:
        self.setObjectName("memoryPage")
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        left = self._setup_list(splitter)
        self.editor = MemoryEditor(splitter)
        self.editor.import_button.clicked.connect(self._on_import_button_clicked)
        self.editor.export_button.clicked.connect(self._on_export_button_clicked)
        self.editor.delete_button.clicked.connect(self._on_delete_button_clicked)
        self.editor.save_finished.connect(self._on_editor_save_finished)
        self.editor.dirty_changed.connect(self._on_editor_dirty_changed)
        splitter.addWidget(left)
        splitter.addWidget(self.editor)
        # The list gets the larger share: whole names and statuses; the editor needs less
        # than its buttons' row takes once its lines are short.
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([600, 400])
        vbox(splitter, margins=0, parent=self)

    def _setup_list(self, parent: QWidget) -> QWidget:
        """The left side: the filter, the table of workspaces, their count and Re-attach…."""
        left = QWidget(parent)
        left.setMinimumWidth(LIST_MIN_WIDTH_PX)
        self.filter_edit = QLineEdit(left)
        self.filter_edit.setPlaceholderText("Filter by folder or text in the memory")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter_edit_text_changed)
        self.table = self._setup_table(left)
        self.count_label = create_label(left, object_name="memoryCount")
        self.reattach_button = create_button(
            "Re-attach…",
            left,
            tooltip="Move this orphaned memory to another folder",
            clicked=self._on_reattach_button_clicked,
        )
        self.reattach_button.setEnabled(False)
        self.upkeep_label = create_label(left, object_name="memoryUpkeep", word_wrap=True)
        self.upkeep_label.setToolTip(
            "What the selected workspace's memory refreshes cost: attempts, model calls, tokens "
            "sent (and the share read from the prompt cache) and received, and their outcomes"
        )
        vbox(
            self.filter_edit,
            (self.table, 1),
            hbox((self.count_label, 1), self.reattach_button),
            self.upkeep_label,
            margins=0,
            parent=left,
        )
        return left

    def _setup_table(self, parent: QWidget) -> QTableView:
        """The table showing :attr:`model`: whole rows selected, header clicks sort, each
        workspace by its folder's name, then its parent folder (elided on the right)."""
        table = QTableView(parent)
        table.setObjectName("memoryList")
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSortingEnabled(False)  # the store's order; header clicks sort the list
        table.horizontalHeader().setSectionsClickable(True)
        table.horizontalHeader().sectionClicked.connect(self._on_header_section_clicked)
        table.setWordWrap(False)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)  # the folder's name comes first
        table.setShowGrid(False)
        table.setAlternatingRowColors(True)
        vertical = table.verticalHeader()
        vertical.setVisible(False)
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vertical.setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # Narrow (a longer status is elided, its tooltip says it all); the workspace takes the
        # rest, its name first.
        metrics = table.fontMetrics()
        for column, sample in ((1, "9,999"), (2, "2 hours ago"), (3, "not folded in yet")):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            title = MemoryListModel.COLUMNS[column]
            wide = max(
                metrics.horizontalAdvance(sample), header.fontMetrics().horizontalAdvance(title)
            )
            table.setColumnWidth(column, wide + COLUMN_PADDING_PX)
        table.selectionModel().currentRowChanged.connect(self._on_table_current_row_changed)
        return table

    # --- driven by the controller ------------------------------------------------------------
    def set_summaries(self, summaries: list[MemorySummary], *, keep_view: bool = False) -> None:
        """Show these workspaces; the selection stays on the edited workspace when listed.

        Args:
            keep_view: keep the list scrolled where it is (a refresh while the user reads it)
                rather than bringing the edited workspace into view.
        """
        scrollbar = self.table.verticalScrollBar()
        position = scrollbar.value()
        if not self.model.set_summaries(summaries):
            return
        self._update_count()
        editing = self.editor.workspace
        if editing is not None:
            self._select_row_quietly(editing.id, scroll=not keep_view)
        if keep_view:
            scrollbar.setValue(position)
        self._update_reattach_button()

    def set_statuses(self, states: dict[str, RefreshState]) -> None:
        """Fill the Status column (see :meth:`MemoryListModel.set_statuses`)."""
        self.model.set_statuses(states)

    def set_upkeep(self, upkeep: dict[str, UpkeepStats]) -> None:
        """Keep every workspace's upkeep (``MemoryReader.upkeep``) and show the edited one's."""
        self._upkeep = upkeep
        self.update_upkeep()

    def update_upkeep(self) -> None:
        """Show the upkeep of the workspace in the editor (nothing without one)."""
        workspace = self.editor.workspace
        if workspace is None:
            self.upkeep_label.clear()
            return
        stats = self._upkeep.get(workspace.id, UpkeepStats(workspace.id))
        rows = [
            f"Last {days} days: {upkeep_line(stats.window(days))}" for days in UPKEEP_WINDOWS_DAYS
        ]
        self.upkeep_label.setText(f"Refreshes of {workspace.name}\n" + "\n".join(rows))

    def upsert_summary(self, summary: MemorySummary) -> None:
        """Add or update one workspace's row (keeps the selection)."""
        self.model.upsert(summary)
        self._update_count()
        editing = self.editor.workspace
        if editing is not None:
            self._select_row_quietly(editing.id)
        self._update_reattach_button()

    def select_workspace(self, workspace_id: str) -> None:
        """Select the workspace's row (clearing the filter if it hides it) and ask to load it,
        through the unsaved-edits guard."""
        if self.model.row_of(workspace_id) is None and self.filter_edit.text():
            self.filter_edit.clear()
        self._request_workspace(workspace_id)

    def selected_workspace_id(self) -> str | None:
        """The id of the selected row's workspace, or ``None``."""
        index = self.table.currentIndex()
        summary = self.model.summary_at(index.row()) if index.isValid() else None
        return summary.workspace.id if summary else None

    def load(self) -> None:
        """Show the stored document again, dropping the editor's unsaved edits (the list is
        kept current by the controller)."""
        if self.editor.workspace is not None and self.editor.document is not None:
            self.editor.load(self.editor.workspace, self.editor.document)

    def apply(self) -> None:
        """Save the editor's edits, as Save (Ctrl+S) does."""
        self.editor.request_save()

    def has_unsaved_changes(self) -> bool:
        """Whether the editor holds unsaved edits (the Settings dialog's close guard)."""
        return self.editor.is_dirty()

    def resolve_unsaved(self, then: Callable[[], object]) -> None:
        """Ask Save / Discard / Cancel about the unsaved edits; ``then()`` runs after a
        successful save or a discard, never after Cancel or a refused save."""
        self._guard(then)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._on_times_timer_timeout()
        self.times_timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self.times_timer.stop()

    def _on_times_timer_timeout(self) -> None:
        self.model.update_times()
        self.editor.update_times()

    # --- the unsaved-edits guard -------------------------------------------------------------
    def _guard(self, then: Callable[[], object]) -> None:
        if not self.editor.is_dirty():
            then()
            return
        workspace = self.editor.workspace
        name = workspace.name if workspace else "this workspace"

        def answered(label: str | None) -> None:
            self.question_box = None
            if label == "Save":
                self._after_save = then
                self.apply()
            elif label == "Discard":
                self.load()
                then()

        self.question_box = dialogs.ask(
            self,
            title="Unsaved memory edits",
            text=f"The memory of {name} has unsaved edits.",
            informative="Save them, discard them, or cancel and keep editing?",
            choices=[
                ("Save", QMessageBox.ButtonRole.AcceptRole),
                ("Discard", QMessageBox.ButtonRole.DestructiveRole),
                ("Cancel", QMessageBox.ButtonRole.RejectRole),
            ],
            default="Save",
            icon=QMessageBox.Icon.Warning,
            on_answer=answered,
        )

    def _on_editor_dirty_changed(self, _dirty: bool) -> None:
        self.changed.emit()

    def _on_editor_save_finished(self, ok: bool) -> None:
        then, self._after_save = self._after_save, None
        if ok and then is not None:
            then()

    def _request_workspace(self, workspace_id: str) -> None:
        editing = self.editor.workspace
        if editing is not None and editing.id == workspace_id:
            self._select_row_quietly(workspace_id)
            return

        def switch() -> None:
            self._select_row_quietly(workspace_id)
            self._update_reattach_button()
            self.workspace_selected.emit(workspace_id)

        if editing is not None:
            self._select_row_quietly(editing.id)  # stay on it until the guard says otherwise
        self._guard(switch)

    def _select_row_quietly(self, workspace_id: str, *, scroll: bool = True) -> None:
        row = self.model.row_of(workspace_id)
        selection = self.table.selectionModel()
        with blocked_signals(selection):
            if row is None:
                selection.clearSelection()
                self.table.setCurrentIndex(QModelIndex())
            else:
                index = self.model.index(row, 0)
                self.table.setCurrentIndex(index)
                self.table.selectRow(row)
                if scroll:
                    self.table.scrollTo(index)
        self.table.viewport().update()

    def _on_table_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        summary = self.model.summary_at(current.row()) if current.isValid() else None
        if summary is not None:
            self._request_workspace(summary.workspace.id)
        self._update_reattach_button()

    def _on_filter_edit_text_changed(self, text: str) -> None:
        self.model.set_filter(text)
        self._after_filter()
        self.search_requested.emit(text)

    def show_content_matches(
        self, text: str, workspace_ids: frozenset[str], *, plain_scan: bool = False
    ) -> None:
        """Add the workspaces whose document contains ``text`` to the filtered list (ignored
        when the filter has changed since); ``plain_scan``: they were found without the
        full-text index, which the count line says."""
        if self.model.set_content_matches(text, workspace_ids):
            self._plain_scan = plain_scan
            self._after_filter()

    def _after_filter(self) -> None:
        editing = self.editor.workspace
        if editing is not None:
            self._select_row_quietly(editing.id)
        self._update_count()

    def _on_header_section_clicked(self, column: int) -> None:
        header = self.table.horizontalHeader()
        order = (
            Qt.SortOrder.DescendingOrder
            if header.sortIndicatorSection() == column
            and header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
            else Qt.SortOrder.AscendingOrder
        )
        header.setSortIndicatorShown(True)
        header.setSortIndicator(column, order)
        self.model.sort(column, order)
        editing = self.editor.workspace
        if editing is not None:
            self._select_row_quietly(editing.id)

    def _update_count(self) -> None:
        shown, total = self.model.rowCount(), self.model.total
        noun = "workspace" if total == 1 else "workspaces"
        how = " (plain scan)" if self._plain_scan and self.filter_edit.text().strip() else ""
        counted = f"{total:,} {noun}" if shown == total else f"{shown:,} of {total:,} {noun}"
        self.count_label.setText(counted + how)

    def _selected_summary(self) -> MemorySummary | None:
        workspace_id = self.selected_workspace_id()
        return self.model.summary_for(workspace_id) if workspace_id else None

    def _update_reattach_button(self) -> None:
        summary = self._selected_summary()
        self.reattach_button.setEnabled(summary is not None and summary.orphaned)

    # --- file and confirmation dialogs -------------------------------------------------------
    def _on_import_button_clicked(self) -> None:
        workspace = self.editor.workspace
        if workspace is None:
            return

        def choose() -> None:
            self.file_dialog = dialogs.choose_open_file(
                self,
                title=f"Import memory into {workspace.name}",
                start=self._last_folder(IMPORT_FOLDER_KEY, _start_dir(workspace)),
                name_filters=["Text and Yak exports (*.txt *.md *.json)", "All files (*)"],
                on_chosen=lambda path: self._emit_import(workspace.id, path),
            )

        self._guard(choose)

    def _emit_import(self, workspace_id: str, path: str) -> None:
        self._remember_folder(IMPORT_FOLDER_KEY, path)
        document = self.editor.document
        if document is not None and document.workspace_id == workspace_id:
            self.import_requested.emit(workspace_id, path, document.version)

    def _on_export_button_clicked(self) -> None:
        workspace = self.editor.workspace
        if workspace is None:
            return
        formats = {f: fmt for f, _s, fmt in _EXPORT_FILTERS}

        def chosen(path: str, name_filter: str) -> None:
            self._remember_folder(EXPORT_FOLDER_KEY, path)
            self.export_requested.emit(
                workspace.id, path, export_format(path, formats.get(name_filter, "text"))
            )

        def choose() -> None:
            folder = self._last_folder(EXPORT_FOLDER_KEY, _documents_folder())
            self.file_dialog = dialogs.choose_save_file(
                self,
                title=f"Export the memory of {workspace.name}",
                start=os.path.join(folder, default_export_name(workspace, "text")),
                name_filters=[(f, s) for f, s, _fmt in _EXPORT_FILTERS],
                on_chosen=chosen,
            )

        self._guard(choose)

    def _last_folder(self, key: str, fallback: str) -> str:
        """The folder the dialog ``key`` last used, when it still exists; else ``fallback``."""
        folder = self.folder_store.value(key)
        return folder if isinstance(folder, str) and os.path.isdir(folder) else fallback

    def _remember_folder(self, key: str, path: str) -> None:
        self.folder_store.setValue(key, os.path.dirname(os.path.abspath(path)))
        self.folder_store.sync()

    def _on_delete_button_clicked(self) -> None:
        workspace = self.editor.workspace
        document = self.editor.document
        if workspace is None or document is None:
            return

        def answered(confirmed: bool) -> None:
            self.question_box = None
            if confirmed:
                self.delete_requested.emit(workspace.id, document.version)

        unsaved = " Your unsaved edits are discarded too." if self.editor.is_dirty() else ""
        self.question_box = dialogs.confirm(
            self,
            title="Delete memory",
            text=f"Delete the memory of {workspace.path}?",
            informative="The document is emptied. It stays in History, where you can restore "
            f"it.{unsaved}",
            action="Delete",
            on_answer=answered,
        )

    def _on_reattach_button_clicked(self) -> None:
        summary = self._selected_summary()
        if summary is None or not summary.orphaned:
            return
        workspace_id = summary.workspace.id
        self.file_dialog = dialogs.choose_directory(
            self,
            title=f"Re-attach the memory of {summary.workspace.path} to…",
            start=_existing_parent(summary.workspace.path),
            on_chosen=lambda folder: self.reattach_requested.emit(workspace_id, folder),
        )


def export_format(path: str, chosen: str) -> str:
    """The export format of ``path``: its extension's when it is one of the export formats'
    (``.txt``, ``.md``, ``.markdown``, ``.json``, as ``yak memory export -o`` reads it, so
    ``mem.json`` is JSON whichever file type was selected), else ``chosen`` (the dialog's
    file type)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in (*EXPORT_SUFFIXES.values(), *MARKDOWN_SUFFIXES):
        return export_format_for(path)
    return chosen


def _documents_folder() -> str:
    """Where Export… proposes to write the first time: the user's documents folder (outside
    the project, so an export is not committed with it), else the home folder."""
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return folder if folder and os.path.isdir(folder) else os.path.expanduser("~")


def _start_dir(workspace: Workspace) -> str:
    return workspace.path if os.path.isdir(workspace.path) else os.path.expanduser("~")


def _existing_parent(path: str) -> str:
    current = path
    while current and not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current if os.path.isdir(current) else os.path.expanduser("~")


__all__ = ["MemoryPage"]
