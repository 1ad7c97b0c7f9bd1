"""Small helpers for the widgets' ``_setup_ui`` (the idea of git-cola's ``qtutils``).

``vbox(title, hbox(STRETCH, ok, cancel), margins=0)`` builds the layouts in one expression: each
item is a widget, a layout, :data:`STRETCH` (a stretch of factor 1), or ``(item, stretch)`` /
``(widget, stretch, alignment)``. :func:`create_label`, :func:`create_button` and
:func:`create_action` make the usual labels, push buttons and actions in one call, and ``with
blocked_signals(widget):`` silences a widget while the code fills it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from PySide6.QtCore import QObject, Qt, SignalInstance
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QBoxLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class _Stretch:
    """The type of :data:`STRETCH`."""

    def __repr__(self) -> str:
        return "STRETCH"


STRETCH = _Stretch()
"""A layout item: a stretch of factor 1 (``addStretch(1)``)."""

LayoutItem = (
    QWidget
    | QLayout
    | _Stretch
    | tuple[QWidget | QLayout, int]
    | tuple[QWidget, int, Qt.AlignmentFlag]
)
Margins = int | tuple[int, int, int, int]

_Box = TypeVar("_Box", bound=QBoxLayout)


def hbox(
    *items: LayoutItem,
    margins: Margins | None = None,
    spacing: int | None = None,
    parent: QWidget | None = None,
) -> QHBoxLayout:
    """A horizontal layout holding ``items`` from left to right.

    Args:
        items: widgets, layouts, :data:`STRETCH`, ``(item, stretch)`` or
            ``(widget, stretch, alignment)``.
        margins: the contents margins in pixels, all four or (left, top, right, bottom);
            ``None`` keeps the style's.
        spacing: the space between items in pixels; ``None`` keeps the style's.
        parent: the widget the layout is set on, if any.
    """
    layout = QHBoxLayout() if parent is None else QHBoxLayout(parent)
    return _fill(layout, items, margins, spacing)


def vbox(
    *items: LayoutItem,
    margins: Margins | None = None,
    spacing: int | None = None,
    parent: QWidget | None = None,
) -> QVBoxLayout:
    """A vertical layout holding ``items`` from top to bottom (arguments as :func:`hbox`)."""
    layout = QVBoxLayout() if parent is None else QVBoxLayout(parent)
    return _fill(layout, items, margins, spacing)


def add_items(layout: QBoxLayout, *items: LayoutItem) -> None:
    """Append ``items`` (as :func:`hbox` takes them) to ``layout``."""
    for item in items:
        if isinstance(item, _Stretch):
            layout.addStretch(1)
        elif isinstance(item, tuple):
            if len(item) == 3:
                widget, stretch, alignment = item
                layout.addWidget(widget, stretch, alignment)
            elif isinstance(item[0], QLayout):
                layout.addLayout(item[0], item[1])
            else:
                layout.addWidget(item[0], item[1])
        elif isinstance(item, QLayout):
            layout.addLayout(item)
        else:
            layout.addWidget(item)


def _fill(
    layout: _Box, items: tuple[LayoutItem, ...], margins: Margins | None, spacing: int | None
) -> _Box:
    if margins is not None:
        left, top, right, bottom = (margins,) * 4 if isinstance(margins, int) else margins
        layout.setContentsMargins(left, top, right, bottom)
    if spacing is not None:
        layout.setSpacing(spacing)
    add_items(layout, *items)
    return layout


def create_label(
    parent: QWidget,
    text: str = "",
    *,
    object_name: str = "",
    word_wrap: bool = False,
    selectable: bool = False,
    plain_text: bool = False,
) -> QLabel:
    """A label child of ``parent``.

    Args:
        object_name: its object name (tests and style sheets find it by that).
        word_wrap: wrap long text over several lines.
        selectable: let the user select and copy the text with the mouse.
        plain_text: never interpret the text as rich text.
    """
    widget = QLabel(text, parent)
    if object_name:
        widget.setObjectName(object_name)
    if word_wrap:
        widget.setWordWrap(True)
    if plain_text:
        widget.setTextFormat(Qt.TextFormat.PlainText)
    if selectable:
        widget.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return widget


def create_button(
    text: str,
    parent: QWidget,
    *,
    tooltip: str = "",
    clicked: Callable[[], object] | SignalInstance | None = None,
    auto_default: bool | None = None,
) -> QPushButton:
    """A push button child of ``parent``.

    Args:
        tooltip: its tooltip, if any.
        clicked: called (or emitted) when it is clicked.
        auto_default: whether Enter in a dialog presses it (``None`` keeps Qt's default,
            which is on in a dialog and off elsewhere).
    """
    widget = QPushButton(text, parent)
    if tooltip:
        widget.setToolTip(tooltip)
    if auto_default is not None:
        widget.setAutoDefault(auto_default)
    if clicked is not None:
        widget.clicked.connect(clicked)
    return widget


def create_action(
    text: str,
    parent: QObject,
    *,
    triggered: Callable[[], object] | SignalInstance,
    shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
    role: QAction.MenuRole | None = None,
) -> QAction:
    """An action child of ``parent`` (for a menu or a widget).

    Args:
        triggered: called (or emitted) when it is triggered.
        shortcut: its key sequence, if any (a standard key: its platform's primary binding).
        role: its menu role on macOS (Preferences, Quit, About), if any.
    """
    action = QAction(text, parent)
    if shortcut is not None:
        action.setShortcut(shortcut)
    if role is not None:
        action.setMenuRole(role)
    action.triggered.connect(triggered)
    return action


@contextmanager
def blocked_signals(obj: QObject) -> Iterator[QObject]:
    """Block ``obj``'s signals inside the ``with`` block, then restore what was before (as
    ``QSignalBlocker`` does)."""
    was_blocked = obj.blockSignals(True)
    try:
        yield obj
    finally:
        obj.blockSignals(was_blocked)
