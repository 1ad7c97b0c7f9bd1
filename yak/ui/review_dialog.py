"""ReviewDialog: one change to the memory document, as a coloured diff with its reasons on top.

Two uses, one view ("Review" in docs/memory.md, "The review dialog" in docs/ui.md):

- a **proposal** waiting for review: who proposes it (``presenters.proposal_origin``: "An agent
  (Claude Code over MCP) proposes…"), every reason it waits (the secrets redacted from it too),
  why each line it adds is there (its evidence, "Evidence" in docs/memory.md, or the reasons
  that name it), its diff against the version it was based on, one hunk at a time when there
  are several (``yak.memory.history.hunks``: a checkable list, each change taken or left out), and
  Accept (Ctrl+Return, Alt+A), Edit then accept (Ctrl+E, Alt+E: the text taken becomes editable;
  Ctrl+Return accepts the edited text), Reject (Ctrl+Delete, Alt+R) and Close (Esc, Alt+C).
  Accept is the default button (Enter) only when no change taken removes a line a person wrote
  nor adds a line held as doubtful or dangerous (``yak.held.DOUBTFUL``; then no button is). A
  reason about a line listed under "Why these lines" is said there only, not twice;
- a **change to look at**: the last refresh's diff, or a refused reply against the document
  (read-only, Close only). A refused reply never replaces the editor's text.

The dialog never awaits: it emits ``accept_requested(proposal_id, content)`` (``content`` is
``None`` when accepted as proposed, else the text taken or edited: the inbox records that as
edited and accepted) and ``reject_requested(proposal_id)``; the controller runs them and calls
:meth:`show_error` or closes it, or :meth:`show_decided` when the proposal was decided elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QWidget,
)

from yak.domain import Proposal
from yak.held import DOUBTFUL
from yak.linediff import diff_rows
from yak.memory.history.hunks import Hunk, hunks, take
from yak.memory.history.provenance import added_lines
from yak.presenters import Colour, held_line_words, proposal_reasons, review_title
from yak.text import plural, shorten
from yak.ui.colours import text_style
from yak.ui.diff_view import DiffView
from yak.ui.formatting import why_added
from yak.ui.layout import STRETCH, create_button, create_label, hbox, vbox

ACCEPT_KEYS = "Ctrl+Return"
EDIT_KEYS = "Ctrl+E"
REJECT_KEYS = "Ctrl+Delete"
HUNK_LIST_ROWS = 4  # the list of changes shows this many rows before it scrolls
EVIDENCE_ROWS = 5  # added lines whose evidence is listed; the others are counted


class ReviewDialog(QDialog):
    """A proposal to accept (whole or some of its hunks), edit or reject, or a change to look
    at."""

    accept_requested = Signal(str, object)  # proposal id, text taken or edited, or None
    reject_requested = Signal(str)  # proposal id
    edit_text_requested = Signal(str)  # a refused reply: open it in the editor to trim and save

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewDialog")
        self.setWindowTitle("Review a memory change")
        self.resize(760, 560)
        self._proposal: Proposal | None = None
        self._base = ""
        self._hunks: list[Hunk] = []
        self._editable_text: str | None = None
        self._setup_ui()

    def _setup_ui(self) -> None:
        self.title_label = create_label(self, object_name="reviewTitle", word_wrap=True)
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.reasons_label = create_label(self, object_name="reviewReasons", word_wrap=True)
        # Why each line it adds is there: its evidence, or the reasons that name it.
        self.evidence_label = create_label(
            self, object_name="reviewEvidence", word_wrap=True, plain_text=True
        )
        self.hunks_label = create_label(
            self, "C&hanges: untick one to leave it out (Space ticks the selected one)"
        )
        self.hunk_list = QListWidget(self)
        self.hunk_list.setObjectName("reviewHunks")
        self.hunks_label.setBuddy(self.hunk_list)
        self.hunk_list.itemChanged.connect(self._on_hunk_list_item_changed)
        self.hunk_list.currentRowChanged.connect(self._on_hunk_list_current_row_changed)
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
        # Enter presses only the default button, and Accept is the default only when safe.
        self.accept_button = self._button(
            "&Accept", f"Apply the changes ticked ({ACCEPT_KEYS})", self._on_accept
        )
        self.edit_button = self._button(
            "&Edit then accept",
            f"Edit the text taken, then accept it with {ACCEPT_KEYS} ({EDIT_KEYS})",
            self.start_editing,
        )
        self.reject_button = self._button(
            "&Reject",
            f"Drop this change; the lines it adds stay out ({REJECT_KEYS})",
            self._on_reject,
        )
        self.trim_button = self._button(
            "&Trim and save…",
            "Open this reply in the editor as unsaved text, to trim it and save it",
            self._on_trim,
        )
        self.trim_button.hide()
        self.close_button = self._button("&Close", "Close (Esc)", self.reject)
        vbox(
            self.title_label,
            self.reasons_label,
            self.evidence_label,
            self.hunks_label,
            self.hunk_list,
            (self.stack, 1),
            self.error_label,
            hbox(
                self.accept_button,
                self.edit_button,
                self.reject_button,
                self.trim_button,
                STRETCH,
                self.close_button,
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

    def _button(self, text: str, tooltip: str, clicked: Callable[[], object]) -> QPushButton:
        """One of the dialog's buttons: Enter never presses it (Accept is made the default
        button only when accepting is safe, in ``_update_choice``)."""
        return create_button(text, self, tooltip=tooltip, clicked=clicked, auto_default=False)

    # --- what it shows -------------------------------------------------------------------------
    @property
    def proposal(self) -> Proposal | None:
        """The proposal shown, or ``None`` for a read-only change."""
        return self._proposal

    @property
    def editing(self) -> bool:
        """Whether the text taken is being edited."""
        return self.stack.currentWidget() is self.editor

    @property
    def chosen(self) -> list[int]:
        """The numbers (from 1) of the hunks ticked."""
        return [
            hunk.number
            for row, hunk in enumerate(self._hunks)
            if self.hunk_list.item(row).checkState() == Qt.CheckState.Checked
        ]

    @property
    def removes_hand_lines(self) -> bool:
        """Whether a hunk ticked removes (or changes) a line a person wrote."""
        ticked = set(self.chosen)
        return any(h.hand_removed for h in self._hunks if h.number in ticked)

    @property
    def adds_doubtful_lines(self) -> bool:
        """Whether a hunk ticked adds a line held as doubtful (said by no one, only asked
        about, an instruction no one typed, dangerous: ``yak.held.DOUBTFUL``)."""
        if self._proposal is None:
            return False
        doubted = [h for h in self._proposal.held_lines if h.kind in DOUBTFUL]
        ticked = set(self.chosen)
        return any(
            held.names(text)
            for hunk in self._hunks
            if hunk.number in ticked
            for kind, text in hunk.rows
            if kind == "added"
            for held in doubted
        )

    def show_proposal(
        self,
        proposal: Proposal,
        base: str,
        *,
        hand: Collection[int] = (),
        titles: Mapping[str, str] | None = None,
    ) -> None:
        """Show ``proposal``: who proposes it, every reason it waits, why each line it adds
        is there (its evidence, or the reasons naming it), its diff against ``base`` (the
        text of the version it was based on) with one checkable entry per hunk when there are
        several, and Accept, Edit then accept and Reject.

        Args:
            hand: the 0-based numbers of ``base``'s lines a person wrote (from the blame):
                while a hunk ticked removes one, Accept is not the default button.
            titles: the conversations' titles by id, to name where evidence was said.
        """
        self._proposal = proposal
        self._base = base
        self._editable_text = None
        self.trim_button.hide()
        said = why_added(
            added_lines(base, proposal.content),
            proposal.evidence,
            proposal.held_lines,
            titles or {},
        )
        # A reason about a line said beside it under "Why these lines" is said there, once.
        told = {
            held_line_words(held)
            for line, why in said[:EVIDENCE_ROWS]
            for held in proposal.held_lines
            if held.names(line) and held_line_words(held, line_shown=True) in why
        }
        reasons = [reason for reason in proposal_reasons(proposal) if reason not in told]
        self.title_label.setText(review_title(proposal, reasons_listed=bool(reasons)))
        self._show_reasons(reasons)
        self._show_evidence(said)
        self._hunks = hunks(base, proposal.content, hand=hand)
        self._fill_hunk_list()
        self.error_label.clear()
        for button in (self.accept_button, self.edit_button, self.reject_button):
            button.show()
            button.setEnabled(True)
        self.stack.setCurrentWidget(self.diff_view)
        self._update_choice()
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
        self._hunks = []
        self._fill_hunk_list()
        self._editable_text = new if editable else None
        self.trim_button.setVisible(editable)
        self.title_label.setText(title)
        self._show_reasons(reasons)
        self._show_evidence([])
        rows = diff_rows(old, new)
        if rows:
            self.diff_view.show_rows(rows)
        else:
            self.diff_view.show_message("No line changes.")
        self.error_label.clear()
        for button in (self.accept_button, self.edit_button, self.reject_button):
            button.hide()
        self.accept_button.setDefault(False)
        self.stack.setCurrentWidget(self.diff_view)
        self.close_button.setFocus()

    def show_error(self, message: str) -> None:
        """A decision failed (the memory changed meanwhile…): say why; nothing is closed."""
        self.error_label.setText(message)
        for button in (self.edit_button, self.reject_button):
            button.setEnabled(True)
        self._update_choice()

    def show_decided(self, message: str) -> None:
        """The proposal shown was decided elsewhere (another window, ``yak memory accept``):
        say so; nothing is left to click but Close."""
        self.error_label.setText(message)
        for button in (self.accept_button, self.edit_button, self.reject_button):
            button.setEnabled(False)
        self.accept_button.setDefault(False)
        self.hunk_list.setEnabled(False)
        self.close_button.setFocus()

    def start_editing(self) -> None:
        """Make the text taken (the base with the hunks ticked) editable; Accept then accepts
        the edited text."""
        if self._proposal is None or not self.edit_button.isEnabled():
            return
        self.editor.setPlainText(self._taken())
        self.stack.setCurrentWidget(self.editor)
        self.hunk_list.setEnabled(False)
        self._update_choice()
        self.editor.setFocus()

    # --- internals -----------------------------------------------------------------------------
    def _show_reasons(self, reasons: Sequence[str]) -> None:
        self.reasons_label.setText("\n".join(f"• {reason}" for reason in reasons))
        self.reasons_label.setVisible(bool(reasons))

    def _show_evidence(self, said: Sequence[tuple[str, str]]) -> None:
        """``Why these lines:`` then ``"line": why`` per added line, at most
        ``EVIDENCE_ROWS`` of them (then how many more)."""
        rows = [f'• "{shorten(line.strip(), 70)}": {why}' for line, why in said[:EVIDENCE_ROWS]]
        if len(said) > EVIDENCE_ROWS:
            rows.append(f"… and {plural(len(said) - EVIDENCE_ROWS, 'more line')}")
        heading = "Why this line:" if len(said) == 1 else "Why these lines:"
        self.evidence_label.setText("\n".join([heading, *rows]) if rows else "")
        self.evidence_label.setVisible(bool(rows))

    def _fill_hunk_list(self) -> None:
        """One checked entry per hunk; the list shows only when there is a choice to make."""
        self.hunk_list.blockSignals(True)
        self.hunk_list.clear()
        total = len(self._hunks)
        for hunk in self._hunks:
            item = QListWidgetItem(_hunk_words(hunk, total), self.hunk_list)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
        self.hunk_list.blockSignals(False)
        self.hunk_list.setEnabled(True)
        several = total > 1
        self.hunks_label.setVisible(several)
        self.hunk_list.setVisible(several)
        if several:
            row = self.hunk_list.sizeHintForRow(0)
            frame = 2 * self.hunk_list.frameWidth()
            self.hunk_list.setFixedHeight(row * min(total, HUNK_LIST_ROWS) + frame)

    def _taken(self) -> str:
        """The document the hunks ticked make (the proposal itself when all are)."""
        assert self._proposal is not None
        chosen = self.chosen
        if len(chosen) == len(self._hunks):
            return self._proposal.content
        return take(self._base, self._proposal.content, chosen)

    def _update_choice(self) -> None:
        """The diff, Accept's words and whether it is the default, for the hunks ticked."""
        if self._proposal is None:
            return
        chosen, total = self.chosen, len(self._hunks)
        if self.editing:
            self.accept_button.setText("Accept &edited")
        elif total > 1 and len(chosen) < total:
            self.accept_button.setText(f"&Accept {len(chosen)} of {total} changes")
        else:
            self.accept_button.setText("&Accept")
        self.accept_button.setEnabled(self.editing or bool(chosen) or not total)
        self.edit_button.setEnabled(not self.editing)
        # Enter accepts only what is safe to take unread: never a hand line going, nor a
        # line doubted or dangerous (then no button is the default).
        self.accept_button.setDefault(
            not self.removes_hand_lines and not self.adds_doubtful_lines and not self.editing
        )
        if not self.editing:
            self._show_hunks(set(chosen))

    def _show_hunks(self, chosen: set[int]) -> None:
        if not self._hunks:
            self.diff_view.show_message("No line changes.")
            return
        total = len(self._hunks)
        rows: list[tuple[str, str]] = []
        for hunk in self._hunks:
            label = f"change {hunk.number} of {total}" if total > 1 else ""
            if total > 1 and hunk.number not in chosen:
                label += ", left out"
            rows.append(("hunk", f"{hunk.header}  {label}".rstrip()))
            rows += hunk.rows
        self.diff_view.show_rows(rows)

    def _on_hunk_list_item_changed(self, _item: QListWidgetItem) -> None:
        self._update_choice()

    def _on_hunk_list_current_row_changed(self, row: int) -> None:
        """Scroll the diff to the hunk selected in the list."""
        if not 0 <= row < len(self._hunks) or self.editing:
            return
        hunk_rows = 0
        for hunk in self._hunks[:row]:
            hunk_rows += 1 + len(hunk.rows)
        block = self.diff_view.document().findBlockByNumber(hunk_rows)
        cursor = self.diff_view.textCursor()
        cursor.setPosition(block.position())
        self.diff_view.setTextCursor(cursor)
        self.diff_view.centerCursor()

    def _on_accept(self) -> None:
        if self._proposal is None or not self.accept_button.isEnabled():
            return
        if self.editing:
            content: str | None = self.editor.toPlainText()
        elif len(self.chosen) < len(self._hunks):
            content = self._taken()
        else:
            content = None
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


def _hunk_words(hunk: Hunk, total: int) -> str:
    """A hunk's entry in the list: ``Change 2 of 3 (+1 −0): - use ruff``, and a warning when it
    removes a line a person wrote."""
    shown = next((text for kind, text in hunk.rows if kind == "added"), None)
    if shown is None:
        shown = "removes " + next((text for kind, text in hunk.rows if kind == "removed"), "")
    words = f"Change {hunk.number} of {total} (+{hunk.added} −{hunk.removed}): {shorten(shown, 70)}"
    if hunk.hand_removed:
        words += " · removes a line you wrote"
    return words
