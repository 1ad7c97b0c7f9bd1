"""Asking the user before the agent writes, edits or runs something.

The dialog shows the tool, its target and the detail (the new text, a diff, the command) in
monospace, with Allow once (Alt+A) / Allow for this session (Alt+S) / Deny (Alt+D). Deny is the
default button and Esc (or closing the window) denies: a stray Enter never allows anything. The
approver coroutine shows the dialog with ``open()`` and awaits a future, so the event loop keeps
running while the user reads; cancelling it (Stop) closes the dialog.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from yak.agent.types import ApprovalDecision, ApprovalRequest, Approver

_TITLES = {
    "write_file": "Write a file?",
    "edit_file": "Edit a file?",
    "run_command": "Run a command?",
    "bash": "Run a command?",
    "shell": "Run a command?",
}


class ApprovalDialog(QDialog):
    """Asks whether the agent may run one mutating tool call.

    ``decision`` is ``DENY`` until the user picks something else.

    Args:
        request: the tool call waiting for the user.
    """

    def __init__(self, request: ApprovalRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self.decision = ApprovalDecision.DENY
        self._setup_ui()

    def _setup_ui(self) -> None:
        request = self.request
        self.setObjectName("approval_dialog")
        self.setWindowTitle(_TITLES.get(request.tool, "Allow this tool call?"))
        self.setModal(True)
        self.resize(640, 420)
        layout = QVBoxLayout(self)
        self.question = QLabel(self)
        self.question.setTextFormat(Qt.TextFormat.PlainText)
        self.question.setWordWrap(True)
        self.question.setText(f"The agent wants to use {request.tool} on:")
        self.target = QLabel(self)
        self.target.setTextFormat(Qt.TextFormat.PlainText)
        self.target.setWordWrap(True)
        self.target.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.target.setFont(mono)
        self.target.setText(request.target)
        self.detail = QPlainTextEdit(self)
        self.detail.setReadOnly(True)
        self.detail.setFont(mono)
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.detail.setPlainText(request.detail)
        self.detail.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        layout.addWidget(self.question)
        layout.addWidget(self.target)
        layout.addWidget(self.detail, 1)

        buttons = QDialogButtonBox(self)
        self.allow_once_button = QPushButton("&Allow once", self)
        self.allow_session_button = QPushButton("Allow for this &session", self)
        self.allow_session_button.setToolTip(
            f"Allow {request.tool} without asking again until this conversation ends"
        )
        self.deny_button = QPushButton("&Deny", self)
        for button in (self.allow_once_button, self.allow_session_button):
            button.setAutoDefault(False)
            buttons.addButton(button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.deny_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.deny_button.setDefault(True)
        self.allow_once_button.clicked.connect(lambda: self._decide(ApprovalDecision.ALLOW_ONCE))
        self.allow_session_button.clicked.connect(
            lambda: self._decide(ApprovalDecision.ALLOW_SESSION)
        )
        self.deny_button.clicked.connect(lambda: self._decide(ApprovalDecision.DENY))
        layout.addWidget(buttons)
        self.deny_button.setFocus()

    def _decide(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        if decision is ApprovalDecision.DENY:
            self.reject()
        else:
            self.accept()

    def reject(self) -> None:
        """Esc, the window's close button and Deny all end here: the answer is Deny."""
        self.decision = ApprovalDecision.DENY
        super().reject()


async def ask_approval(
    request: ApprovalRequest,
    *,
    parent: QWidget | None = None,
    on_shown: Callable[[ApprovalDialog], None] | None = None,
) -> ApprovalDecision:
    """Show an :class:`ApprovalDialog` without blocking the event loop and return the answer.

    Args:
        request: the tool call to approve.
        parent: the window the dialog is modal to.
        on_shown: called with the dialog once it is open (tests and the controller use it).

    Returns:
        The user's decision; ``DENY`` if the dialog was closed any other way.

    Raises:
        asyncio.CancelledError: the turn was stopped while the dialog was open (it is closed).
    """
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[ApprovalDecision] = loop.create_future()
    dialog = ApprovalDialog(request, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def on_finished(_result: int) -> None:
        if not answered.done():
            answered.set_result(dialog.decision)

    dialog.finished.connect(on_finished)
    dialog.open()
    if on_shown is not None:
        on_shown(dialog)
    try:
        return await answered
    except asyncio.CancelledError:
        dialog.finished.disconnect(on_finished)
        dialog.reject()
        raise


def make_approver(
    parent: QWidget | None = None, *, on_shown: Callable[[ApprovalDialog], None] | None = None
) -> Approver:
    """An ``Approver`` for the agent loop that asks through :func:`ask_approval`."""

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        return await ask_approval(request, parent=parent, on_shown=on_shown)

    return approve
