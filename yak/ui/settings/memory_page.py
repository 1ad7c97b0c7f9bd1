"""Settings → Memory: every workspace with a memory, and the inline editor for one of them.

The list is a :class:`MemoryListModel` (a table model, so 10,000 workspaces open fast), with an
*orphaned* marker for folders that are gone and Re-attach… for those. The editor
(:class:`MemoryEditor`) is a monospace text field with a live ``N / 200 lines`` counter that turns
red over the ceiling, Save (Ctrl+S) that refuses over the ceiling and says why, Revert, and a
banner with a diff when the document changes underneath unsaved edits or a save turns out stale
(Keep mine / Take theirs) — never a silent overwrite either way. Switching workspace, closing,
importing, exporting or deleting with unsaved edits asks Save / Discard / Cancel first.

Widgets here never await: they emit intent signals, and
:class:`yak.ui.settings.memory_controller.MemoryPageController` runs the work and calls back.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QBrush,
    QColor,
    QFontDatabase,
    QHideEvent,
    QKeySequence,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from yak.domain import MemoryDocument, MemorySummary, Workspace, count_lines
from yak.ui import dialogs
from yak.ui.diff_view import DiffView
from yak.ui.formatting import counter_text, diff_rows, local_time, relative_time
from yak.workspace.state import (
    EXPORT_FORMATS,
    LastRefresh,
    ceiling_message,
    default_export_name,
    list_status,
    shrink_question,
)

ORPHANED = "orphaned"
_RED = "#b00020"
# The Status column's colours by the outcome's first word; "paused" and "up" (to date) stay in
# the normal text colour.
_STATUS_COLOURS = {"failed": _RED, "refused": "#b35c00", "superseded": "#b35c00"}
# "Last updated" is re-rendered this often while the page is shown (milliseconds).
TIMES_INTERVAL_MS = 30_000
_EXPORT_FILTERS = (
    ("Plain text (*.txt)", "txt", "text"),
    ("Markdown (*.md)", "md", "markdown"),
    ("JSON with history (*.json)", "json", "json"),
)
assert {fmt for _f, _s, fmt in _EXPORT_FILTERS} == set(EXPORT_FORMATS)

AnyIndex = QModelIndex | QPersistentModelIndex


class MemoryListModel(QAbstractTableModel):
    """Workspaces with a memory: path, lines, last updated, and a status — *orphaned* for
    folders that are gone, *memory off*, *paused* (no API key), or the outcome of the newest
    refresh attempt (``up to date``, ``refused_floor``, ``failed``…).

    Filtering and sorting happen on the Python list (no proxy model), so 10,000 rows reset in
    milliseconds.

    Args:
        now: the current UTC time, for "5 minutes ago" (tests pass a fake).
    """

    COLUMNS = ("Workspace", "Lines", "Last updated", "Status")

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__(parent)
        self._now = now
        self._now_value = now()
        self._all: list[MemorySummary] = []
        self._rows: list[MemorySummary] = []
        self._row_index: dict[str, int] = {}  # workspace id -> row in _rows
        self._all_index: dict[str, int] = {}  # workspace id -> position in _all
        self._filter = ""
        self._sort_column = -1
        self._sort_order = Qt.SortOrder.AscendingOrder
        self._last: dict[str, LastRefresh] = {}  # workspace id -> its newest refresh attempt
        self._paused: frozenset[str] = frozenset()  # waiting for an API key

    # --- Qt model interface ------------------------------------------------------------------
    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        summary = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return summary.workspace.path
            if column == 1:
                return str(summary.lines)
            if column == 2:
                return relative_time(summary.updated_at, self._now_value)
            return self._status(summary)[0]
        if role == Qt.ItemDataRole.ToolTipRole:
            if summary.orphaned:
                return (
                    f"{summary.workspace.path}\nThis folder no longer exists. Re-attach… "
                    "moves its memory to another folder."
                )
            if column == 2:
                return local_time(summary.updated_at)
            if column == 3 and self._status(summary)[1]:
                return self._status(summary)[1]
            return summary.workspace.path
        if role == Qt.ItemDataRole.ForegroundRole and summary.orphaned:
            return QBrush(QColor("#8a8a8a")) if column != 3 else QBrush(QColor("#b35c00"))
        if role == Qt.ItemDataRole.ForegroundRole and column == 3:
            colour = _STATUS_COLOURS.get(self._status(summary)[0].split("_")[0])
            return QBrush(QColor(colour)) if colour else None
        if role == Qt.ItemDataRole.FontRole and summary.orphaned and column in (0, 3):
            font = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont)
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.UserRole:
            return summary.workspace.id
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_column, self._sort_order = column, order
        self._rebuild()

    def _status(self, summary: MemorySummary) -> tuple[str, str]:
        """The Status cell and its tooltip: orphaned, memory off, or where refreshing stands."""
        if summary.orphaned:
            return ORPHANED, ""
        if not summary.workspace.memory_enabled:
            return "memory off", "Memory is turned off for this workspace."
        workspace_id = summary.workspace.id
        return list_status(
            self._last.get(workspace_id),
            updated_at=summary.updated_at,
            paused=workspace_id in self._paused,
        )

    # --- driven by the page ------------------------------------------------------------------
    def set_summaries(self, summaries: list[MemorySummary]) -> bool:
        """Replace every row (the store's order: most recently updated first).

        Returns:
            Whether anything changed (an identical list leaves the view alone).
        """
        if summaries == self._all:
            return False
        self._all = list(summaries)
        self._now_value = self._now()
        self._rebuild()
        return True

    def set_statuses(self, last: dict[str, LastRefresh], paused: frozenset[str]) -> None:
        """Fill the Status column from each workspace's newest refresh attempt and the
        workspaces whose refresh waits for an API key (the rows stay where they are)."""
        if last == self._last and paused == self._paused:
            return
        self._last, self._paused = dict(last), frozenset(paused)
        if self._sort_column == 3:
            self._rebuild()
        elif self._rows:
            self.dataChanged.emit(self.index(0, 3), self.index(len(self._rows) - 1, 3))

    def update_times(self) -> None:
        """Re-render "Last updated" against the current time ("just now" becomes "2 minutes
        ago" while the list is open)."""
        self._now_value = self._now()
        if self._rows:
            self.dataChanged.emit(self.index(0, 2), self.index(len(self._rows) - 1, 2))

    def set_filter(self, text: str) -> None:
        """Show only workspaces whose path contains ``text`` (case-insensitive)."""
        self._filter = text.strip().casefold()
        self._rebuild()

    def upsert(self, summary: MemorySummary) -> None:
        """Add the workspace's row, or replace it in place."""
        workspace_id = summary.workspace.id
        position = self._all_index.get(workspace_id)
        if position is None:
            self._all.insert(0, summary)
            self._rebuild()
            return
        self._all[position] = summary
        row = self.row_of(workspace_id)
        if row is not None:
            self._rows[row] = summary
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))

    def remove(self, workspace_id: str) -> None:
        """Drop the workspace's row (re-attached under a new id)."""
        self._all = [s for s in self._all if s.workspace.id != workspace_id]
        self._rebuild()

    def summary_at(self, row: int) -> MemorySummary | None:
        """The summary shown in ``row``, or ``None``."""
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def summary_for(self, workspace_id: str) -> MemorySummary | None:
        """The summary of a workspace, filtered out or not."""
        position = self._all_index.get(workspace_id)
        return None if position is None else self._all[position]

    def row_of(self, workspace_id: str) -> int | None:
        """The row showing the workspace, or ``None`` (absent or filtered out)."""
        return self._row_index.get(workspace_id)

    @property
    def paused_workspaces(self) -> frozenset[str]:
        """The workspaces shown as paused (no API key)."""
        return self._paused

    @property
    def total(self) -> int:
        """Every workspace with a memory, filtered out or not."""
        return len(self._all)

    def _rebuild(self) -> None:
        self.beginResetModel()
        self._all_index = {s.workspace.id: i for i, s in enumerate(self._all)}
        rows = self._all
        if self._filter:
            rows = [s for s in rows if self._filter in s.workspace.path.casefold()]
        else:
            rows = list(rows)
        if self._sort_column >= 0:
            key: Callable[[MemorySummary], object] = {
                0: lambda s: s.workspace.path.casefold(),
                1: lambda s: s.lines,
                2: lambda s: s.updated_at or datetime.min.replace(tzinfo=UTC),
                3: lambda s: (s.orphaned, not s.workspace.memory_enabled, self._status(s)[0]),
            }[self._sort_column]
            rows.sort(key=key, reverse=self._sort_order == Qt.SortOrder.DescendingOrder)
        self._rows = rows
        self._row_index = {s.workspace.id: i for i, s in enumerate(rows)}
        self.endResetModel()


