"""The bar above the chat that offers a folder a memory found elsewhere ("Scopes" in
docs/workspaces.md): the enclosing workspace's ("Use the parent's memory", "Copy it here",
Dismiss), the memory of the folder this one looks like before a rename ("Use it", "Not this
one"), or a git worktree's main checkout's ("Share its memory", Dismiss).

It only shows the offer and emits what the person chose; the app controller acts on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QWidget

from yak.text import plural
from yak.ui.layout import create_button, create_label, hbox

if TYPE_CHECKING:  # the window is painted before the domain is imported (start-up time)
    from yak.domain import MemorySummary, Workspace


class ScopeNotice(QFrame):
    """A one-offer bar, hidden until :meth:`show_enclosing` or :meth:`show_renamed`.

    Signals:
        use_enclosing_requested(str): the enclosing workspace's path (work there instead).
        copy_enclosing_requested(str): the enclosing workspace's id (copy its document here).
        reattach_requested(str): the orphan's id (move its memory here).
        rename_declined(str): the orphan's id (it is not this folder's predecessor).
        link_requested(str): the main checkout's path (share its document from now on).
        dismissed(): the offer was put aside for now.
    """

    use_enclosing_requested = Signal(str)
    copy_enclosing_requested = Signal(str)
    reattach_requested = Signal(str)
    rename_declined = Signal(str)
    link_requested = Signal(str)
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.offer: MemorySummary | None = None
        self.kind = ""  # "enclosing", "renamed" or "worktree" while an offer shows
        self._setup_ui()
        self.hide()

    def _setup_ui(self) -> None:
        self.setObjectName("scopeNotice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.text_label = create_label(
            self, object_name="scopeNoticeText", word_wrap=True, plain_text=True
        )
        self.use_button = create_button("", self, clicked=self._on_use_button_clicked)
        self.second_button = create_button("", self, clicked=self._on_second_button_clicked)
        self.dismiss_button = create_button(
            "Dismiss", self, tooltip="Hide this for now", clicked=self._on_dismiss_button_clicked
        )
        hbox(
            (self.text_label, 1),
            self.use_button,
            self.second_button,
            self.dismiss_button,
            margins=(8, 4, 8, 4),
            parent=self,
        )

    def show_enclosing(self, workspace: Workspace, enclosing: MemorySummary) -> None:
        """Offer the memory of ``enclosing``, the workspace above ``workspace``."""
        self.offer, self.kind = enclosing, "enclosing"
        parent = enclosing.workspace
        self.text_label.setText(
            f"{workspace.name} has no memory of its own. The enclosing workspace {parent.name} "
            f"({parent.path}) has a memory of {plural(enclosing.lines, 'line')}."
        )
        self.use_button.setText("Use the parent's memory")
        self.use_button.setToolTip(
            f"Work in {parent.path}: its memory, conversations and refreshes"
        )
        self.second_button.setText("Copy it here")
        self.second_button.show()
        self.second_button.setToolTip(
            f"Start {workspace.name}'s own memory as a copy of {parent.name}'s"
        )
        self.dismiss_button.show()
        self.show()

    def show_renamed(self, orphan: MemorySummary) -> None:
        """Offer the memory of ``orphan``, a workspace whose folder is gone and that looks like
        this folder before a rename."""
        self.offer, self.kind = orphan, "renamed"
        self.text_label.setText(
            f"This folder looks like {orphan.workspace.path}, which no longer exists and has a "
            f"memory of {plural(orphan.lines, 'line')} — use it?"
        )
        self.use_button.setText("Use it")
        self.use_button.setToolTip("Move that memory, its history and conversations here")
        self.second_button.setText("Not this one")
        self.second_button.show()
        self.second_button.setToolTip("Do not offer it for this folder again")
        self.dismiss_button.hide()
        self.show()

    def show_worktree(self, main: MemorySummary) -> None:
        """Offer the memory of ``main``, the main checkout of the git worktree shown."""
        self.offer, self.kind = main, "worktree"
        self.text_label.setText(
            f"This folder is a git worktree of {main.workspace.path}, whose memory has "
            f"{plural(main.lines, 'line')} — share it here?"
        )
        self.use_button.setText("Share its memory")
        self.use_button.setToolTip(
            "This worktree reads and updates that document from now on (yak memory unlink "
            "ends it); conversations stay here"
        )
        self.second_button.hide()
        self.dismiss_button.show()
        self.show()

    def clear(self) -> None:
        """Hide the bar; no offer."""
        self.offer, self.kind = None, ""
        self.hide()

    def _on_use_button_clicked(self) -> None:
        offer, kind = self.offer, self.kind
        if offer is None:
            return
        self.clear()
        if kind == "enclosing":
            self.use_enclosing_requested.emit(offer.workspace.path)
        elif kind == "worktree":
            self.link_requested.emit(offer.workspace.path)
        else:
            self.reattach_requested.emit(offer.workspace.id)

    def _on_second_button_clicked(self) -> None:
        offer, kind = self.offer, self.kind
        if offer is None:
            return
        self.clear()
        if kind == "enclosing":
            self.copy_enclosing_requested.emit(offer.workspace.id)
        else:
            self.rename_declined.emit(offer.workspace.id)

    def _on_dismiss_button_clicked(self) -> None:
        self.clear()
        self.dismissed.emit()
