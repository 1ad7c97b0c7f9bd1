"""Non-blocking message boxes and file dialogs.

Every dialog here is opened with ``open()`` (window-modal, no nested event loop), and its answer
arrives through a callback. The asyncio loop keeps running while a dialog is up, and tests can
find the dialog and click its buttons.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QFileDialog, QMessageBox, QWidget

Choice = tuple[str, QMessageBox.ButtonRole]


def ask(
    parent: QWidget,
    *,
    title: str,
    text: str,
    choices: Sequence[Choice],
    on_answer: Callable[[str | None], None],
    informative: str = "",
    default: str | None = None,
    icon: QMessageBox.Icon = QMessageBox.Icon.Question,
) -> QMessageBox:
    """Show a window-modal question and call ``on_answer(label)`` with the chosen button's label
    (``None`` when closed with Esc and no reject button exists).

    Args:
        choices: button labels with their roles, in order; the ``RejectRole`` one answers Esc.
        default: the label of the default button.
    """
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.NoButton, parent)
    box.setObjectName("yakQuestion")
    if informative:
        box.setInformativeText(informative)
    buttons: dict[QAbstractButton, str] = {}  # button -> its label
    for label, role in choices:
        button = box.addButton(label, role)
        buttons[button] = label
        if label == default:
            box.setDefaultButton(button)
        if role == QMessageBox.ButtonRole.RejectRole:
            box.setEscapeButton(button)

    def finished(_result: int) -> None:
        clicked = box.clickedButton()
        box.deleteLater()
        on_answer(buttons.get(clicked))

    box.finished.connect(finished)
    box.open()
    return box


def confirm(
    parent: QWidget,
    *,
    title: str,
    text: str,
    action: str,
    on_answer: Callable[[bool], None],
    informative: str = "",
    icon: QMessageBox.Icon = QMessageBox.Icon.Warning,
) -> QMessageBox:
    """Ask before something that drops or overwrites data: ``action`` (its button's label) or
    Cancel, the default, which Esc also answers; ``on_answer(True)`` when ``action`` was chosen.
    """
    return ask(
        parent,
        title=title,
        text=text,
        informative=informative,
        choices=[
            (action, QMessageBox.ButtonRole.DestructiveRole),
            ("Cancel", QMessageBox.ButtonRole.RejectRole),
        ],
        default="Cancel",
        icon=icon,
        on_answer=lambda label: on_answer(label == action),
    )


def inform(
    parent: QWidget,
    *,
    title: str,
    text: str,
    icon: QMessageBox.Icon = QMessageBox.Icon.Warning,
    on_close: Callable[[], None] | None = None,
    informative: str = "",
    selectable: bool = False,
) -> QMessageBox:
    """Show a window-modal message with an OK button (non-blocking).

    Args:
        informative: a second paragraph under ``text``.
        selectable: let the user select and copy the text (paths, versions).
    """
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("yakMessage")
    if informative:
        box.setInformativeText(informative)
    if selectable:
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def finished(_result: int) -> None:
        box.deleteLater()
        if on_close is not None:
            on_close()

    box.finished.connect(finished)
    box.open()
    return box


def choose_directory(
    parent: QWidget, *, title: str, start: str, on_chosen: Callable[[str], None]
) -> QFileDialog:
    """Ask for an existing folder (the platform's native dialog where there is one)."""
    dialog = _file_dialog(parent, title, start, "yakFolderDialog", QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    _open(dialog, lambda: on_chosen(dialog.selectedFiles()[0]))
    return dialog


def choose_open_file(
    parent: QWidget,
    *,
    title: str,
    start: str,
    name_filters: Sequence[str],
    on_chosen: Callable[[str], None],
) -> QFileDialog:
    """Ask for an existing file to read."""
    dialog = _file_dialog(
        parent, title, start, "yakOpenFileDialog", QFileDialog.FileMode.ExistingFile
    )
    dialog.setNameFilters(list(name_filters))
    _open(dialog, lambda: on_chosen(dialog.selectedFiles()[0]))
    return dialog


def choose_save_file(
    parent: QWidget,
    *,
    title: str,
    start: str,
    name_filters: Sequence[tuple[str, str]],
    on_chosen: Callable[[str, str], None],
) -> QFileDialog:
    """Ask where to save, with a format choice; the dialog itself confirms an overwrite.

    Args:
        start: the proposed file (its folder is where the dialog opens).
        name_filters: ``(filter, suffix)`` pairs, e.g. ``("Markdown (*.md)", "md")``; the first
            is selected.
        on_chosen: called with the path and the chosen filter (one of ``name_filters``').
    """
    folder, name = os.path.split(start)
    dialog = _file_dialog(parent, title, folder, "yakSaveFileDialog", QFileDialog.FileMode.AnyFile)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    if name:
        dialog.selectFile(name)
    filters = [f for f, _ in name_filters]
    suffixes = {f: s for f, s in name_filters}
    dialog.setNameFilters(filters)
    dialog.selectNameFilter(filters[0])
    dialog.setDefaultSuffix(suffixes[filters[0]])
    dialog.filterSelected.connect(lambda f: dialog.setDefaultSuffix(suffixes.get(f, "")))
    _open(dialog, lambda: on_chosen(dialog.selectedFiles()[0], dialog.selectedNameFilter()))
    return dialog


def _file_dialog(
    parent: QWidget, title: str, start: str, object_name: str, mode: QFileDialog.FileMode
) -> QFileDialog:
    dialog = QFileDialog(parent, title, start)
    dialog.setObjectName(object_name)
    dialog.setFileMode(mode)
    return dialog


def _open(dialog: QFileDialog, on_accepted: Callable[[], None]) -> None:
    def finished(result: int) -> None:
        dialog.deleteLater()
        if result == QFileDialog.DialogCode.Accepted and dialog.selectedFiles():
            on_accepted()

    dialog.finished.connect(finished)
    dialog.open()
