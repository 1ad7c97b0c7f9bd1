"""The Provider page's field widgets, one per setting, each marking the page changed when
edited, and what the API key field says for where the key is.

Qt widgets without the page: :class:`~yak.ui.settings.provider_page.ProviderPage` lays them out
and reads their values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox, QWidget

from yak.agent.sandbox import AUTO, BUBBLEWRAP, LANDLOCK, NONE
from yak.config import MAX_CONTEXT_WINDOW
from yak.refresh.context import ANTHROPIC_CONTEXT_WINDOW

KEY_ENV = "ANTHROPIC_API_KEY"
SANDBOX_CHOICES = (
    (AUTO, "Sandboxed (Landlock, else bubblewrap)"),
    (LANDLOCK, "Sandboxed with Landlock"),
    (BUBBLEWRAP, "Sandboxed with bubblewrap"),
    (NONE, "No sandbox (unconfined)"),
)
# The values of ``yak.config.MEMORY_FORMS``, as the combo box names them.
MEMORY_FORM_CHOICES = (
    ("auto", "Automatic — a tool call where the endpoint supports it"),
    ("tool", "Tool call"),
    ("edits", "Edits"),
    ("whole", "Whole document"),
)
NO_KEYRING_NOTE = (
    "No key yet, and this system has no usable keyring to store one: tick “Use for this "
    f"session only” to use a key until Yak quits, or set {KEY_ENV} before starting Yak."
)
UNKNOWN_SOURCE = "unknown"  # where the key is, before the settings service has answered
_TYPE_A_KEY = "Paste your Anthropic API key (sk-ant-…)"

Edited = Callable[..., object]


def line_field(
    parent: QWidget, object_name: str, *, edited: Edited, tooltip: str = ""
) -> QLineEdit:
    """A line edit for one setting; editing it calls ``edited``."""
    edit = QLineEdit(parent)
    edit.setObjectName(object_name)
    if tooltip:
        edit.setToolTip(tooltip)
    edit.textEdited.connect(edited)
    return edit


def seconds_spin(
    parent: QWidget,
    object_name: str,
    *,
    low: float,
    high: float,
    step: float,
    tooltip: str,
    edited: Edited,
) -> QDoubleSpinBox:
    """A whole number of seconds between ``low`` and ``high``."""
    spin = QDoubleSpinBox(parent)
    spin.setObjectName(object_name)
    spin.setRange(low, high)
    spin.setDecimals(0)
    spin.setSingleStep(step)
    spin.setSuffix(" s")
    spin.setToolTip(tooltip)
    spin.valueChanged.connect(edited)
    return spin


def context_window_spin(parent: QWidget, *, edited: Edited) -> QSpinBox:
    """The memory model's context window in tokens; 0 shows as automatic."""
    spin = QSpinBox(parent)
    spin.setObjectName("memory_context_window")
    spin.setRange(0, MAX_CONTEXT_WINDOW)
    spin.setSingleStep(1024)
    spin.setGroupSeparatorShown(True)
    spin.setSuffix(" tokens")
    spin.setSpecialValueText("Automatic")
    spin.setToolTip(
        "How many tokens the memory model's server holds (for a local server, its context "
        "size); a refresh request that cannot fit, with room for the reply, is not sent. "
        f"Automatic: {ANTHROPIC_CONTEXT_WINDOW:,} for Claude models, unchecked for others"
    )
    spin.valueChanged.connect(edited)
    return spin


def choice_combo(
    parent: QWidget,
    object_name: str,
    choices: Sequence[tuple[str, str]],
    *,
    tooltip: str,
    edited: Edited,
) -> QComboBox:
    """A combo box of ``(value, label)`` choices, the value as each item's data."""
    combo = QComboBox(parent)
    combo.setObjectName(object_name)
    for value, label in choices:
        combo.addItem(label, value)
    combo.setToolTip(tooltip)
    combo.currentIndexChanged.connect(edited)
    return combo


def key_field_words(source: str | None, *, keyring_usable: bool) -> tuple[str, str]:
    """``(placeholder, note)`` of the API key field when the key comes from ``source``:
    ``"environment"``, ``"session"`` (this run only), ``"keyring"``, ``None`` (no key) or
    :data:`UNKNOWN_SOURCE` (not read yet: nothing is said about it)."""
    if source == "environment":
        return (
            f"Set by the {KEY_ENV} environment variable",
            f"The key comes from the {KEY_ENV} environment variable; "
            "change or unset it there to use another key.",
        )
    if source == "session":
        return (
            "A key is in use; type a new one to replace it",
            "Used for this session only: kept in memory, never saved; Yak forgets it when it "
            "quits.",
        )
    if source == "keyring":
        return (
            "A key is stored; type a new one to replace it",
            "Stored in the system keyring, never in Yak's database or settings file.",
        )
    if source == UNKNOWN_SOURCE:
        return _TYPE_A_KEY, ""
    if keyring_usable:
        return (
            _TYPE_A_KEY,
            "No key yet. It will be stored in the system keyring, never in Yak's database or "
            "settings file.",
        )
    return _TYPE_A_KEY, NO_KEYRING_NOTE
