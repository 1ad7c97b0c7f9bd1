"""SettingsDialog: a list of pages on the left and the chosen page on the right.

Pages are :class:`yak.ui.settings.page.SettingsPage` widgets, added with
:meth:`SettingsDialog.add_page` (the app controller adds Memory and Provider).
Closing the dialog goes through the pages' guard: a page with unsaved edits
(``has_unsaved_changes()``) is shown and asks what to do with them (``resolve_unsaved(then)``),
so nothing typed is lost.
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

from yak.ui.settings.page import SettingsPage

PAGES_MIN_WIDTH_PX = 60  # the list of pages on the left
PAGES_PADDING_PX = 24  # its frame and item margins


class SettingsDialog(QDialog):
    """Yak's settings, one page per topic; non-modal, opened with Ctrl+,."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._titles: list[str] = []
        self._pages: list[SettingsPage] = []  # in the order of the list, like _titles
        self._closing = False
        self._setup_ui()

    def _setup_ui(self) -> None:
        self.setWindowTitle("Yak Settings")
        self.setObjectName("settingsDialog")
        self.resize(900, 680)  # fits a small screen; every page fits this width
        layout = QVBoxLayout(self)
        body = QHBoxLayout()
        self.pages_list = QListWidget(self)
        self.pages_list.setObjectName("settingsPages")
        self.pages_list.setFixedWidth(PAGES_MIN_WIDTH_PX)  # widened to fit titles (add_page)
        self.stack = QStackedWidget(self)
        self.pages_list.currentRowChanged.connect(self.stack.setCurrentIndex)
        body.addWidget(self.pages_list)
        body.addWidget(self.stack, 1)
        layout.addLayout(body, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def add_page(self, title: str, page: SettingsPage) -> int:
        """Add ``page`` under ``title`` (shown in the list); returns its index."""
        self._titles.append(title)
        self._pages.append(page)
        self.pages_list.addItem(title)
        # As wide as the longest title, and no wider: the pages keep the rest.
        widest = max(self.pages_list.fontMetrics().horizontalAdvance(t) for t in self._titles)
        self.pages_list.setFixedWidth(max(PAGES_MIN_WIDTH_PX, widest + PAGES_PADDING_PX))
        index = self.stack.addWidget(page)
        if self.pages_list.currentRow() < 0:
            self.pages_list.setCurrentRow(0)
        return index

    def page(self, title: str) -> SettingsPage | None:
        """The page added under ``title``, or ``None``."""
        if title not in self._titles:
            return None
        return self._pages[self._titles.index(title)]

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

    def confirm_close(self, then: Callable[[], object]) -> bool:
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

        page.resolve_unsaved(resolved)
        return False

    def _unsaved_pages(self) -> list[SettingsPage]:
        return [page for page in self._pages if page.has_unsaved_changes()]

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
