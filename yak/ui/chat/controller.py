"""The async side of the chat panel: the only object here that talks to the chat service.

Widgets emit intents (send, stop, new, rename, delete, select, retry); the controller spawns a
coroutine for each in its :class:`yak.ui.tasks.TaskGroup`, passes ``on_event`` to the agent loop so
streamed text and tool calls reach the transcript as they happen, and drives the panel by method
calls. No widget ever awaits. Stop cancels the running turn's task: the service keeps what was said.

Results that arrive after the user moved on (another session, another workspace) are dropped:
the session list and the transcript are loaded with ``TaskGroup.replace``, so a newer load
cancels the one still running and only the newest result is shown.

Whether an API key exists is never read on the UI thread: the settings service checks it on a
worker thread and reports every check, and the no-key sentence follows those reports.

From Enter until the model's first words, and again after each tool call while the model is
asked once more, the transcript's last row reads "thinking… N s". A reply the provider cut off
stays shown, marked incomplete, and the banner says so with Retry, which sends the question
again; a session whose stored last reply carries the agent's incomplete mark opens the same way,
so Retry also works after a restart. A question that got no reply at all is followed by
"— no reply: <why>" and the banner offers Retry, live and after a restart alike.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Signal

from yak import limits
from yak.agent.instructions import loaded_line
from yak.agent.types import (
    AgentEvent,
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    InstructionsLoaded,
    MessageStored,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    incomplete_cause,
    is_no_reply,
)
from yak.chat.service import ChatService
from yak.domain import ChatMessage, ChatSession, TokenUsage, Workspace
from yak.presenters import turn_failure
from yak.settings import SettingsService
from yak.ui.chat.approval import ApprovalDialog, ask_approval
from yak.ui.chat.panel import ChatPanel
from yak.ui.tasks import FAILED, TaskGroup, settled

log = logging.getLogger(__name__)


STOPPED_SENTENCE = "Stopped. Your question is back in the box; Retry sends it again."


def cut_off_sentence(cause: str, *, reopened: bool = False) -> str:
    """The banner over a reply that was cut off (``TurnFinished.cut_off``); ``reopened``: the
    session was opened with it as its last reply (after a restart, or from the list)."""
    if reopened:
        return (
            f"The last reply here was cut off: {cause}. What arrived is shown, marked "
            "incomplete; Retry sends the question again."
        )
    return (
        f"The reply was cut off: {cause}. What arrived is kept above, marked incomplete; "
        "Retry sends the question again."
    )


def no_reply_sentence(reason: str, *, reopened: bool = False) -> str:
    """The banner over a question that got no reply (``TurnFinished.no_reply``); ``reopened``:
    the session was opened with it stored (after a restart)."""
    if reopened:
        return f"The last question here got no reply ({reason.rstrip('.')}); Retry sends it again."
    return reason


def cut_off_question(messages: list[ChatMessage]) -> tuple[str, str] | None:
    """``(banner, question)`` when the session ends with a reply carrying the agent's incomplete
    mark, or with its mark of a question that got no reply: the sentence saying so and the
    prompt it answered (the last user message with text), the one Retry sends again; ``None``
    otherwise."""
    if not messages or messages[-1].role != "assistant" or not messages[-1].content:
        return None
    last = messages[-1].content[-1]
    text = last.get("text") if last.get("type") == "text" else None
    cause = incomplete_cause(text) if isinstance(text, str) else None
    reason = is_no_reply(messages[-1].content)
    if reason is not None:
        banner = no_reply_sentence(reason, reopened=True)
    elif cause is not None:
        banner = cut_off_sentence(cause, reopened=True)
    else:
        return None
    for message in reversed(messages[:-1]):
        if message.role == "user" and message.text.strip():
            return banner, message.text
    return None


class ChatController(QObject):
    """Connects a :class:`ChatPanel` to the chat service for the open workspace.

    Args:
        panel: the widget it drives.
        service: the chat service.
        settings: the settings service (whether an API key is available).
        approver: answers approval requests; defaults to the approval dialog over the panel.

    Signals:
        provider_settings_requested(): the user asked to open Settings › Provider.
        turn_finished(str): a turn ended with this status (``completed``, ``stopped``,
            ``failed``, ``tool_limit``).
        approval_shown(object): an :class:`ApprovalDialog` was opened (tests drive it).
        conversation_left(str): the person left a conversation of this workspace id (opened
            another conversation, started a new one, or switched workspace): a refresh
            waiting for the conversation to go quiet need not wait any longer.
    """

    provider_settings_requested = Signal()
    conversation_left = Signal(str)
    turn_finished = Signal(str)
    approval_shown = Signal(object)

    def __init__(
        self,
        panel: ChatPanel,
        service: ChatService,
        settings: SettingsService,
        *,
        approver: Approver | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent or panel)
        self.panel = panel
        self.service = service
        self.settings = settings
        self.workspace: Workspace | None = None
        self.session_id: str | None = None
        self._approver = approver or self._ask_user
        self._turn_task: asyncio.Task[Any] | None = None
        self._last_prompt: str | None = None
        self._stopped_by_user = False  # Stop or Esc, not a switch of workspace
        # A session list load still to come was asked to show the transcript too.
        self._show_messages_pending = False
        self._session_usage = TokenUsage()
        self._titles_stale = False
        # Work still in flight when the panel goes away must not touch deleted widgets.
        self.tasks = TaskGroup(panel)
        # Every key check (here, in Settings › Provider, by the refresh scheduler) shows or
        # hides the no-key sentence; not once the panel is gone (not a method of this
        # controller: the panel's child, it is being destroyed with it).
        self._stop_key_reports = _once(settings.on_key_checked(self._on_key_checked))
        stop_key_reports = self._stop_key_reports
        panel.destroyed.connect(lambda *_args: stop_key_reports())
        panel.send_requested.connect(self._on_panel_send_requested)
        panel.stop_requested.connect(self._on_panel_stop_requested)
        panel.retry_requested.connect(self._on_panel_retry_requested)
        panel.new_session_requested.connect(self._on_panel_new_session_requested)
        panel.session_selected.connect(self._on_panel_session_selected)
        panel.rename_requested.connect(self._on_panel_rename_requested)
        panel.delete_requested.connect(self._on_panel_delete_requested)
        panel.provider_settings_requested.connect(self.provider_settings_requested)
        panel.set_workspace_open(False)
        panel.set_key_missing(settings.key_available is False)  # checked when a workspace opens

    def _leave_conversation(self) -> None:
        if self.workspace is not None and self.session_id is not None:
            self.conversation_left.emit(self.workspace.id)

    def _panel_alive(self) -> bool:
        return shiboken6.isValid(self.panel)

    # -- called by the window ------------------------------------------------------------------

    @property
    def turn_running(self) -> bool:
        """A turn's task is in flight."""
        return self._turn_task is not None and not self._turn_task.done()

    def set_workspace(self, workspace: Workspace | None) -> asyncio.Task[Any] | None:
        """Show ``workspace``'s sessions (the most recent one opened); ``None`` empties the panel.

        A running turn is stopped first (what was said is kept).

        Returns:
            The loading task (tests await it), or ``None``.
        """
        self.stop()
        self._leave_conversation()
        self.workspace = workspace
        self.session_id = None
        self._last_prompt = None
        self.panel.transcript.clear()
        self.panel.clear_error()
        self.panel.set_sessions([], None)
        self._show_usage(None, TokenUsage())
        self.panel.set_workspace_open(workspace is not None)
        self.panel.transcript.set_placeholder(
            "Open a folder to chat with the agent about it."
            if workspace is None
            else f"Ask the agent about {workspace.name}. It reads the files in {workspace.path} "
            "freely; writing files and running commands ask you first."
        )
        self.refresh_key_notice()
        if workspace is None:
            return None
        return self._reload_sessions(show_messages=True)

    def refresh_key_notice(self) -> asyncio.Task[Any]:
        """Check the API key again, on a worker thread; the no-key sentence then shows or
        hides (after the key changed elsewhere, or a turn failed).

        Returns:
            The checking task (tests await it).
        """
        return self.tasks.replace("chat-key-check", self.settings.check_key())

    def stop(self) -> None:
        """Stop the running turn, if any (Stop, Esc, switching workspace)."""
        if self.turn_running:
            assert self._turn_task is not None
            self._turn_task.cancel()

    async def wait_idle(self) -> None:
        """Wait for the running turn to end (shutdown and tests)."""
        task = self._turn_task
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def aclose(self, grace_s: float = 1.0) -> None:
        """Quitting: stop the running turn and give it up to ``grace_s`` seconds to store what
        was said (the agent keeps a stopped reply), so the database is not closed under it;
        then cancel the controller's other work (list and transcript loads)."""
        self.stop()
        try:
            await asyncio.wait_for(self.wait_idle(), grace_s)
        except TimeoutError:
            log.info("quit while a chat turn was still stopping")
        self._stop_key_reports()
        self.tasks.cancel_all()
        await self.tasks.drain()

    # -- intents -------------------------------------------------------------------------------

    def _on_panel_stop_requested(self) -> None:
        if self.turn_running:
            self._stopped_by_user = True
            self.stop()

    def _on_panel_send_requested(self, prompt: str) -> None:
        self.start_turn(prompt)

    def _on_panel_retry_requested(self) -> None:
        if self._last_prompt is not None:
            self.start_turn(self._last_prompt, retry=True)

    def _on_panel_new_session_requested(self) -> None:
        if self.workspace is not None and not self.turn_running:
            self.tasks.run(
                self.service.create_session(self.workspace.id),
                name="chat-new-session",
                on_error=self._show_error,
                on_success=self._session_created,
            )

    def _on_panel_session_selected(self, session_id: str) -> None:
        if session_id != self.session_id and not self.turn_running:
            self._leave_conversation()
            self.session_id = session_id
            self._last_prompt = None
            self.panel.clear_error()
            self._reload_messages(session_id)

    def _on_panel_rename_requested(self, session_id: str, title: str) -> None:
        self.tasks.spawn(self._rename_session(session_id, title), name="chat-rename-session")

    def _on_panel_delete_requested(self, session_id: str) -> None:
        self.tasks.run(
            self.service.delete_session(session_id),
            name="chat-delete-session",
            on_error=self._show_error,
            on_success=lambda _: self._session_deleted(session_id),
        )

    # -- the turn ------------------------------------------------------------------------------

    def start_turn(self, prompt: str, *, retry: bool = False) -> asyncio.Task[Any] | None:
        """Send ``prompt`` in the current session (a new one if there is none).

        Without an API key, or over ``yak.limits.CHAT_MESSAGE_CHARS``, nothing is sent: the
        no-key or too-long sentence is shown and the prompt stays in the box. Before the
        first key check has answered, the key is checked first.

        Returns:
            The turn's task (tests await it), the key check's task, or ``None`` when nothing
            was sent.
        """
        if self.workspace is None or self.turn_running or not prompt.strip():
            return None
        try:
            limits.check_chat_message(prompt)
        except limits.TooLong as exc:  # refused before anything is stored; the box keeps it
            self.panel.show_error(str(exc), retry=False)
            return None
        available = self.settings.key_available
        if available is None:
            return self.tasks.spawn(self._check_key_then_send(prompt, retry), name="chat-key")
        if not available:
            self.panel.set_key_missing(True)
            return None
        self.panel.set_key_missing(False)
        self.panel.clear_error()
        self._stopped_by_user = False
        if not retry or self.panel.input.text() == prompt:  # a stopped question put back
            self.panel.input.clear()
            self.panel.transcript.add_user_message(prompt)
        self.panel.transcript.show_thinking()  # at once, before anything is read or sent
        self._last_prompt = prompt
        self._titles_stale = True
        self.panel.set_busy(True)
        self._turn_task = self.tasks.spawn(
            self._run_turn(self.workspace, prompt, retry=retry), name="chat-turn"
        )
        return self._turn_task

    async def _check_key_then_send(self, prompt: str, retry: bool) -> None:
        if await self.settings.check_key():
            self.start_turn(prompt, retry=retry)
        elif self._panel_alive():
            self.panel.set_key_missing(True)

    def _on_key_checked(self, available: bool) -> None:
        if self._panel_alive():
            self.panel.set_key_missing(not available)

    async def _run_turn(self, workspace: Workspace, prompt: str, *, retry: bool = False) -> None:
        outcome = "failed"
        try:
            result = await self.tasks.attempt(
                self._send(workspace, prompt, retry=retry), on_error=self._show_turn_error
            )
            if result is not FAILED:
                outcome = result.status
                self._finish_turn(result)
        except asyncio.CancelledError:
            outcome = "stopped"
            if self._panel_alive():
                self.panel.transcript.end_turn("Stopped.")
                self._offer_stopped_question(workspace, prompt)
            raise
        finally:
            if self._panel_alive():  # not when the window is being torn down
                self.panel.set_busy(False)
                self.turn_finished.emit(outcome)
                if self.workspace is workspace and self.session_id is not None:
                    self._reload_sessions()

    async def _send(self, workspace: Workspace, prompt: str, *, retry: bool) -> TurnFinished:
        """Show the question (again, for a retry), create the session when there is none,
        and send the turn."""
        transcript = self.panel.transcript
        if retry and self.session_id is not None:
            await self._show_stored_before_retry(prompt)
        elif retry:
            transcript.add_user_message(prompt)
        transcript.show_thinking()  # again, when the transcript was shown anew
        if self.session_id is None:
            # The service titles a new session from its first prompt.
            session = await self.service.create_session(workspace.id)
            self.session_id = session.id
            await settled(self._reload_sessions())
        return await self.service.send(
            workspace,
            self.session_id,
            prompt,
            approver=self._approver,
            on_event=self._on_agent_event,
        )

    def _show_turn_error(self, text: str) -> None:
        self.panel.transcript.end_turn()
        self.panel.show_error(text)
        self.refresh_key_notice()

    def _show_error(self, text: str) -> None:
        """An error of the session list (no Retry: there is no question to send again)."""
        self.panel.show_error(text, retry=False)

    async def _show_stored_before_retry(self, prompt: str) -> None:
        """Show the session as stored, then the prompt unless it is already the last message
        (the agent does not store an unanswered prompt twice, so neither does the view)."""
        assert self.session_id is not None
        messages = await self.service.messages(self.session_id)
        self.panel.transcript.show_messages(messages)
        last = messages[-1] if messages else None
        if last is not None and last.role == "assistant" and is_no_reply(last.content):
            last = messages[-2] if len(messages) > 1 else None  # the question that got none
        if (
            last is None
            or last.role != "user"
            or last.text != prompt
            or any(block.get("type") != "text" for block in last.content)
        ):
            self.panel.transcript.add_user_message(prompt)

    def _finish_turn(self, result: TurnFinished) -> None:
        transcript = self.panel.transcript
        used = result.usage.total_input_tokens or result.usage.output_tokens
        # A turn that failed before any call finished reported no tokens: no "0 in · 0 out".
        self._show_usage(result.usage if used else None, self._session_usage + result.usage)
        if result.status == "completed":
            transcript.end_turn()
            self._last_prompt = None
        elif result.status == "stopped":
            transcript.end_turn("Stopped.")
            if self.workspace is not None:
                self._offer_stopped_question(self.workspace, self._last_prompt or "")
        elif result.status == "tool_limit":
            transcript.end_turn(
                result.error
                or "The agent used too many tool rounds and was stopped; ask again to continue."
            )
        elif result.cut_off is not None:
            transcript.end_turn()
            transcript.mark_incomplete(result.cut_off)
            self.panel.show_error(cut_off_sentence(result.cut_off))
        else:
            transcript.end_turn()
            if result.no_reply is not None:
                transcript.mark_no_reply(result.no_reply)
            self.panel.show_error(
                turn_failure(result.error or "The reply failed.", result.reason, front_end="window")
            )
            self.refresh_key_notice()

    def _offer_stopped_question(self, workspace: Workspace, prompt: str) -> None:
        """After Stop or Esc: the question goes back in the prompt box (unless something else
        was typed meanwhile) and the banner offers Retry; a turn stopped because another
        workspace opened offers nothing."""
        if not self._stopped_by_user or self.workspace is not workspace or not prompt:
            return
        self._stopped_by_user = False
        self._last_prompt = prompt
        if not self.panel.input.text().strip():
            self.panel.input.edit.setPlainText(prompt)
            self.panel.focus_input()
        self.panel.show_error(STOPPED_SENTENCE)

    def _on_agent_event(self, event: AgentEvent) -> None:
        transcript = self.panel.transcript
        if isinstance(event, TextDelta):
            transcript.append_text(event.text)
        elif isinstance(event, ToolCallStarted):
            transcript.start_tool_call(event.tool_use_id, event.tool, event.target)
        elif isinstance(event, ToolCallFinished):
            transcript.finish_tool_call(
                event.tool_use_id,
                tool=event.tool,
                target=event.target,
                ok=event.ok,
                summary=event.summary,
                output=event.output,
            )
            transcript.show_thinking()  # the result goes back to the model, which is asked again
        elif isinstance(event, InstructionsLoaded):
            transcript.add_note(loaded_line(event.files, event.cut))
        elif isinstance(event, MessageStored) and event.role == "user" and self._titles_stale:
            # The service titles a new session from its first prompt before storing it.
            self._titles_stale = False
            self._reload_sessions()

    async def _ask_user(self, request: ApprovalRequest) -> ApprovalDecision:
        transcript = self.panel.transcript
        transcript.flush()  # the user sees everything said before the question
        block = transcript.tool_call(request.tool_use_id)
        if block is not None:
            block.set_waiting("waiting for your approval…")
        return await ask_approval(
            request, parent=self.panel.window(), on_shown=self._on_approval_shown
        )

    def _on_approval_shown(self, dialog: ApprovalDialog) -> None:
        self.approval_shown.emit(dialog)

    def _show_usage(self, turn: TokenUsage | None, session: TokenUsage) -> None:
        self._session_usage = session
        self.panel.set_usage(turn, session)

    # -- sessions ------------------------------------------------------------------------------

    def _reload_sessions(self, *, show_messages: bool = False) -> asyncio.Task[Any]:
        """Refresh the session list in the background (see :meth:`_load_sessions`); with
        ``show_messages``, also pick the current session (the most recent when there is none)
        and show its transcript.

        Only the newest request lands: one still running is cancelled, and when it was to show
        the transcript, the new one does that instead.

        Returns:
            The loading task.
        """
        self._show_messages_pending = self._show_messages_pending or show_messages
        return self.tasks.replace("chat-load-sessions", self._load_sessions())

    async def _load_sessions(self) -> None:
        """Refresh the session list, keeping the current session selected as it is when the
        list arrives (not when it was asked for); then show the transcript if a request asked
        for it (see :meth:`_reload_sessions`)."""
        workspace = self.workspace
        if workspace is None:
            self._show_messages_pending = False
            return
        sessions = await self.tasks.attempt(
            self.service.sessions(workspace.id), on_error=self._show_error
        )
        show_messages, self._show_messages_pending = self._show_messages_pending, False
        if sessions is FAILED or self.workspace is not workspace:
            return  # the user opened another workspace meanwhile
        if show_messages and self.session_id not in {s.id for s in sessions}:
            self.session_id = sessions[0].id if sessions else None
        self.panel.set_sessions(sessions, self.session_id)
        if not show_messages:
            return
        if self.session_id is None:
            self.panel.transcript.clear()
            self._show_usage(None, TokenUsage())
        else:
            await settled(self._reload_messages(self.session_id))

    def _reload_messages(self, session_id: str) -> asyncio.Task[Any]:
        """Show the transcript of ``session_id`` once read; a read still running for an
        earlier choice is cancelled (the newest wins)."""
        return self.tasks.replace("chat-load-messages", self._load_messages(session_id))

    async def _load_messages(self, session_id: str) -> None:
        messages = await self.tasks.attempt(
            self.service.messages(session_id), on_error=self._show_error
        )
        if messages is FAILED or session_id != self.session_id or self.turn_running:
            return  # another selection or a turn owns the transcript now
        self.panel.transcript.show_messages(messages)
        self._show_usage(None, sum((m.usage for m in messages), TokenUsage()))
        cut = cut_off_question(messages)
        if cut is not None:
            banner, self._last_prompt = cut
            self.panel.show_error(banner)

    async def _session_created(self, session: ChatSession) -> None:
        self._leave_conversation()
        self.session_id = session.id
        self._last_prompt = None
        self.panel.clear_error()
        self.panel.transcript.clear()
        self._show_usage(None, TokenUsage())
        await settled(self._reload_sessions())
        self.panel.input.edit.setFocus()

    async def _rename_session(self, session_id: str, title: str) -> None:
        await self.tasks.attempt(
            self.service.rename_session(session_id, title), on_error=self._show_error
        )
        await settled(self._reload_sessions())

    async def _session_deleted(self, session_id: str) -> None:
        if session_id == self.session_id:
            self.session_id = None
            self._last_prompt = None
            self.panel.transcript.clear()
            await settled(self._reload_sessions(show_messages=True))
        else:
            await settled(self._reload_sessions())


def _once(stop: Callable[[], object]) -> Callable[[], None]:
    """``stop`` made safe to call more than once (an unsubscribe)."""
    done = False

    def once() -> None:
        nonlocal done
        if not done:
            done = True
            stop()

    return once
