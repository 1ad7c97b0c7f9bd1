"""The layout helpers: boxes built in one expression, and a signal blocker that restores."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QSpacerItem, QWidget

from yak.ui.layout import (
    STRETCH,
    blocked_signals,
    create_action,
    create_button,
    create_label,
    hbox,
    vbox,
)


def test_a_box_holds_its_items_in_order_with_their_stretch(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    first, second, third = QLabel(parent), QLabel(parent), QLabel(parent)
    row = hbox(first, STRETCH, (second, 2), (third, 0, Qt.AlignmentFlag.AlignTop), spacing=3)
    column = vbox(row, margins=(1, 2, 3, 4), parent=parent)

    assert parent.layout() is column
    assert column.itemAt(0).layout() is row
    assert column.contentsMargins().left() == 1 and column.contentsMargins().bottom() == 4
    assert row.spacing() == 3
    assert isinstance(row, QHBoxLayout) and row.count() == 4
    assert row.itemAt(0).widget() is first
    assert isinstance(row.itemAt(1), QSpacerItem) and row.stretch(1) == 1
    assert row.itemAt(2).widget() is second and row.stretch(2) == 2
    assert row.itemAt(3).alignment() == Qt.AlignmentFlag.AlignTop


def test_labels_and_buttons_are_made_in_one_call(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    clicks: list[bool] = []
    label = create_label(parent, "<b>x</b>", object_name="note", word_wrap=True, plain_text=True)
    button = create_button("Go", parent, tooltip="Go now", clicked=lambda: clicks.append(True))

    assert label.objectName() == "note" and label.wordWrap()
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert button.text() == "Go" and button.parent() is parent
    assert button.toolTip() == "Go now"
    button.click()
    assert clicks == [True]


def test_blocked_signals_silences_the_widget_then_restores_its_state(qtbot):
    edit = QLineEdit()
    qtbot.addWidget(edit)
    seen: list[str] = []
    edit.textChanged.connect(seen.append)
    with blocked_signals(edit):
        edit.setText("quiet")
    edit.setText("heard")
    assert seen == ["heard"]

    edit.blockSignals(True)
    with blocked_signals(edit):
        pass
    assert edit.signalsBlocked()  # it was blocked before: it stays blocked


def test_shortcuts_from_a_standard_key_a_string_or_a_sequence(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    triggered: list[bool] = []
    opened = create_action(
        "Open", parent, shortcut=QKeySequence.StandardKey.Open, triggered=lambda: None
    )
    quit_action = create_action("Quit", parent, shortcut="Ctrl+Q", triggered=lambda: None)
    toggle = create_action(
        "Toggle",
        parent,
        shortcut=QKeySequence("Ctrl+Shift+M"),
        triggered=lambda: triggered.append(True),
    )

    primary = QKeySequence.keyBindings(QKeySequence.StandardKey.Open)[0]
    assert opened.shortcuts() == [primary]
    assert quit_action.shortcut().toString() == "Ctrl+Q"
    assert toggle.shortcut().toString() == "Ctrl+Shift+M"
    toggle.trigger()
    assert triggered == [True]
