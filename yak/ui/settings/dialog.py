"""SettingsDialog: a list of pages on the left and the chosen page on the right.

Pages are added with :meth:`SettingsDialog.add_page` (the Memory page here; the chat UI adds its
Provider page). A page that can hold unsaved edits implements ``has_unsaved_changes() -> bool``
and ``resolve_unsaved(then)``: it asks Save / Discard / Cancel and calls ``then()`` once the edits
are saved or discarded. Closing the dialog goes through that guard, so nothing typed is lost.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QListWidget,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)


class SettingsDialog(QDialog):
    """Yak's settings, one page per topic; non-modal, opened with Ctrl+,."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._titles: list[str] = []
        self._closing = False
        self._setup_ui()

    def _setup_ui(self) -> None:
        self.setWindowTitle("Yak Settings")
        self.setObjectName("settingsDialog")
        self.resize(1000, 680)
        layout = QVBoxLayout(self)
        body = QHBoxLayout()
        self.pages_list = QListWidget(self)
        self.pages_list.setObjectName("settingsPages")
        self.pages_list.setFixedWidth(110)
        self.stack = QStackedWidget(self)
        self.pages_list.currentRowChanged.connect(self.stack.setCurrentIndex)
        body.addWidget(self.pages_list)
        body.addWidget(self.stack, 1)
        layout.addLayout(body, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def add_page(self, title: str, page: QWidget) -> int:
        """Add ``page`` under ``title`` (shown in the list); returns its index."""
        self._titles.append(title)
        self.pages_list.addItem(title)
        index = self.stack.addWidget(page)
        if self.pages_list.currentRow() < 0:
            self.pages_list.setCurrentRow(0)
        return index

    def page(self, title: str) -> QWidget | None:
        """The page added under ``title``, or ``None``."""
        if title not in self._titles:
            return None
        return self.stack.widget(self._titles.index(title))

    def show_page(self, title: str) -> None:
        """Show the dialog on the page ``title`` and bring it to the front."""
        if title in self._titles:
            self.pages_list.setCurrentRow(self._titles.index(title))
        self.show()
        self.raise_()
        self.activateWindow()

    def has_unsaved_changes(self) -> bool:
        """Whether any page holds unsaved edits."""
        return any(self._unsaved_pages())

    def confirm_close(self, then: Callable[[], None]) -> bool:
        """Close the dialog unless a page holds unsaved edits; then that page asks Save /
        Discard / Cancel first (showing itself), and ``then()`` runs after the dialog closed.

        Returns:
            ``True`` when the dialog closed at once (``then`` was called).
        """
        pages = self._unsaved_pages()
        if not pages:
            self._close_now()
            then()
            return True
        page = pages[0]
        self.stack.setCurrentWidget(page)
        self.pages_list.setCurrentRow(self.stack.indexOf(page))
        self.show()
        self.raise_()

        def resolved() -> None:
            self.confirm_close(then)

        page.resolve_unsaved(resolved)  # type: ignore[attr-defined]
        return False

    def _unsaved_pages(self) -> list[QWidget]:
        pages = [self.stack.widget(i) for i in range(self.stack.count())]
        return [
            p
            for p in pages
            if callable(getattr(p, "has_unsaved_changes", None)) and p.has_unsaved_changes()
        ]

    def _close_now(self) -> None:
        self._closing = True
        try:
            super().reject()
        finally:
            self._closing = False

    def reject(self) -> None:
        """Close (Esc, the Close button, the window's X), guarded against losing edits."""
        if self._closing:
            super().reject()
            return
        self.confirm_close(lambda: None)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closing or not self.has_unsaved_changes():
            super().closeEvent(event)
            return
        event.ignore()
        self.confirm_close(lambda: None)
