"""The window's colours for the colour names of ``yak.presenters`` (one place, so a state has
one colour on every widget)."""

from __future__ import annotations

from PySide6.QtGui import QColor

from yak.presenters import Colour

__all__ = ["colour_hex", "qcolor", "text_style"]

_HEX = {
    Colour.ALARM: "#b00020",
    Colour.WARNING: "#b35c00",
    Colour.BUSY: "#1a5fb4",
    Colour.MUTED: "#8a8a8a",
}


def colour_hex(colour: Colour) -> str:
    """``colour`` as ``#rrggbb`` (for style sheets and rich text)."""
    return _HEX[colour]


def qcolor(colour: Colour) -> QColor:
    """``colour`` as a ``QColor`` (for a model's foreground role)."""
    return QColor(_HEX[colour])


def text_style(colour: Colour | None, extra: str = "") -> str:
    """A style sheet giving a label's text ``colour`` (and ``extra`` declarations), or ``""``
    for the normal text colour."""
    return f"color: {_HEX[colour]};{extra}" if colour is not None else ""
