"""ImportPreviewDialog: what an Import… would change, shown before anything is replaced.

The dialog shows the line diff from the stored document to the file's text (the same coloured
view as History's) and asks: Replace the memory, or Cancel (the default, and Esc). It is opened
window-modal with ``open()`` and reports the answer through a callback, like ``yak.ui.dialogs``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QWidget

from yak.linediff import diff_rows, line_changes
from yak.ui.diff_view import DiffView
from yak.ui.layout import create_label, vbox

REPLACE = "Replace the memory"


class ImportPreviewDialog(QDialog):
    """The diff an import would make, with Replace the memory and Cancel.

    Args:
        parent: the window it is modal to.
        name: the imported file's name (for the title and the summary).
        current: the stored document's text.
        imported: the text the file imports as.
        version: the stored version the import would replace.
    """

    def __init__(
        self, parent: QWidget, *, name: str, current: str, imported: str, version: int
    ) -> None:
        super().__init__(parent)
        self.setObjectName("yakImportPreview")
        self.setWindowTitle(f"Import {name}")
        self._setup_ui(name=name, current=current, imported=imported, version=version)

    def _setup_ui(self, *, name: str, current: str, imported: str, version: int) -> None:
        added, removed = line_changes(current, imported)
        self.summary_label = create_label(
            self,
            f"Importing {name} replaces version {version} of the memory: "
            f"+{added} −{removed} lines. History keeps the version replaced.",
            word_wrap=True,
            plain_text=True,
        )
        self.diff_view = DiffView(self)
        self.diff_view.show_rows(diff_rows(current, imported))
        self.buttons = QDialogButtonBox(self)
        self.replace_button = self.buttons.addButton(
            REPLACE, QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.replace_button.setAutoDefault(False)
        self.cancel_button.setDefault(True)  # replacing is never what Enter does
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.setLayout(vbox(self.summary_label, self.diff_view, self.buttons))
        self.resize(640, 420)


def preview_import(
    parent: QWidget,
    *,
    name: str,
    current: str,
    imported: str,
    version: int,
    on_answer: Callable[[bool], None],
) -> ImportPreviewDialog:
    """Open an :class:`ImportPreviewDialog` window-modal; ``on_answer(True)`` when the person
    chose Replace the memory, ``on_answer(False)`` on Cancel, Esc or closing it."""
    dialog = ImportPreviewDialog(
        parent, name=name, current=current, imported=imported, version=version
    )

    def finished(result: int) -> None:
        dialog.deleteLater()
        on_answer(result == QDialog.DialogCode.Accepted)

    dialog.finished.connect(finished)
    dialog.open()
    return dialog
