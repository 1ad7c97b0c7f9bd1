"""ChatService: the async facade the chat UI and ``yak ask`` drive.

Sessions and transcripts from the conversation repository, turns through the agent loop, and
"Test connection". The API key lives in the settings service. Every repository call runs on a
worker thread (``asyncio.to_thread``) so the GUI never waits on the disk; events
(``SessionsChanged``, ``MessageAdded``, ``TurnCompleted``) are published on the event-loop
thread.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable

from yak import limits
from yak.agent import sandbox
from yak.agent.approvals import SessionApprovals
from yak.agent.loop import MAX_TOOL_ROUNDS, Agent, TurnDriver
from yak.agent.tools import WorkspaceTools
from yak.agent.types import AgentEvent, Approver, TurnFinished
from yak.aio import in_daemon_thread
from yak.bus import EventBus
from yak.config import Settings
from yak.domain import DEFAULT_SESSION_TITLE as DEFAULT_TITLE
from yak.domain import ChatMessage, ChatSession, ModelCheck, SessionOrigin, Workspace
from yak.errors import MissingApiKey, ProviderError, UsageError, YakError
from yak.events import SessionsChanged
from yak.memory.freshness.age import LineAge
from yak.ports import (
    ConversationRepository,
    DocumentRepository,
    ModelClient,
    ModelClientFactory,
    WorkspaceRepository,
    build_ready_client,
    ready_model_client,
)
from yak.text import one_line

log = logging.getLogger(__name__)

TITLE_CHARS = 60  # a title made from a first prompt


def title_from_prompt(prompt: str) -> str:
    """A session title from its first prompt: the first non-blank line, blanks collapsed, at
    most 60 characters ("…" marks a cut)."""
    line = next((ln for ln in prompt.splitlines() if ln.strip()), "")
    return one_line(line, TITLE_CHARS) or DEFAULT_TITLE


class ChatService:
    """Conversations and agent turns for the UI and the CLI.

    Args:
        conversations: sessions and messages.
        workspaces: the stored workspaces (the agent reads whether memory is on).
        documents: the memory documents (the agent reads the memory block).
        bus: the event bus (publish on the loop thread).
        settings: returns the current settings (chat model, base URL) at each call.
        model_client: builds a model client for a turn or a connection test.
        max_tool_rounds: the agent's cap on tool rounds per turn.
        line_ages: each memory line's age by workspace id, blocking (``MemoryService
            .ages_on_thread``: its remembered blame); ``None``: the agent reads them.
    """

    def __init__(
        self,
        *,
        conversations: ConversationRepository,
        workspaces: WorkspaceRepository,
        documents: DocumentRepository,
        bus: EventBus,
        settings: Callable[[], Settings],
        model_client: ModelClientFactory,
        max_tool_rounds: int | None = None,
        line_ages: Callable[[str], list[LineAge]] | None = None,
    ) -> None:
        self.bus = bus
        self.settings = settings
        self.conversations = conversations
        self._workspaces = workspaces
        self._documents = documents
        self._provider_factory = model_client
        self._approvals = SessionApprovals()
        self._running: set[str] = set()  # sessions with a turn in flight
        self._max_tool_rounds = max_tool_rounds
        self._line_ages = line_ages

    # --- sessions ---------------------------------------------------------------------------
    async def sessions(self, workspace_id: str) -> list[ChatSession]:
        """The workspace's sessions, most recently active first."""
        return await asyncio.to_thread(self.conversations.sessions, workspace_id)

    async def create_session(
        self,
        workspace_id: str,
        title: str | None = None,
        *,
        origin: SessionOrigin = SessionOrigin.WINDOW,
    ) -> ChatSession:
        """A new empty session ("New conversation" until its first prompt titles it), marked
        with where it was started (``origin``: the window, or ``yak ask``).

        Raises:
            WorkspaceNotFound: unknown workspace. UsageError: a blank title.
        """
        session = await asyncio.to_thread(
            self.conversations.create_session,
            workspace_id,
            title if title is not None else DEFAULT_TITLE,
            origin,
        )
        self.bus.publish(SessionsChanged(workspace_id=workspace_id))
        return session

    async def rename_session(self, session_id: str, title: str) -> ChatSession:
        """Rename a session. Raises ``UsageError`` (unknown session, blank title)."""
        session = await asyncio.to_thread(self.conversations.rename_session, session_id, title)
        self.bus.publish(SessionsChanged(workspace_id=session.workspace_id))
        return session

    async def delete_session(self, session_id: str) -> None:
        """Delete a session and its messages. Raises ``UsageError`` for a session that is
        unknown or has a reply in progress."""
        if session_id in self._running:
            raise UsageError("This conversation is still replying; stop it before deleting it.")
        session = await asyncio.to_thread(self.conversations.get_session, session_id)
        await asyncio.to_thread(self.conversations.delete_session, session_id)
        self._approvals.forget(session_id)
        self.bus.publish(SessionsChanged(workspace_id=session.workspace_id))

    async def messages(self, session_id: str) -> list[ChatMessage]:
        """The session's messages, oldest first."""
        return await asyncio.to_thread(self.conversations.messages, session_id)

    # --- turns ------------------------------------------------------------------------------
    async def send(
        self,
        workspace: Workspace,
        session_id: str,
        prompt: str,
        *,
        approver: Approver,
        on_event: Callable[[AgentEvent], None] | None = None,
        denied_note: str | None = None,
        denied_summary: str | None = None,
    ) -> TurnFinished:
        """Run one agent turn in a session (see ``Agent.run_turn``).

        The first prompt of a session still called "New conversation" titles it. Cancelling
        the awaiting task is Stop: what was said is kept and the cancellation propagates.

        Args:
            workspace: the session's workspace.
            session_id: the session.
            prompt: the user's message.
            approver: answers approval requests for mutating tools.
            on_event: receives the turn's events on the loop thread.
            denied_note: what the model is told when a call is denied (``yak ask``).
            denied_summary: the one-line outcome shown for a denied call (``yak ask``:
                "needs --yes to write or run commands").

        Returns:
            ``TurnFinished`` (``completed``, ``tool_limit`` or ``failed``).

        Raises:
            UsageError: blank prompt, a session of another workspace, or a turn already
                running in this session. TooLong: a prompt over
                ``yak.limits.CHAT_MESSAGE_CHARS`` (nothing stored or sent). StoreError: the
                database failed.
        """
        if not prompt.strip():
            raise UsageError("The message is empty; type something to send.")
        limits.check_chat_message(prompt)
        if session_id in self._running:
            raise UsageError("This conversation is still replying; wait for it or press Stop.")
        self._running.add(session_id)
        provider: ModelClient | None = None
        try:
            # The client first: on a first message while the warm-up still imports the SDK, this
            # waits (off the loop) for that import, and the request leaves once it is done.
            provider = await ready_model_client(self._provider_factory)
            await self._title_from_first_prompt(workspace, session_id, prompt)
            settings = self.settings()
            agent = Agent(
                conversations=self.conversations,
                workspaces=self._workspaces,
                documents=self._documents,
                provider=provider,
                model=settings.chat_model,
                bus=self.bus,
                approvals=self._approvals,
                max_tool_rounds=self._max_tool_rounds or MAX_TOOL_ROUNDS,
                stale_after_days=settings.stale_after_days,
                line_ages=self._line_ages,
                tools_factory=functools.partial(
                    WorkspaceTools, sandbox=sandbox.choose(settings.command_sandbox)
                ),
            )
            driver = TurnDriver(approver, on_event, denied_note, denied_summary)
            return await agent.run_turn(workspace, session_id, prompt, driver)
        finally:
            self._running.discard(session_id)
            if provider is not None:
                try:
                    await asyncio.shield(provider.aclose())
                except Exception:  # closing sockets must not hide the turn's outcome
                    log.warning("could not close the provider's connections", exc_info=True)

    async def _title_from_first_prompt(
        self, workspace: Workspace, session_id: str, prompt: str
    ) -> None:
        def retitle() -> ChatSession | None:
            session = self.conversations.get_session(session_id)
            if session.workspace_id != workspace.id:  # refused before anything is changed
                raise UsageError("That conversation belongs to another workspace.")
            if session.title != DEFAULT_TITLE or self.conversations.messages(session_id):
                return None
            return self.conversations.rename_session(session_id, title_from_prompt(prompt))

        session = await asyncio.to_thread(retitle)
        if session is not None:
            self.bus.publish(SessionsChanged(workspace_id=session.workspace_id))

    # --- the connection ---------------------------------------------------------------------
    async def test_connection(self) -> tuple[ModelCheck, ...]:
        """A tiny request with the chat model, then one with the memory model (the model the
        refreshes use; one request when both are the same model), through the same endpoint.

        Returns:
            One :class:`ModelCheck` per model asked, in that order; a model that failed
            carries its error's sentence.

        Raises:
            MissingApiKey: no API key (nothing was sent).
        """
        settings = self.settings()
        asked = [("chat", settings.chat_model), ("memory", settings.memory_model)]
        if settings.memory_model == settings.chat_model:
            asked = [("chat and memory", settings.chat_model)]
        provider = await ready_model_client(self._provider_factory)
        checks = []
        try:
            for role, model in asked:
                try:
                    checks.append(
                        ModelCheck(role, model, answered=await provider.check(model=model))
                    )
                except MissingApiKey:  # as documented: nothing was sent, to either model
                    raise
                except ProviderError as exc:
                    checks.append(ModelCheck(role, model, error=str(exc)))
        finally:
            await provider.aclose()
        return tuple(checks)

    async def warm_up(self) -> bool:
        """Get the model client ready before the first message: build one and let it pay its
        one-time costs (the SDK import takes seconds) on a worker thread, then close it. The
        app calls this in the background once the window is up and the core is open; a turn
        or connection test started meanwhile waits for the same import (``yak.llm.sdk.load``)
        and its request leaves the moment it is done.

        Without an API key only the SDK is loaded, and that is no failure: the answer is
        ``False``, logged, and nothing is shown.

        Returns:
            ``True`` when a client was built, ``False`` when not (no key, or a ``YakError``
            building it, which the first message will report).
        """
        started = time.monotonic()
        try:
            # A daemon thread: quitting while the SDK imports does not wait for it.
            provider, built = await in_daemon_thread(build_ready_client, self._provider_factory)
        except YakError as exc:
            log.info("model client not warmed: %s", exc)
            return False
        try:
            await provider.aclose()
        finally:
            log.info(
                "model client %s in %.1f s",
                "ready" if built else "not built (no API key yet); SDK loaded",
                time.monotonic() - started,
            )
        return built
