"""SettingsPage: what every page of the Settings dialog offers (Frescobaldi's preferences.Page).

A page shows the settings of one topic. ``load()`` fills it from what is stored, dropping edits;
``apply()`` stores the edits; ``has_unsaved_changes()`` says whether some are not stored yet,
and ``changed`` is emitted whenever that may have changed (an edit, an apply, a load).
``resolve_unsaved(then)`` is the close guard: it asks the user what to do with the edits
(without blocking the event loop) and calls ``then()`` once they are stored or dropped, never
after Cancel. :class:`yak.ui.settings.dialog.SettingsDialog` talks to its pages through these
alone.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget


class SettingsPage(QWidget):
    """A page of the Settings dialog. The base is a page with nothing to edit; pages override
    what they need.

    Attributes:
        title: the page's name in the dialog's list (e.g. ``"Memory"``).

    Signals:
        changed(): the page's edits changed (typed, applied, reverted or loaded).
    """

    changed = Signal()

    title = ""

    def load(self) -> None:
        """Fill the page from what is stored, dropping unsaved edits."""

    def apply(self) -> None:
        """Store the page's edits."""

    def has_unsaved_changes(self) -> bool:
        """Whether the page holds edits that are not stored yet."""
        return False

    def resolve_unsaved(self, then: Callable[[], object]) -> QWidget | None:
        """Ask what to do with unsaved edits, then call ``then()`` once they are stored or
        dropped (not on Cancel). Without edits, ``then()`` runs at once.

        Returns:
            The question shown, if the page shows one it can hand back.
        """
        then()
        return None
