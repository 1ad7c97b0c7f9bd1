"""ReviewDialog: one change to the memory document, as a coloured diff with its reasons on top.

Two uses, one view ("Review" in docs/memory.md):

- a **proposal** waiting for review: its reasons, its diff against the version it was based
  on, and Accept (Ctrl+Return), Edit then accept (Ctrl+E: the proposed text becomes editable;
  Ctrl+Return accepts the edited text), Reject (Ctrl+Delete) and Close (Esc);
- a **change to look at**: the last refresh's diff, or a refused reply against the document
  (read-only, Close only). A refused reply never replaces the editor's text.

The dialog never awaits: it emits ``accept_requested(proposal_id, content)`` (``content`` is
``None`` when accepted as proposed, else the edited text) and ``reject_requested(proposal_id)``;
the controller runs them and calls :meth:`show_error` or closes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QPlainTextEdit, QStackedWidget, QWidget

from yak.domain import Proposal
from yak.presenters import Colour
from yak.ui.colours import text_style
from yak.ui.diff_view import DiffView
from yak.ui.formatting import diff_rows
from yak.ui.layout import STRETCH, create_button, create_label, hbox, vbox

ACCEPT_KEYS = "Ctrl+Return"
EDIT_KEYS = "Ctrl+E"
REJECT_KEYS = "Ctrl+Delete"


class ReviewDialog(QDialog):
    """A proposal to accept, edit or reject, or a change to look at."""

    accept_requested = Signal(str, object)  # proposal id, edited text or None
    reject_requested = Signal(str)  # proposal id
    edit_text_requested = Signal(str)  # a refused reply: open it in the editor to trim and save

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewDialog")
        self.setWindowTitle("Review a memory change")
        self.resize(760, 560)
        self._proposal: Proposal | None = None
        self.title_label = create_label(self, object_name="reviewTitle", word_wrap=True)
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.reasons_label = create_label(self, object_name="reviewReasons", word_wrap=True)
        self.error_label = create_label(self, object_name="reviewError", word_wrap=True)
        self.error_label.setStyleSheet(text_style(Colour.ALARM))
        self.stack = QStackedWidget(self)
        self.diff_view = DiffView(self.stack)
        self.diff_view.setObjectName("reviewDiff")
        self.editor = QPlainTextEdit(self.stack)
        self.editor.setObjectName("reviewEditor")
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.stack.addWidget(self.diff_view)
        self.stack.addWidget(self.editor)
        self.accept_button = create_button(
            "Accept",
            self,
            tooltip=f"Apply this change ({ACCEPT_KEYS})",
            clicked=self._on_accept,
        )
        self.edit_button = create_button(
            "Edit then accept",
            self,
            tooltip=f"Edit the proposed text, then accept it with {ACCEPT_KEYS} ({EDIT_KEYS})",
            clicked=self.start_editing,
        )
        self.reject_button = create_button(
            "Reject",
            self,
            tooltip=f"Drop this change; the lines it adds stay out ({REJECT_KEYS})",
            clicked=self._on_reject,
        )
        self.trim_button = create_button(
            "Trim and save…",
            self,
            tooltip="Open this reply in the editor as unsaved text, to trim it and save it",
            clicked=self._on_trim,
        )
        self.trim_button.hide()
        self._editable_text: str | None = None
        self.close_button = create_button("Close", self, tooltip="Close (Esc)", clicked=self.reject)
        vbox(
            self.title_label,
            self.reasons_label,
            (self.stack, 1),
            self.error_label,
            hbox(
                self.accept_button, self.edit_button, self.reject_button, STRETCH, self.close_button
            ),
            margins=10,
            parent=self,
        )
        for keys, slot in (
            (ACCEPT_KEYS, self._on_accept),
            ("Ctrl+Enter", self._on_accept),
            (EDIT_KEYS, self.start_editing),
            (REJECT_KEYS, self._on_reject),
        ):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)

    # --- what it shows -------------------------------------------------------------------------
    @property
    def proposal(self) -> Proposal | None:
        """The proposal shown, or ``None`` for a read-only change."""
        return self._proposal

    @property
    def editing(self) -> bool:
        """Whether the proposed text is being edited."""
        return self.stack.currentWidget() is self.editor

    def show_proposal(self, proposal: Proposal, base: str) -> None:
        """Show ``proposal`` (its reasons on top, its diff against ``base``, the text of the
        version it was based on) with Accept, Edit then accept and Reject."""
        self._proposal = proposal
        self._editable_text = None
        self.trim_button.hide()
        self.title_label.setText(
            f"A refresh proposes +{proposal.added} −{proposal.removed} lines on version "
            f"{proposal.base_version}; it waits for you because:"
        )
        self._show_reasons(proposal.reasons)
        self._show_diff(base, proposal.content)
        self.editor.setPlainText(proposal.content)
        self.error_label.clear()
        for button in (self.accept_button, self.edit_button, self.reject_button):
            button.show()
            button.setEnabled(True)
        self.accept_button.setText("Accept")
        self.stack.setCurrentWidget(self.diff_view)
        self.diff_view.setFocus()

    def show_change(
        self,
        title: str,
        old: str,
        new: str,
        reasons: Sequence[str] = (),
        *,
        editable: bool = False,
    ) -> None:
        """Show a change read-only: ``title``, ``reasons`` (if any), the diff ``old`` → ``new``;
        ``editable`` (a refused reply) offers Trim and save…, which emits
        ``edit_text_requested(new)``."""
        self._proposal = None
        self._editable_text = new if editable else None
        self.trim_button.setVisible(editable)
        self.title_label.setText(title)
        self._show_reasons(reasons)
        self._show_diff(old, new)
        self.error_label.clear()
        for button in (self.accept_button, self.edit_button, self.reject_button):
            button.hide()
        self.stack.setCurrentWidget(self.diff_view)
        self.close_button.setFocus()

    def show_error(self, message: str) -> None:
        """A decision failed (the memory changed meanwhile…): say why; nothing is closed."""
        self.error_label.setText(message)
        for button in (self.accept_button, self.edit_button, self.reject_button):
            button.setEnabled(True)

    def start_editing(self) -> None:
        """Make the proposed text editable; Accept then accepts the edited text."""
        if self._proposal is None:
            return
        self.stack.setCurrentWidget(self.editor)
        self.accept_button.setText("Accept edited")
        self.editor.setFocus()

    # --- internals -----------------------------------------------------------------------------
    def _show_reasons(self, reasons: Sequence[str]) -> None:
        self.reasons_label.setText("\n".join(f"• {reason}" for reason in reasons))
        self.reasons_label.setVisible(bool(reasons))

    def _show_diff(self, old: str, new: str) -> None:
        rows = diff_rows(old, new)
        if rows:
            self.diff_view.show_rows(rows)
        else:
            self.diff_view.show_message("No line changes.")

    def _on_accept(self) -> None:
        if self._proposal is None or not self.accept_button.isEnabled():
            return
        content = self.editor.toPlainText() if self.editing else None
        self._busy()
        self.accept_requested.emit(self._proposal.id, content)

    def _on_trim(self) -> None:
        if self._editable_text is not None:
            self.hide()
            self.edit_text_requested.emit(self._editable_text)

    def _on_reject(self) -> None:
        if self._proposal is None or not self.reject_button.isEnabled():
            return
        self._busy()
        self.reject_requested.emit(self._proposal.id)

    def _busy(self) -> None:
        self.error_label.clear()
        for button in (self.accept_button, self.edit_button, self.reject_button):
            button.setEnabled(False)
