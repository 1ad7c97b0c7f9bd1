"""The Settings memory editor: :class:`MemoryEditor`, one workspace's memory document.

A monospace text field with a live ``N / 200 lines`` counter that turns red over the ceiling,
Save (Ctrl+S) that refuses over the ceiling and says why, Revert, and a banner with a diff when
the document changes underneath unsaved edits or a save turns out stale (Keep mine / Take
theirs) — never a silent overwrite either way. A save that would collapse the stored document
asks "Save anyway?" first.

The editor never awaits: it emits intent signals (``save_requested``, ``refresh_requested``…)
and the page's controller calls back (``save_succeeded``, ``show_conflict``…).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QKeySequence, QTextCursor
from PySide6.QtWidgets import (
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from yak.domain import LineOrigin, MemoryDocument, Workspace, count_lines
from yak.linediff import line_changes
from yak.memory.document import ceiling_message
from yak.memory.history.merge import merge3
from yak.memory.judging.guards import shrink_question
from yak.presenters import Colour, source_text
from yak.text import plural
from yak.ui import dialogs
from yak.ui.colours import colour_hex
from yak.ui.formatting import (
    counter_text,
    html_escape,
    origin_and_why,
    origin_at,
    relative_time,
)
from yak.ui.layout import (
    STRETCH,
    blocked_signals,
    create_action,
    create_button,
    create_label,
    hbox,
    vbox,
)
from yak.ui.settings.editor_parts import ChangedBanner, MemoryOptions

_RED = colour_hex(Colour.ALARM)


class MemoryEditor(QWidget):
    """The inline editor for one workspace's memory document."""

    save_requested = Signal(str, str, int)  # workspace id, text, the version it is based on
    refresh_requested = Signal(str)  # workspace id
    history_requested = Signal(str)  # workspace id
    memory_enabled_changed = Signal(str, bool)  # workspace id, enabled
    review_mode_changed = Signal(str, bool)  # workspace id, every rewrite waits for review
    sync_file_changed = Signal(str, bool)  # workspace id, keep AGENTS.md in sync
    save_finished = Signal(bool)  # a requested save succeeded (True) or was refused (False)
    dirty_changed = Signal(bool)  # the editor gained (True) or lost (False) unsaved edits

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._workspace: Workspace | None = None
        self._document: MemoryDocument | None = None
        self._base_text = ""
        self._theirs: MemoryDocument | None = None
        self._refresh_busy = False
        self._dirty = False  # as last reported by dirty_changed
        self.question_box: QMessageBox | None = None  # "Save anyway?" before a collapse
        self._setup_ui()
        self.clear_workspace()

    def _setup_ui(self) -> None:
        self.header_label = create_label(
            self, object_name="editorHeader", word_wrap=True, selectable=True
        )
        self.options = MemoryOptions(self)
        self.options.memory_enabled_changed.connect(self.memory_enabled_changed)
        self.options.review_mode_changed.connect(self.review_mode_changed)
        self.options.sync_file_changed.connect(self.sync_file_changed)
        self.banner = ChangedBanner(self)
        self.banner.keep_mine_clicked.connect(self._on_banner_keep_mine_clicked)
        self.banner.merge_clicked.connect(self._on_banner_merge_clicked)
        self.banner.take_theirs_clicked.connect(self._on_banner_take_theirs_clicked)

        self.text_edit = QPlainTextEdit(self)
        self.text_edit.setObjectName("memoryEditorText")
        self.text_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        # Wrapped for reading; the counter still counts the document's own lines.
        self.text_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text_edit.setTabChangesFocus(True)
        self.text_edit.textChanged.connect(self._on_text_edit_text_changed)

        self.counter_label = create_label(self, object_name="memoryCounter")
        self.dirty_label = create_label(self, object_name="memoryDirty")
        self.message_label = create_label(
            self, object_name="memoryMessage", word_wrap=True, selectable=True
        )
        # Where the line under the cursor came from ("why is this here?").
        self.origin_label = create_label(
            self, object_name="memoryOrigin", word_wrap=True, plain_text=True
        )
        self._origins: list[LineOrigin] = []
        self._titles: dict[str, str] = {}
        self.text_edit.cursorPositionChanged.connect(self._show_origin)

        buttons = self._setup_buttons()
        vbox(
            self.header_label,
            self.options,
            self.banner,
            (self.text_edit, 1),
            hbox(self.counter_label, STRETCH, self.dirty_label),
            self.origin_label,
            self.message_label,
            buttons,
            margins=0,
            parent=self,
        )

        self.save_action = create_action(
            "Save", self, shortcut=QKeySequence.StandardKey.Save, triggered=self.request_save
        )
        self.save_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.addAction(self.save_action)

    def _setup_buttons(self) -> QVBoxLayout:
        """Save, Revert and Refresh, then History…, Import…, Export… and Delete… on a second
        row, so Settings fits a small screen (the page handles Import…, Export… and
        Delete…)."""
        self.save_button = create_button(
            "Save", self, tooltip="Save (Ctrl+S)", clicked=self.request_save
        )
        self.revert_button = create_button(
            "Revert",
            self,
            tooltip="Discard your edits and show the stored document",
            clicked=self._on_revert_button_clicked,
        )
        self.history_button = create_button(
            "History…", self, clicked=self._on_history_button_clicked
        )
        self.import_button = QPushButton("Import…", self)
        self.export_button = QPushButton("Export…", self)
        self.delete_button = QPushButton("Delete…", self)
        self.refresh_button = create_button(
            "Refresh",
            self,
            tooltip="Bring this memory up to date with its conversations now",
            clicked=self._on_refresh_button_clicked,
        )
        return vbox(
            hbox(self.save_button, self.revert_button, STRETCH, self.refresh_button),
            hbox(
                self.history_button,
                self.import_button,
                self.export_button,
                self.delete_button,
                STRETCH,
            ),
            margins=0,
        )

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
        with blocked_signals(self.text_edit):
            self.text_edit.clear()
        self.text_edit.setReadOnly(True)
        self.text_edit.setPlaceholderText("Choose a workspace on the left.")
        self.header_label.setText("No workspace selected.")
        self._origins, self._titles = [], {}
        self.origin_label.clear()
        self.options.show_workspace(None)
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
        if self._workspace is None or self._workspace.id != workspace.id:
            self._origins, self._titles = [], {}
        self._workspace = workspace
        self._theirs = None
        self.banner.hide()
        self._set_base(document)
        self.text_edit.setReadOnly(False)
        self.text_edit.setPlaceholderText("This workspace has no memory yet. Type one and Save.")
        self.text_edit.setPlainText(document.content if proposal is None else proposal)
        self.options.show_workspace(workspace)
        self.show_message(note)
        self._refresh_controls()

    def set_origins(
        self, workspace_id: str, origins: Sequence[LineOrigin], titles: Mapping[str, str]
    ) -> None:
        """The origin of each line of the stored document (``MemoryService.blame``) and the
        titles of the conversations behind them; the line under the cursor shows its own."""
        if self._workspace is None or workspace_id != self._workspace.id:
            return
        self._origins = list(origins)
        self._titles = dict(titles)
        self._show_origin()

    def origin_of_cursor_line(self) -> str:
        """What the origin row says for the line under the cursor ("" when nothing is known)."""
        return self.origin_label.text()

    def set_workspace(self, workspace: Workspace) -> None:
        """Update the workspace's details (e.g. memory on/off) without touching the text."""
        if self._workspace is not None and workspace.id == self._workspace.id:
            self._workspace = workspace
            self.options.show_workspace(workspace)
            self._update_header()

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

        def answered(confirmed: bool) -> None:
            self.question_box = None
            if (
                confirmed
                and self._workspace is not None
                and self._workspace.id == workspace.id
                and self.text == text
            ):
                self.save_requested.emit(workspace.id, text, base.version)
                return
            self.show_message("Nothing was saved.")
            self.save_finished.emit(False)

        self.question_box = dialogs.confirm(
            self,
            title="Save a much shorter memory?",
            text=question,
            informative="The stored document stays in History either way.",
            action="Save anyway",
            on_answer=answered,
        )

    def save_succeeded(self, document: MemoryDocument) -> None:
        """A requested save was stored as ``document``."""
        if self._workspace is None or document.workspace_id != self._workspace.id:
            return
        self._theirs = None
        self.banner.hide()
        self._set_base(document)
        if self.text != document.content:  # the memory service normalized it
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
        """The stored document is now ``current``, written by someone else (a refresh, the CLI,
        another window): the page's controller skips the changes it made itself.

        Without unsaved edits the editor shows it; with edits equal to it, nothing is lost
        either; otherwise the banner offers Keep mine / Take theirs with the diff.
        """
        if self._workspace is None or current.workspace_id != self._workspace.id:
            return
        if self._document is not None and current.version <= self._document.version:
            return  # a read that raced a newer one: the editor already has this version
        by = f" by {source_text(source)}" if source else ""
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
            f"<b>{html_escape(self._workspace.path)}</b><br>"
            f"version {document.version}{based} · {updated}{flags}"
        )

    def _show_banner(self, theirs: MemoryDocument, *, stale_save: bool, by: str = "") -> None:
        """Offer Keep mine / Take theirs against ``theirs`` with the diff; one message says what
        happened and what each button does."""
        self._theirs = theirs
        self.banner.show_change(theirs, self.text, stale_save=stale_save, by=by)
        self.show_message("")  # "Saved as version N." would now be stale
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
        self.refresh_button.setEnabled(has_workspace and not self._refresh_busy)
        if dirty != self._dirty:
            self._dirty = dirty
            self.dirty_changed.emit(dirty)

    def _show_origin(self) -> None:
        """Show the origin of the line under the cursor: the stored line at that position, or
        (after edits moved it) the stored line with the same text; a line not stored yet is
        "typed by you, not saved yet"."""
        if self._workspace is None:
            self.origin_label.clear()
            return
        block = self.text_edit.textCursor().block()
        number, line = block.blockNumber(), block.text()
        if not line.strip():
            self.origin_label.clear()
            return
        origin = origin_at(self._origins, number, line)
        said = origin_and_why(origin, self._titles) if origin else "typed by you, not saved yet"
        self.origin_label.setText(f"Line {number + 1}: {said}")

    def _on_text_edit_text_changed(self) -> None:
        if self.message_label.property("error"):  # the user is acting on it; the counter stays
            self.show_message("")
        self._refresh_controls()

    def _on_revert_button_clicked(self) -> None:
        """Revert asks first (it drops unsaved lines), then puts the stored text back as one
        undoable edit: Ctrl+Z in the editor brings the dropped edits back."""
        if self._workspace is None or self._document is None or self.question_box is not None:
            return
        workspace, stored = self._workspace, self._document

        def answered(confirmed: bool) -> None:
            self.question_box = None
            if not confirmed or self._workspace is None or self._workspace.id != workspace.id:
                return
            cursor = self.text_edit.textCursor()
            cursor.beginEditBlock()
            cursor.select(QTextCursor.SelectionType.Document)
            cursor.insertText(stored.content)
            cursor.endEditBlock()
            self.text_edit.setTextCursor(cursor)
            self.show_message("Reverted to the stored version; Ctrl+Z brings your edits back.")
            self._refresh_controls()

        changed = changed_line_count(stored.content, self.text)
        self.question_box = dialogs.confirm(
            self,
            title="Revert to the stored memory?",
            text=f"Revert drops your unsaved edits ({plural(changed, 'changed line')}).",
            informative="Ctrl+Z in the editor brings them back afterwards.",
            action="Revert",
            icon=QMessageBox.Icon.Question,
            on_answer=answered,
        )

    def _on_banner_keep_mine_clicked(self) -> None:
        if self._workspace is None or self._theirs is None:
            return
        refusal = self._ceiling_refusal()
        if refusal:
            self.show_message(refusal, error=True)
            return
        self._confirm_then_save(self._theirs)

    def _on_banner_merge_clicked(self) -> None:
        # The edits' changes to the version they were based on, applied to the stored version
        # (the three-way line merge the inbox rebases proposals with). The result replaces the
        # editor's text as one undoable edit and waits for Save: nothing is written here.
        if self._workspace is None or self._theirs is None:
            return
        theirs = self._theirs
        merged = merge3(self._base_text, self.text, theirs.content)
        if merged is None:
            self.show_message(
                f"Your edits and version {theirs.version} change the same lines, so they cannot "
                "be merged: choose Keep mine or Take theirs.",
                error=True,
            )
            return
        self._theirs = None
        self.banner.hide()
        self._set_base(theirs)
        cursor = self.text_edit.textCursor()
        cursor.beginEditBlock()
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.insertText(merged)
        cursor.endEditBlock()
        self._refresh_controls()
        self.show_message(
            f"Merged your edits into version {theirs.version}; Save stores the result "
            "(Ctrl+Z brings back your text as it was)."
            if merged != theirs.content
            else f"Version {theirs.version} already holds your edits; nothing to save."
        )

    def _on_banner_take_theirs_clicked(self) -> None:
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


def changed_line_count(stored: str, edited: str) -> int:
    """How many lines an edit adds or removes against the stored text (a changed line counts
    once for its old and once for its new form)."""
    return sum(line_changes(stored, edited))
