"""DiffView: a read-only monospace view of a line diff, coloured like a code review.

Added lines have a green background, removed lines a red one, hunk headers are grey, and each
line carries a ``+`` / ``−`` marker followed by a space, so a document's own dashes
(``- note 5``) never run into the marker. The rows come from
:func:`yak.linediff.diff_rows`; the text is inserted as plain text, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFontDatabase,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QPlainTextEdit, QWidget

# kind -> (marker, background, text colour or None)
ROW_STYLES = {
    "added": ("+ ", "#dafbe1", None),
    "removed": ("− ", "#ffebe9", None),
    "hunk": ("", "#eaeef2", "#57606a"),
    "context": ("  ", None, None),
}


class DiffView(QPlainTextEdit):
    """A coloured, read-only line diff (or a plain message when there is nothing to compare)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)

    def show_rows(self, rows: Sequence[tuple[str, str]]) -> None:
        """Show diff rows (``(kind, text)`` from ``diff_rows``), one coloured line each."""
        self.clear()
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        for number, (kind, text) in enumerate(rows):
            marker, background, foreground = ROW_STYLES[kind]
            block = QTextBlockFormat()
            if background:
                block.setBackground(QBrush(QColor(background)))
            chars = QTextCharFormat()
            if foreground:
                chars.setForeground(QBrush(QColor(foreground)))
            if number == 0:
                cursor.setBlockFormat(block)
                cursor.setBlockCharFormat(chars)
            else:
                cursor.insertBlock(block, chars)
            cursor.insertText(marker + text, chars)
        cursor.endEditBlock()
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def show_message(self, text: str) -> None:
        """Show ``text`` as is, uncoloured (no revisions yet, the same text…)."""
        self.setPlainText(text)

    def rows(self) -> list[tuple[str, str | None]]:
        """What is shown: each line as displayed with its background colour (``"#dafbe1"``),
        or ``None`` when it has none."""
        shown = []
        block = self.document().firstBlock()
        while block.isValid():
            brush = block.blockFormat().background()
            colour = None if brush.style() == Qt.BrushStyle.NoBrush else brush.color().name()
            shown.append((block.text(), colour))
            block = block.next()
        return shown
