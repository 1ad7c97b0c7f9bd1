"""ReviewController: drives the review dialog from the window: a change waiting for review
(accept as proposed or edited, reject), a refused refresh reply and the last refresh's diff.

It runs its operations in the window controller's :class:`~yak.ui.tasks.TaskGroup` (so
``drain()`` there waits for them too); a failed read is said in a message box, a failed
decision in the dialog itself.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from PySide6.QtCore import QObject, Signal

from yak.core import Core
from yak.domain import Proposal, ProposalStatus
from yak.events import ProposalsChanged
from yak.memory.history.hunks import hand_lines
from yak.presenters import decided_elsewhere
from yak.ui.main_window import MainWindow
from yak.ui.review_dialog import ReviewDialog
from yak.ui.tasks import FAILED, ErrorSink, TaskGroup, logged


class ReviewController(QObject):
    """The review dialog over ``window``, for the workspace the window shows.

    Args:
        window: the main window (its workspace, status bar and message boxes).
        core: the application core (memory, review inbox, refresh, chat titles).
        tasks: the window controller's task group.
        decided: awaited with the workspace id after a proposal was accepted or rejected
            (the panel reads the document and its state again).

    Signals:
        edit_text_requested(str): the person asked to edit this text in Settings › Memory.
    """

    edit_text_requested = Signal(str)

    def __init__(
        self,
        *,
        window: MainWindow,
        core: Core,
        tasks: TaskGroup,
        decided: Callable[[str], Awaitable[None]],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.window = window
        self.core = core
        self.tasks = tasks
        self._decided = decided
        self.dialog = ReviewDialog(window)
        self.dialog.accept_requested.connect(self._on_dialog_accept_requested)
        self.dialog.reject_requested.connect(self._on_dialog_reject_requested)
        self.dialog.edit_text_requested.connect(self.edit_text_requested)
        self._deciding: str | None = None  # the proposal this window is accepting or rejecting

    # --- entry points ----------------------------------------------------------------------------
    def review(self, workspace_id: str) -> None:
        """Open the oldest proposal waiting for review (or say that none waits)."""
        self.tasks.run(
            self._review(workspace_id), name="review-proposal", on_error=self._error_box("review")
        )

    def view_reply(self, workspace_id: str) -> None:
        """Show the last refused reply as a diff against the document."""
        self.tasks.run(
            self._view_reply(workspace_id),
            name="view-refused-reply",
            on_error=self._error_box("refresh"),
        )

    def last_change(self, workspace_id: str) -> None:
        """Show the last refresh's diff, read-only."""
        self.tasks.run(
            self._last_change(workspace_id), name="last-change", on_error=self._error_box("refresh")
        )

    def proposals_changed(self, event: ProposalsChanged) -> None:
        """The inbox changed: the proposal shown is checked again, unless this window is
        deciding it."""
        shown = self.dialog.proposal
        workspace = self.window.workspace
        if (
            shown is not None
            and workspace is not None
            and event.workspace_id == workspace.id
            and self.dialog.isVisible()
            and shown.id != self._deciding
        ):
            self.tasks.replace("review-recheck", self._recheck(workspace.id, shown))

    # --- slots ---------------------------------------------------------------------------------
    def _on_dialog_accept_requested(self, proposal_id: str, content: object) -> None:
        text = content if isinstance(content, str) else None
        self.tasks.spawn(self._decide(proposal_id, accept=True, content=text), name="accept")

    def _on_dialog_reject_requested(self, proposal_id: str) -> None:
        self.tasks.spawn(self._decide(proposal_id, accept=False), name="reject")

    # --- coroutines ----------------------------------------------------------------------------
    def _error_box(self, what: str) -> ErrorSink:
        return functools.partial(self.window.show_error, title=f"Memory {what}")

    def _raise(self) -> None:
        self.dialog.show()
        self.dialog.raise_()

    async def _view_reply(self, workspace_id: str) -> None:
        """A refused reply, as a diff against the document in the review view (the editor's
        text is not replaced; Edit… opens it to copy from)."""
        attempt = await self.core.memory.last_attempt(workspace_id)
        document = await self.core.memory.read(workspace_id)
        reply = attempt.reply if attempt is not None else None
        if attempt is None or not reply:
            self.window.show_error(
                "The last refresh kept no reply to show.", title="Memory refresh"
            )
            return
        self.dialog.show_change(
            f"The refresh reply was refused ({attempt.status}); the document is unchanged.",
            document.content,
            reply,
            (attempt.reason,) if attempt.reason else (),
            editable=True,
        )
        self._raise()

    async def _review(self, workspace_id: str) -> None:
        waiting = await self.core.review.proposals(workspace_id)
        if not waiting:
            self.window.show_status("No change waits for review.", timeout_ms=10000)
            return
        await self._show_proposal(workspace_id, waiting[0])
        self._raise()

    async def _show_proposal(self, workspace_id: str, proposal: Proposal) -> None:
        """Put ``proposal`` in the dialog with its base text and the lines a person wrote in
        it. Raises ``YakError`` (a read failed)."""
        base = await self.core.memory.version_text(workspace_id, proposal.base_version)
        current = await self.core.memory.read(workspace_id)
        origins = await self.core.memory.blame(workspace_id)
        hand = hand_lines(base, origins, current=current.version == proposal.base_version)
        titles = {s.id: s.title for s in await self.core.chat.sessions(workspace_id)}
        self.dialog.show_proposal(proposal, base, hand=hand, titles=titles)

    async def _recheck(self, workspace_id: str, shown: Proposal) -> None:
        """The inbox changed while the dialog shows ``shown``: when it is no longer waiting
        (decided in another window or by ``yak memory accept``/``reject``), say so; when it
        was rebased onto a newer version, show it as it is now."""
        stored = await self.tasks.attempt(
            self.core.review.get_proposal(workspace_id, shown.id),
            on_error=logged(f"reading proposal {shown.id} again"),
        )
        still_shown = self.dialog.proposal
        if (
            stored is FAILED
            or still_shown is None
            or still_shown.id != shown.id
            or shown.id == self._deciding
        ):
            return
        if stored.status is not ProposalStatus.PENDING:
            self.dialog.show_decided(decided_elsewhere(stored))
        elif (stored.base_version, stored.content) != (shown.base_version, shown.content):
            await self.tasks.attempt(
                self._show_proposal(workspace_id, stored), on_error=self.dialog.show_error
            )

    async def _last_change(self, workspace_id: str) -> None:
        attempt = await self.core.memory.last_attempt(workspace_id)
        if attempt is None or attempt.result_version is None:
            self.window.show_status("The last refresh changed nothing.", timeout_ms=10000)
            return
        new = await self.core.memory.version_text(workspace_id, attempt.result_version)
        old = await self.core.memory.version_text(workspace_id, attempt.base_version)
        self.dialog.show_change(
            f"The refresh of version {attempt.base_version} wrote version "
            f"{attempt.result_version}: +{attempt.added} −{attempt.removed}",
            old,
            new,
        )
        self._raise()

    async def _decide(self, proposal_id: str, *, accept: bool, content: str | None = None) -> None:
        """Accept (as proposed or edited) or reject a proposal of the window's workspace; on
        success the dialog closes, otherwise it says why."""
        workspace = self.window.workspace
        if workspace is None:
            return
        review = self.core.review
        self._deciding = proposal_id
        try:
            decided = await self.tasks.attempt(
                review.accept(workspace.id, proposal_id, content=content, initiator=self)
                if accept
                else review.reject(workspace.id, proposal_id),
                on_error=self.dialog.show_error,
            )
        finally:
            self._deciding = None
        if decided is FAILED:
            return
        self.dialog.hide()
        self.window.show_status(
            "Accepted the change." if accept else "Rejected the change; its lines stay out.",
            timeout_ms=10000,
        )
        # Deciding folded the proposal's conversations: the status line reads them again.
        await self.core.refresh.reload(workspace.id)
        await self._decided(workspace.id)
