"""HistoryDialog: a memory document's revisions and refresh attempts.

Revisions (version, source, line and character counts, flags, time) with a coloured diff of the
selected revision against the current document, or against the version before it (what that
revision changed), and Restore; refresh attempts (time, outcome,
reason, model, tokens, duration; the reason takes the width left and is elided, its tooltip has
all of it) with the model's reply, which a refused attempt can open in the editor.
Go to date selects the revision that was current at the end of a day ("As of a date" in
docs/memory.md). The dialog only emits intents (``restore_requested``, ``open_reply_requested``).
"""

from __future__ import annotations

from datetime import date

from PySide6.QtCore import QDate, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QWidget,
)

from yak.domain import RefreshAttempt, Revision, Workspace
from yak.linediff import diff_rows
from yak.presenters import attempt_outcome, local_time, source_label
from yak.text import plural
from yak.ui.diff_view import DiffView
from yak.ui.layout import STRETCH, create_button, create_label, hbox, vbox

COMPARE_CURRENT = "current"  # the selected revision against the current document
COMPARE_PREVIOUS = "previous"  # the revision before it against the selected one


class HistoryDialog(QDialog):
    """History of one workspace's memory.

    Args:
        workspace: whose history this is.
        revisions: newest first.
        attempts: newest first.
        current_text: the stored document now (the diff's right-hand side).
    """

    restore_requested = Signal(str)  # revision id
    open_reply_requested = Signal(str)  # a refresh reply to trim in the editor

    REVISION_COLUMNS = ("Version", "Source", "Lines", "Characters", "Change", "Flags", "When")
    ATTEMPT_COLUMNS = ("When", "Outcome", "Reason", "Model", "Tokens in / out", "Duration")

    def __init__(
        self,
        workspace: Workspace,
        revisions: list[Revision],
        attempts: list[RefreshAttempt],
        current_text: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._workspace = workspace
        self._revisions: list[Revision] = []
        self._attempts: list[RefreshAttempt] = []
        self._current_text = current_text
        self._setup_ui()
        self.set_history(revisions, attempts, current_text)

    def _setup_ui(self) -> None:
        self.setObjectName("historyDialog")
        self.setWindowTitle(f"Memory history — {self._workspace.name}")
        self.resize(900, 620)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self._setup_revisions_tab(), "Revisions")
        self.tabs.addTab(self._setup_attempts_tab(), "Refresh attempts")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        vbox((self.tabs, 1), buttons, parent=self)

    def _setup_revisions_tab(self) -> QWidget:
        """The revisions table above the selected revision's diff, with Restore."""
        tab = QWidget(self.tabs)
        splitter = QSplitter(Qt.Orientation.Vertical, tab)
        self.revisions_table = self._table(
            self.REVISION_COLUMNS, splitter, stretch=self.REVISION_COLUMNS.index("Flags")
        )
        self.revisions_table.itemSelectionChanged.connect(
            self._on_revisions_table_item_selection_changed
        )
        self.diff_view = DiffView(splitter)
        self.diff_view.setObjectName("revisionDiff")
        splitter.addWidget(self.revisions_table)
        splitter.addWidget(self.diff_view)
        self.diff_label = create_label(tab, word_wrap=True)
        self.compare_combo = QComboBox(tab)
        self.compare_combo.setObjectName("compareWith")
        self.compare_combo.addItem("Against the current version", COMPARE_CURRENT)
        self.compare_combo.addItem("Against the version before it", COMPARE_PREVIOUS)
        self.compare_combo.setToolTip("What the selected version is compared with")
        self.compare_combo.currentIndexChanged.connect(
            self._on_revisions_table_item_selection_changed
        )
        self.restore_button = create_button(
            "Restore this version",
            tab,
            tooltip="Make this revision's text current again (a new revision)",
            clicked=self._on_restore_button_clicked,
        )
        self.as_of_edit = QDateEdit(QDate.currentDate(), tab)
        self.as_of_edit.setObjectName("historyAsOf")
        self.as_of_edit.setCalendarPopup(True)
        self.as_of_edit.setDisplayFormat("yyyy-MM-dd")
        self.as_of_button = create_button(
            "Go to date",
            tab,
            tooltip="Select the version that was current at the end of this day",
            clicked=self._on_as_of_button_clicked,
        )
        vbox(
            (splitter, 1),
            hbox((self.diff_label, 1), self.compare_combo, self.restore_button),
            hbox(self.as_of_edit, self.as_of_button, STRETCH),
            parent=tab,
        )
        return tab

    def _setup_attempts_tab(self) -> QWidget:
        """The refresh attempts table above the selected attempt's reply, with Open reply."""
        tab = QWidget(self.tabs)
        splitter = QSplitter(Qt.Orientation.Vertical, tab)
        self.attempts_table = self._table(
            self.ATTEMPT_COLUMNS, splitter, stretch=self.ATTEMPT_COLUMNS.index("Reason")
        )
        self.attempts_table.itemSelectionChanged.connect(
            self._on_attempts_table_item_selection_changed
        )
        self.reply_view = self._text_view(splitter)
        self.reply_view.setObjectName("attemptReply")
        splitter.addWidget(self.attempts_table)
        splitter.addWidget(self.reply_view)
        self.attempt_label = create_label(tab, word_wrap=True)
        self.open_reply_button = create_button(
            "Open reply in editor",
            tab,
            tooltip="Put this reply in the editor to trim and save it",
            clicked=self._on_open_reply_button_clicked,
        )
        vbox((splitter, 1), hbox((self.attempt_label, 1), self.open_reply_button), parent=tab)
        return tab

    @staticmethod
    def _table(columns: tuple[str, ...], parent: QWidget, *, stretch: int) -> QTableWidget:
        """A read-only table whose columns fit their contents, except ``stretch``, which takes
        the room left (its long text is elided; the tooltip has all of it)."""
        table = QTableWidget(0, len(columns), parent)
        table.setHorizontalHeaderLabels(list(columns))
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setWordWrap(False)
        table.verticalHeader().setVisible(False)
        header = table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(48)
        return table

    @staticmethod
    def _text_view(parent: QWidget) -> QPlainTextEdit:
        view = QPlainTextEdit(parent)
        view.setReadOnly(True)
        view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        return view

    # --- driven by the controller ------------------------------------------------------------
    def set_history(
        self, revisions: list[Revision], attempts: list[RefreshAttempt], current_text: str
    ) -> None:
        """Show these revisions and attempts (newest first) against ``current_text``."""
        self._revisions = list(revisions)
        self._attempts = list(attempts)
        self._current_text = current_text
        self.revisions_table.setRowCount(len(self._revisions))
        for row, revision in enumerate(self._revisions):
            cells = (
                str(revision.version),
                source_label(revision.source).capitalize(),
                str(revision.lines),
                f"{revision.chars:,}",
                f"+{revision.added} −{revision.removed}",
                ", ".join(revision.flags),
                local_time(revision.created_at),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column == 1 and revision.model:
                    item.setToolTip(f"model {revision.model}")
                self.revisions_table.setItem(row, column, item)
        self.attempts_table.setRowCount(len(self._attempts))
        for row, attempt in enumerate(self._attempts):
            attempt_cells = (
                local_time(attempt.created_at),
                _first_upper(attempt_outcome(attempt)),
                attempt.reason,
                attempt.model or "",
                f"{attempt.usage.input_tokens:,} / {attempt.usage.output_tokens:,}",
                f"{attempt.duration_s:.1f} s",
            )
            for column, text in enumerate(attempt_cells):
                item = QTableWidgetItem(text)
                if column == 2:
                    item.setToolTip(attempt.reason)
                self.attempts_table.setItem(row, column, item)
        if self._revisions:
            self.revisions_table.selectRow(0)
        else:
            self.diff_view.show_message("No revisions yet.")
        if self._attempts:
            self.attempts_table.selectRow(0)
        else:
            self.reply_view.setPlainText("No refresh attempts yet.")
        self._on_revisions_table_item_selection_changed()
        self._on_attempts_table_item_selection_changed()

    def selected_revision(self) -> Revision | None:
        """The revision selected in the table, or ``None``."""
        row = self.revisions_table.currentRow()
        return self._revisions[row] if 0 <= row < len(self._revisions) else None

    def selected_attempt(self) -> RefreshAttempt | None:
        """The refresh attempt selected in the table, or ``None``."""
        row = self.attempts_table.currentRow()
        return self._attempts[row] if 0 <= row < len(self._attempts) else None

    def select_revision(self, version: int) -> None:
        """Select the revision with ``version``."""
        for row, revision in enumerate(self._revisions):
            if revision.version == version:
                self.revisions_table.selectRow(row)
                return

    def select_as_of(self, day: date) -> bool:
        """Select the revision that was current at the end of ``day`` (local time): the newest
        written that day or before. ``False`` (nothing selected) when none was written yet."""
        for row, revision in enumerate(self._revisions):  # newest first
            if revision.created_at.astimezone().date() <= day:
                self.revisions_table.selectRow(row)
                return True
        self.revisions_table.setCurrentCell(-1, -1)
        self.revisions_table.clearSelection()
        self.diff_label.setText(f"The memory was not written yet on {day.isoformat()}.")
        return False

    # --- internals ---------------------------------------------------------------------------
    def _on_as_of_button_clicked(self) -> None:
        day = self.as_of_edit.date()
        self.select_as_of(date(day.year(), day.month(), day.day()))

    def _on_revisions_table_item_selection_changed(self) -> None:
        revision = self.selected_revision()
        self.restore_button.setEnabled(
            revision is not None and revision.content != self._current_text
        )
        if revision is None:
            self.diff_label.clear()
            return
        if self.compare_combo.currentData() == COMPARE_PREVIOUS:
            self._show_against_previous(revision)
        else:
            self._show_against_current(revision)

    def _show_against_current(self, revision: Revision) -> None:
        """The selected revision (− red) against the current document (+ green)."""
        newest = self._revisions[0].version
        rows = diff_rows(revision.content, self._current_text)
        if rows:
            self.diff_view.show_rows(rows)
            self.diff_label.setText(
                f"Version {revision.version} ({source_label(revision.source)}, − red) "
                f"against the current version {newest} (+ green)."
            )
            return
        self.diff_view.show_message(revision.content)
        if revision.version == newest:
            self.diff_label.setText(f"Version {revision.version} is the current version.")
        else:
            self.diff_label.setText(
                f"Version {revision.version} has the same text as the current version {newest}."
            )

    def _show_against_previous(self, revision: Revision) -> None:
        """What the selected revision changed: the version before it (− red) against it
        (+ green); the first version against an empty document."""
        row = self._revisions.index(revision)
        before = self._revisions[row + 1] if row + 1 < len(self._revisions) else None
        old = before.content if before is not None else ""
        what = f"version {before.version}" if before is not None else "an empty document"
        rows = diff_rows(old, revision.content)
        words = f"Version {revision.version} ({source_label(revision.source)}, + green)"
        if rows:
            self.diff_view.show_rows(rows)
            self.diff_label.setText(f"{words} against {what} before it (− red).")
        else:
            self.diff_view.show_message(revision.content)
            self.diff_label.setText(f"{words} changed no line of {what} before it.")

    def _on_attempts_table_item_selection_changed(self) -> None:
        attempt = self.selected_attempt()
        self.open_reply_button.setEnabled(bool(attempt and attempt.reply))
        if attempt is None:
            self.attempt_label.clear()
            return
        sessions = len(attempt.session_ids)
        flags = f" · flags: {', '.join(attempt.flags)}" if attempt.flags else ""
        self.attempt_label.setText(
            f"{_first_upper(attempt_outcome(attempt))} — {attempt.reason} (based on version "
            f"{attempt.base_version}, "
            f"{plural(sessions, 'session')}{flags})"
        )
        self.reply_view.setPlainText(attempt.reply or "(no reply kept for this attempt)")

    def _on_restore_button_clicked(self) -> None:
        revision = self.selected_revision()
        if revision is not None:
            self.restore_requested.emit(revision.id)

    def _on_open_reply_button_clicked(self) -> None:
        attempt = self.selected_attempt()
        if attempt is not None and attempt.reply:
            self.open_reply_requested.emit(attempt.reply)


def _first_upper(text: str) -> str:
    """``text`` with its first letter upper case (ids further on keep their case)."""
    return text[:1].upper() + text[1:]