class MemoryEditor(QWidget):
    """The inline editor for one workspace's memory document."""

    save_requested = Signal(str, str, int)  # workspace id, text, the version it is based on
    refresh_requested = Signal(str)  # workspace id
    history_requested = Signal(str)  # workspace id
    memory_enabled_changed = Signal(str, bool)  # workspace id, enabled
    save_finished = Signal(bool)  # a requested save succeeded (True) or was refused (False)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._workspace: Workspace | None = None
        self._document: MemoryDocument | None = None
        self._base_text = ""
        self._theirs: MemoryDocument | None = None
        self._refresh_available = True
        self._refresh_busy = False
        self.question_box: QMessageBox | None = None  # "Save anyway?" before a collapse
        self._setup_ui()
        self.clear_workspace()

    def _setup_ui(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

        self.header_label = QLabel(self)
        self.header_label.setObjectName("editorHeader")
        self.header_label.setWordWrap(True)
        self.header_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.header_label)

        self.memory_enabled_box = QCheckBox("Use this memory in conversations and refresh it", self)
        self.memory_enabled_box.toggled.connect(self._on_memory_enabled_box_toggled)
        layout.addWidget(self.memory_enabled_box)

        self.banner = QFrame(self)
        self.banner.setObjectName("memoryBanner")
        self.banner.setFrameShape(QFrame.Shape.StyledPanel)
        self.banner.setStyleSheet(
            "#memoryBanner { background: #fff4ce; border: 1px solid #c9a400; border-radius: 4px; }"
        )
        banner_layout = QVBoxLayout(self.banner)
        self.banner_label = QLabel(self.banner)
        self.banner_label.setObjectName("bannerText")
        self.banner_label.setWordWrap(True)
        self.banner_label.setStyleSheet("color: #3d3000;")
        banner_layout.addWidget(self.banner_label)
        self.diff_view = DiffView(self.banner)
        self.diff_view.setObjectName("bannerDiff")
        self.diff_view.setMaximumHeight(160)
        banner_layout.addWidget(self.diff_view)
        banner_buttons = QHBoxLayout()
        self.keep_mine_button = QPushButton("Keep mine", self.banner)
        self.keep_mine_button.setToolTip("Save your text as a new version on top of the stored one")
        self.keep_mine_button.clicked.connect(self._on_keep_mine_button_clicked)
        self.take_theirs_button = QPushButton("Take theirs", self.banner)
        self.take_theirs_button.setToolTip("Discard your edits and show the stored version")
        self.take_theirs_button.clicked.connect(self._on_take_theirs_button_clicked)
        banner_buttons.addStretch(1)
        banner_buttons.addWidget(self.keep_mine_button)
        banner_buttons.addWidget(self.take_theirs_button)
        banner_layout.addLayout(banner_buttons)
        layout.addWidget(self.banner)

        self.text_edit = QPlainTextEdit(self)
        self.text_edit.setObjectName("memoryEditorText")
        self.text_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        # Wrapped for reading; the counter still counts the document's own lines.
        self.text_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text_edit.setTabChangesFocus(True)
        self.text_edit.textChanged.connect(self._on_text_edit_text_changed)
        layout.addWidget(self.text_edit, 1)

        counter_row = QHBoxLayout()
        self.counter_label = QLabel(self)
        self.counter_label.setObjectName("memoryCounter")
        self.dirty_label = QLabel(self)
        self.dirty_label.setObjectName("memoryDirty")
        counter_row.addWidget(self.counter_label)
        counter_row.addStretch(1)
        counter_row.addWidget(self.dirty_label)
        layout.addLayout(counter_row)

        self.message_label = QLabel(self)
        self.message_label.setObjectName("memoryMessage")
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message_label)

        buttons = QHBoxLayout()
        self.save_button = QPushButton("Save", self)
        self.save_button.setToolTip("Save (Ctrl+S)")
        self.save_button.clicked.connect(self.request_save)
        self.revert_button = QPushButton("Revert", self)
        self.revert_button.setToolTip("Discard your edits and show the stored document")
        self.revert_button.clicked.connect(self._on_revert_button_clicked)
        self.history_button = QPushButton("History…", self)
        self.history_button.clicked.connect(self._on_history_button_clicked)
        self.import_button = QPushButton("Import…", self)
        self.export_button = QPushButton("Export…", self)
        self.delete_button = QPushButton("Delete…", self)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.setToolTip("Bring this memory up to date with its conversations now")
        self.refresh_button.clicked.connect(self._on_refresh_button_clicked)
        for button in (self.save_button, self.revert_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        for button in (
            self.history_button,
            self.import_button,
            self.export_button,
            self.delete_button,
            self.refresh_button,
        ):
            buttons.addWidget(button)
        layout.addLayout(buttons)

        self.save_action = QAction("Save", self)
        self.save_action.setShortcut(QKeySequence.StandardKey.Save)
        self.save_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.save_action.triggered.connect(self.request_save)
        self.addAction(self.save_action)

    # --- state ---------------------------------------------------------------------------------
    @property
    def workspace(self) -> Workspace | None:
        """The workspace being edited, or ``None``."""
        return self._workspace

    @property
    def document(self) -> MemoryDocument | None:
        """The stored document the edits are based on."""
        return self._document

    @property
    def text(self) -> str:
        """The text in the editor now."""
        return self.text_edit.toPlainText()

    def is_dirty(self) -> bool:
        """Whether the editor holds text that is not the stored document."""
        return self._workspace is not None and self.text != self._base_text

    @property
    def banner_shown(self) -> bool:
        """Whether the changed-underneath / conflict banner is up."""
        return not self.banner.isHidden()

    # --- driven by the page and the controller -----------------------------------------------
    def clear_workspace(self) -> None:
        """Show nothing (no workspace selected)."""
        self._workspace = None
        self._document = None
        self._base_text = ""
        self._theirs = None
        self.banner.hide()
        self.text_edit.blockSignals(True)
        self.text_edit.clear()
        self.text_edit.blockSignals(False)
        self.text_edit.setReadOnly(True)
        self.text_edit.setPlaceholderText("Choose a workspace on the left.")
        self.header_label.setText("No workspace selected.")
        self.memory_enabled_box.setEnabled(False)
        self.message_label.clear()
        self._refresh_controls()

    def load(
        self,
        workspace: Workspace,
        document: MemoryDocument,
        *,
        proposal: str | None = None,
        note: str = "",
    ) -> None:
        """Edit ``document`` of ``workspace``, dropping any edits in the editor.

        Args:
            proposal: text to put in the editor instead of the document (a refused refresh
                reply); it shows as unsaved edits based on ``document``.
            note: a message to show under the editor.
        """
        self._workspace = workspace
        self._theirs = None
        self.banner.hide()
        self._set_base(document)
        self.text_edit.setReadOnly(False)
        self.text_edit.setPlaceholderText("This workspace has no memory yet. Type one and Save.")
        self.text_edit.setPlainText(document.content if proposal is None else proposal)
        self.memory_enabled_box.blockSignals(True)
        self.memory_enabled_box.setChecked(workspace.memory_enabled)
        self.memory_enabled_box.blockSignals(False)
        self.memory_enabled_box.setEnabled(True)
        self.show_message(note)
        self._refresh_controls()

    def set_workspace(self, workspace: Workspace) -> None:
        """Update the workspace's details (e.g. memory on/off) without touching the text."""
        if self._workspace is not None and workspace.id == self._workspace.id:
            self._workspace = workspace
            self.memory_enabled_box.blockSignals(True)
            self.memory_enabled_box.setChecked(workspace.memory_enabled)
            self.memory_enabled_box.blockSignals(False)
            self._update_header()

    def set_refresh_available(self, available: bool) -> None:
        """Whether forced refreshes exist in this build (Refresh is disabled otherwise)."""
        self._refresh_available = available
        self._refresh_controls()

    def update_times(self) -> None:
        """Re-render "updated 5 minutes ago" in the header against the current time."""
        self._update_header()

    def set_refresh_busy(self, busy: bool) -> None:
        """Disable Refresh while a forced refresh runs."""
        self._refresh_busy = busy
        self._refresh_controls()

    def request_save(self) -> None:
        """Save (the button, Ctrl+S): refused here with a message when over the ceiling; a
        save that would collapse the stored document (the floor rule) or empty it asks "Save
        anyway?" first (Cancel keeps the edits unsaved); otherwise asks the controller to save
        based on the stored version."""
        if self._workspace is None or self._document is None:
            return
        refusal = self._ceiling_refusal()
        if refusal:
            self.show_message(refusal, error=True)
            self.save_finished.emit(False)
            return
        self._confirm_then_save(self._document)

    def _confirm_then_save(self, base: MemoryDocument) -> None:
        """Emit the save of the editor's text based on ``base``, after asking when it would
        collapse ``base``'s text; Cancel reports a refused save (the guard does not go on)."""
        workspace, text = self._workspace, self.text
        if workspace is None:
            return
        question = shrink_question(base.content, text)
        if question is None:
            self.save_requested.emit(workspace.id, text, base.version)
            return
        if self.question_box is not None:
            return  # already asking

        def answered(label: str | None) -> None:
            self.question_box = None
            if (
                label == "Save anyway"
                and self._workspace is not None
                and self._workspace.id == workspace.id
                and self.text == text
            ):
                self.save_requested.emit(workspace.id, text, base.version)
                return
            self.show_message("Nothing was saved.")
            self.save_finished.emit(False)

        self.question_box = dialogs.ask(
            self,
            title="Save a much shorter memory?",
            text=question,
            informative="The stored document stays in History either way.",
            choices=[
                ("Save anyway", QMessageBox.ButtonRole.DestructiveRole),
                ("Cancel", QMessageBox.ButtonRole.RejectRole),
            ],
            default="Cancel",
            icon=QMessageBox.Icon.Warning,
            on_answer=answered,
        )

    def save_succeeded(self, document: MemoryDocument) -> None:
        """A requested save was stored as ``document``."""
        if self._workspace is None or document.workspace_id != self._workspace.id:
            return
        self._theirs = None
        self.banner.hide()
        self._set_base(document)
        if self.text != document.content:  # the store normalized it (line endings)
            self.text_edit.setPlainText(document.content)
        self.show_message(f"Saved as version {document.version}.")
        self._refresh_controls()
        self.save_finished.emit(True)

    def save_refused(self, message: str) -> None:
        """A requested save was refused (ceiling, bad text, database); the edits stay."""
        self.show_message(message, error=True)
        self.save_finished.emit(False)

    def show_conflict(self, current: MemoryDocument) -> None:
        """A save based on a stale version was refused: show the banner against ``current``."""
        self._show_banner(current, stale_save=True)
        self.save_finished.emit(False)

    def document_changed(self, current: MemoryDocument, *, source: str = "") -> None:
        """The stored document is now ``current`` (written by a refresh, the CLI, a restore…).

        Without unsaved edits the editor shows it; with edits equal to it, nothing is lost
        either; otherwise the banner offers Keep mine / Take theirs with the diff.
        """
        if self._workspace is None or current.workspace_id != self._workspace.id:
            return
        if self._document is not None and current.version <= self._document.version:
            return  # already based on it (our own save, or an older event)
        by = f" by {_source_text(source)}" if source else ""
        if not self.is_dirty():
            self.load(
                self._workspace,
                current,
                note=f"Updated{by} to version {current.version}." if source else "",
            )
            return
        if self.text == current.content:
            self._theirs = None
            self._set_base(current)
            self.banner.hide()
            self._refresh_controls()
            return
        self._show_banner(current, stale_save=False, by=by)

    def show_message(self, text: str, *, error: bool = False) -> None:
        """Show ``text`` under the editor (red when ``error``); empty text clears it."""
        self.message_label.setText(text)
        self.message_label.setStyleSheet(f"color: {_RED};" if error and text else "")
        self.message_label.setProperty("error", bool(error and text))

    # --- internals ---------------------------------------------------------------------------
    def _set_base(self, document: MemoryDocument) -> None:
        self._document = document
        self._base_text = document.content
        self._update_header()

    def _update_header(self) -> None:
        """Path, version and last update of the stored document; while the banner is up, the
        stored version is the newer one and the edits' base is named beside it."""
        if self._workspace is None or self._document is None:
            return
        document = self._theirs or self._document
        updated = (
            f"updated {relative_time(document.updated_at)}"
            if document.updated_at
            else "never written"
        )
        based = (
            f" (your edits are based on version {self._document.version})"
            if self._theirs is not None
            else ""
        )
        flags = f" · flags: {', '.join(document.flags)}" if document.flags else ""
        self.header_label.setText(
            f"<b>{_escape(self._workspace.path)}</b><br>"
            f"version {document.version}{based} · {updated}{flags}"
        )

    def _show_banner(self, theirs: MemoryDocument, *, stale_save: bool, by: str = "") -> None:
        """Offer Keep mine / Take theirs against ``theirs`` with the diff; one message says what
        happened and what each button does."""
        self._theirs = theirs
        if stale_save:
            what = (
                f"The memory changed (version {theirs.version}) while you were editing; "
                "nothing was saved."
            )
        else:
            what = f"The memory changed to version {theirs.version}{by} while you were editing."
        self.banner_label.setText(
            f"{what} Keep mine saves your text as version {theirs.version + 1}; Take theirs "
            "discards your edits."
        )
        self.diff_view.show_rows(diff_rows(theirs.content, self.text))
        if not self.diff_view.rows():
            self.diff_view.show_message("(no line differences)")
        self.show_message("")  # "Saved as version N." would now be stale
        self.banner.show()
        self._update_header()
        self._refresh_controls()

    def _ceiling_refusal(self) -> str | None:
        text = self.text
        return ceiling_message(count_lines(text), len(text))

    def _refresh_controls(self) -> None:
        has_workspace = self._workspace is not None
        dirty = self.is_dirty()
        counter, over = counter_text(self.text)
        self.counter_label.setText(counter if has_workspace else "")
        self.counter_label.setStyleSheet(f"color: {_RED}; font-weight: bold;" if over else "")
        self.counter_label.setProperty("over", over)
        self.dirty_label.setText("unsaved changes" if dirty else "")
        self.save_button.setEnabled(has_workspace and dirty)
        self.revert_button.setEnabled(has_workspace and dirty)
        for button in (
            self.history_button,
            self.import_button,
            self.export_button,
            self.delete_button,
        ):
            button.setEnabled(has_workspace)
        self.refresh_button.setEnabled(
            has_workspace and self._refresh_available and not self._refresh_busy
        )

    def _on_text_edit_text_changed(self) -> None:
        if self.message_label.property("error"):  # the user is acting on it; the counter stays
            self.show_message("")
        self._refresh_controls()

    def _on_revert_button_clicked(self) -> None:
        if self._workspace is not None and self._document is not None:
            self.load(self._workspace, self._document, note="Reverted to the stored version.")

    def _on_keep_mine_button_clicked(self) -> None:
        if self._workspace is None or self._theirs is None:
            return
        refusal = self._ceiling_refusal()
        if refusal:
            self.show_message(refusal, error=True)
            return
        self._confirm_then_save(self._theirs)

    def _on_take_theirs_button_clicked(self) -> None:
        if self._workspace is not None and self._theirs is not None:
            theirs = self._theirs
            self.load(
                self._workspace,
                theirs,
                note=f"Showing the stored version {theirs.version}; your edits were discarded.",
            )

    def _on_history_button_clicked(self) -> None:
        if self._workspace is not None:
            self.history_requested.emit(self._workspace.id)

    def _on_refresh_button_clicked(self) -> None:
        if self._workspace is not None:
            self.refresh_requested.emit(self._workspace.id)

    def _on_memory_enabled_box_toggled(self, checked: bool) -> None:
        if self._workspace is not None:
            self.memory_enabled_changed.emit(self._workspace.id, checked)


class MemoryPage(QWidget):
    """The Settings memory page: the workspace list beside the inline editor."""

    workspace_selected = Signal(str)  # workspace id: load it into the editor
    import_requested = Signal(str, str, int)  # workspace id, file path, base version
    export_requested = Signal(str, str, str)  # workspace id, file path, format
    delete_requested = Signal(str, int)  # workspace id, base version
    reattach_requested = Signal(str, str)  # workspace id, new folder

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__(parent)
        self.model = MemoryListModel(self, now=now)
        self._after_save: Callable[[], None] | None = None
        self.question_box: QMessageBox | None = None
        self.file_dialog = None
        self._setup_ui()
        self.times_timer = QTimer(self)
        self.times_timer.setInterval(TIMES_INTERVAL_MS)
        self.times_timer.timeout.connect(self._on_times_timer_timeout)

    def _setup_ui(self) -> None:
        self.setObjectName("memoryPage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)

        left = QWidget(splitter)
        left.setMinimumWidth(360)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        self.filter_edit = QLineEdit(left)
        self.filter_edit.setPlaceholderText("Filter workspaces")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter_edit_text_changed)
        left_layout.addWidget(self.filter_edit)
        self.table = QTableView(left)
        self.table.setObjectName("memoryList")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSortingEnabled(False)  # the store's order; header clicks sort the list
        self.table.horizontalHeader().setSectionsClickable(True)
        self.table.horizontalHeader().sectionClicked.connect(self._on_header_section_clicked)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setTextElideMode(Qt.TextElideMode.ElideLeft)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        vertical = self.table.verticalHeader()
        vertical.setVisible(False)
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vertical.setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # Wide enough for their usual text ("refused_ceiling" in Status); the path takes the
        # rest and is elided on the left.
        metrics = self.table.fontMetrics()
        for column, sample in ((1, "Lines"), (2, "25 minutes ago"), (3, "refused_ceiling")):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.table.setColumnWidth(column, metrics.horizontalAdvance(sample) + 16)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_current_row_changed)
        left_layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.count_label = QLabel(left)
        self.count_label.setObjectName("memoryCount")
        self.reattach_button = QPushButton("Re-attach…", left)
        self.reattach_button.setToolTip("Move this orphaned memory to another folder")
        self.reattach_button.setEnabled(False)
        self.reattach_button.clicked.connect(self._on_reattach_button_clicked)
        row.addWidget(self.count_label, 1)
        row.addWidget(self.reattach_button)
        left_layout.addLayout(row)

        self.editor = MemoryEditor(splitter)
        self.editor.import_button.clicked.connect(self._on_import_button_clicked)
        self.editor.export_button.clicked.connect(self._on_export_button_clicked)
        self.editor.delete_button.clicked.connect(self._on_delete_button_clicked)
        self.editor.save_finished.connect(self._on_editor_save_finished)
        splitter.addWidget(left)
        splitter.addWidget(self.editor)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([420, 620])
        layout.addWidget(splitter)

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

    def set_statuses(self, last: dict[str, LastRefresh], paused: frozenset[str]) -> None:
        """Fill the Status column (see :meth:`MemoryListModel.set_statuses`)."""
        self.model.set_statuses(last, paused)

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

    def has_unsaved_changes(self) -> bool:
        """Whether the editor holds unsaved edits (the Settings dialog's close guard)."""
        return self.editor.is_dirty()

    def resolve_unsaved(self, then: Callable[[], None]) -> None:
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
    def _guard(self, then: Callable[[], None]) -> None:
        if not self.editor.is_dirty():
            then()
            return
        workspace = self.editor.workspace
        name = workspace.name if workspace else "this workspace"

        def answered(label: str | None) -> None:
            self.question_box = None
            if label == "Save":
                self._after_save = then
                self.editor.request_save()
            elif label == "Discard":
                if self.editor.workspace is not None and self.editor.document is not None:
                    self.editor.load(self.editor.workspace, self.editor.document)
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
        selection.blockSignals(True)
        try:
            if row is None:
                selection.clearSelection()
                self.table.setCurrentIndex(QModelIndex())
            else:
                index = self.model.index(row, 0)
                self.table.setCurrentIndex(index)
                self.table.selectRow(row)
                if scroll:
                    self.table.scrollTo(index)
        finally:
            selection.blockSignals(False)
        self.table.viewport().update()

    def _on_table_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        summary = self.model.summary_at(current.row()) if current.isValid() else None
        if summary is not None:
            self._request_workspace(summary.workspace.id)
        self._update_reattach_button()

    def _on_filter_edit_text_changed(self, text: str) -> None:
        self.model.set_filter(text)
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
        self.count_label.setText(
            f"{total:,} {noun}" if shown == total else f"{shown:,} of {total:,} {noun}"
        )

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
                start=_start_dir(workspace),
                name_filters=["Text and Yak exports (*.txt *.md *.json)", "All files (*)"],
                on_chosen=lambda path: self._emit_import(workspace.id, path),
            )

        self._guard(choose)

    def _emit_import(self, workspace_id: str, path: str) -> None:
        document = self.editor.document
        if document is not None and document.workspace_id == workspace_id:
            self.import_requested.emit(workspace_id, path, document.version)

    def _on_export_button_clicked(self) -> None:
        workspace = self.editor.workspace
        if workspace is None:
            return
        formats = {f: fmt for f, _s, fmt in _EXPORT_FILTERS}

        def choose() -> None:
            start = os.path.join(_start_dir(workspace), default_export_name(workspace, "text"))
            self.file_dialog = dialogs.choose_save_file(
                self,
                title=f"Export the memory of {workspace.name}",
                start=start,
                name_filters=[(f, s) for f, s, _fmt in _EXPORT_FILTERS],
                on_chosen=lambda path, chosen: self.export_requested.emit(
                    workspace.id, path, formats.get(chosen, "text")
                ),
            )

        self._guard(choose)

    def _on_delete_button_clicked(self) -> None:
        workspace = self.editor.workspace
        document = self.editor.document
        if workspace is None or document is None:
            return

        def answered(label: str | None) -> None:
            self.question_box = None
            if label == "Delete":
                self.delete_requested.emit(workspace.id, document.version)

        unsaved = " Your unsaved edits are discarded too." if self.editor.is_dirty() else ""
        self.question_box = dialogs.ask(
            self,
            title="Delete memory",
            text=f"Delete the memory of {workspace.path}?",
            informative="The document is emptied. It stays in History, where you can restore "
            f"it.{unsaved}",
            choices=[
                ("Delete", QMessageBox.ButtonRole.DestructiveRole),
                ("Cancel", QMessageBox.ButtonRole.RejectRole),
            ],
            default="Cancel",
            icon=QMessageBox.Icon.Warning,
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


def _source_text(source: str) -> str:
    return {
        "refresh": "a memory refresh",
        "external": "another program (such as the yak command)",
        "hand": "a hand edit",
        "import": "an import",
        "restore": "a restore",
        "clear": "a delete",
    }.get(source, source)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def summary_from(
    workspace: Workspace, document: MemoryDocument, *, orphaned: bool
) -> MemorySummary:
    """A list row for a workspace (used when it is not listed yet: no memory written so far)."""
    return MemorySummary(
        workspace=workspace,
        version=document.version,
        lines=document.lines,
        chars=document.chars,
        updated_at=document.updated_at,
        flags=document.flags,
        orphaned=orphaned,
    )


__all__ = ["MemoryEditor", "MemoryListModel", "MemoryPage", "summary_from"]
