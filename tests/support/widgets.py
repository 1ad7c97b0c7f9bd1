"""What a user reads in a window, and a window brought to rest: the helpers the UI tests share."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QWidget

_ROUNDS = 10  # a posted event may post another (a layout request, then a resize): deliver each


def deliver_posted_events() -> None:
    """Deliver the events Qt has queued (layout requests, zero-delay timers, queued calls) and
    those they queue in turn: the window is idle after it, so a test may assert that
    something did not happen without waiting a fixed time."""
    for _ in range(_ROUNDS):
        QApplication.processEvents()


def shown_texts(window: QWidget) -> list[str]:
    """The texts of the visible, non-empty labels in ``window``, as a user reads them (rich
    text as plain), in the order Qt finds them."""
    texts = []
    for label in window.findChildren(QLabel):
        if label.isVisible() and label.text():
            document = QTextDocument()
            if label.textFormat() == Qt.TextFormat.RichText:
                document.setHtml(label.text())
            else:
                document.setPlainText(label.text())
            texts.append(document.toPlainText())
    return texts
