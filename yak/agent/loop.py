"""The agent loop: one user turn, streamed, with workspace-confined tools (see
``docs/agent.md``, "The agent").

A turn stores the user's prompt, then repeats: stream a reply through the model client, store
it, run the tool calls it asks for (asking the driver's ``Approver`` for mutating ones,
``yak.agent.approvals``), store the results as a user message of ``tool_result`` blocks, until
the model answers without tools or the cap on tool rounds is reached. Events go to the driver's
``on_event`` as they happen; stored messages are also published as ``MessageAdded`` and a turn
that ends normally (``completed`` or ``tool_limit``) publishes ``TurnCompleted`` — the memory
refresh queue listens. A failed or stopped turn does not.

The system prompt is two blocks (``yak.agent.messages``, read from the stores by
``yak.agent.session_prompt``): the static working rules, the same for every session, then the
session block: the workspace's instruction files (``AGENTS.md`` and the like,
``yak.agent.instructions``; their names go to ``on_event`` as ``InstructionsLoaded``), the
workspace memory block (when memory is enabled for the workspace and the document is non-empty;
``yak.memory.prompts.injection``) and environment facts (workspace path, platform, date). The
session block is taken when the session's first turn starts, stored with the session and sent
byte-identical on every later request, so the prompt cache holds across turns and restarts; a
memory refresh reaches the next session. A hand edit of the memory made since (hand, import,
restore, clear) is stored as a note at the head of the next user turn, once per document
version. Requests carry four cache breakpoints: the last tool, both system blocks and the last
message.

Stop is a cancellation of the task running :meth:`Agent.run_turn`. What was said is kept: the
partial reply is stored with a trailing ``[stopped]`` text block (a tool call whose input was
still streaming is dropped), tool calls that had not run get a "stopped" result so the stored
conversation stays valid for the API, ``TurnFinished(status="stopped")`` is sent to
``on_event``, and the cancellation propagates.

A reply cut off by the provider (the connection closed, the stream stalled past the timeout, an
error event mid-stream) is kept the same way: the text that arrived is stored followed by a text
block ``[incomplete: the reply was cut off (<why>)]`` (``yak.agent.types.incomplete_mark``), and
the turn ends ``failed`` with ``cut_off`` set. The mark is a plain text block, so the next
request sends it as it is and the model knows its previous reply did not finish.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from yak import ports as llm
from yak.agent.approvals import DENIED_NOTE, DENIED_SUMMARY, SessionApprovals, ask
from yak.agent.messages import (
    cached_tools,
    clean_block,
    to_api_messages,
    tool_result,
    with_cache_breakpoint,
)
from yak.agent.session_prompt import turn_prompt
from yak.agent.tools import ToolResult, WorkspaceTools
from yak.agent.types import (
    AgentEvent,
    ApprovalRequest,
    Approver,
    InstructionsLoaded,
    MessageStored,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    incomplete_mark,
    is_no_reply,
    no_reply_mark,
)
from yak.bus import EventBus
from yak.config import DEFAULT_STALE_AFTER_DAYS
from yak.domain import ChatMessage, TokenUsage, Workspace
from yak.errors import ProviderError, UsageError
from yak.events import MessageAdded, ReferencesChecked, TurnCompleted
from yak.memory.freshness.age import LineAge
from yak.ports import ConversationRepository, DocumentRepository, ModelClient, WorkspaceRepository
from yak.text import head_and_tail, tool_target

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 25
MAX_REPLY_TOKENS = 8192
DISPLAY_OUTPUT_CHARS = 4000  # tool output shown in the transcript (the model sees more)
STOPPED_MARK = "[stopped]"
STOPPED_RESULT = "Not run: the user pressed Stop."
# Why a reply stopped early, by ``ProviderError.reason``: the clause in its incomplete mark.
_CUT_CAUSES = {
    "incomplete": "the connection closed",
    "timeout": "no more of it arrived in time",
    "overloaded": "the provider was overloaded",
    "server_error": "the provider had a server error",
    "rate_limited": "the provider was rate limiting",
}


def cut_cause(exc: ProviderError) -> str:
    """Why a reply that had started was cut off, as a short clause for its incomplete mark
    ("the connection closed")."""
    return _CUT_CAUSES.get(exc.reason, "the provider reported an error")


@dataclass(frozen=True)
class TurnDriver:
    """Who drives a turn (the chat panel, ``yak ask``) and how it answers.

    Attributes:
        approver: answers approval requests for write_file, edit_file and run_command.
        on_event: receives ``InstructionsLoaded``, ``TextDelta``, ``ToolCallStarted``,
            ``ToolCallFinished``, ``MessageStored`` and finally ``TurnFinished``, on the loop
            thread.
        denied_note: what the model is told when a call is denied (``yak ask`` says how to
            allow it); ``None``: :data:`DENIED_NOTE`.
        denied_summary: the one-line outcome of a denied call (``ToolCallFinished`` and the
            stored result); ``None``: :data:`DENIED_SUMMARY`.
    """

    approver: Approver
    on_event: Callable[[AgentEvent], None] | None = None
    denied_note: str | None = None
    denied_summary: str | None = None


class Agent:
    """Runs turns of one conversation at a time against a provider.

    Args:
        conversations: the conversations (sessions and messages).
        workspaces: the stored workspaces (is memory on?).
        documents: the memory documents (read for the memory block, never written).
        provider: the model client.
        model: the chat model.
        bus: where ``MessageAdded`` and ``TurnCompleted`` are published (loop thread), or
            ``None``.
        approvals: ALLOW_SESSION memory shared across turns (the chat service keeps one).
        max_tool_rounds: tool rounds allowed in one turn before it ends as ``tool_limit``.
        max_tokens: the token budget of each reply.
        tools_factory: builds the tools for a workspace root (tests pass smaller caps).
        today: the clock for the system prompt's date.
        stale_after_days: a memory line's age (days) before the block marks it with its month.
        line_ages: each memory line's age by workspace id (blocking; ``None``: read from
            ``documents``).
    """

    def __init__(
        self,
        *,
        conversations: ConversationRepository,
        workspaces: WorkspaceRepository,
        documents: DocumentRepository,
        provider: ModelClient,
        model: str,
        bus: EventBus | None = None,
        approvals: SessionApprovals | None = None,
        max_tool_rounds: int = MAX_TOOL_ROUNDS,
        max_tokens: int = MAX_REPLY_TOKENS,
        tools_factory: Callable[[str], WorkspaceTools] = WorkspaceTools,
        today: Callable[[], datetime] | None = None,
        stale_after_days: int = DEFAULT_STALE_AFTER_DAYS,
        line_ages: Callable[[str], list[LineAge]] | None = None,
    ) -> None:
        self.conversations = conversations
        self.workspaces = workspaces
        self.documents = documents
        self.provider = provider
        self.model = model
        self.bus = bus
        self.approvals = approvals if approvals is not None else SessionApprovals()
        self.max_tool_rounds = max_tool_rounds
        self.max_tokens = max_tokens
        self.tools_factory = tools_factory
        self.today = today
        self.stale_after_days = stale_after_days
        self.line_ages = line_ages

    async def run_turn(
        self, workspace: Workspace, session_id: str, prompt: str, driver: TurnDriver
    ) -> TurnFinished:
        """Run one turn: the prompt, the replies and tool calls, until the model is done.

        Args:
            workspace: the conversation's workspace; tools and memory are bound to it.
            session_id: a session of that workspace.
            prompt: the user's message (not blank).
            driver: where the turn's events go and who approves its mutating calls.

        Returns:
            ``TurnFinished`` with status ``completed``, ``tool_limit`` (``error`` says why it
            ended) or ``failed`` (a provider error; ``error`` is its sentence; what was stored
            before the failure stays, and a reply cut off mid-stream is stored marked
            incomplete, with ``cut_off`` saying why).

        Raises:
            UsageError: blank prompt, or the session is not in this workspace.
            StoreError: the database failed.
            asyncio.CancelledError: Stop (after keeping what was said, see the module doc).
        """
        if not prompt.strip():
            raise UsageError("The message is empty; type something to send.")
        session = await asyncio.to_thread(self.conversations.get_session, session_id)
        if session.workspace_id != workspace.id:
            raise UsageError("That conversation belongs to another workspace.")
        return await _Turn(self, workspace, session_id, driver).run(prompt)

    async def store(
        self,
        session_id: str,
        workspace_id: str,
        role: str,
        content: list[dict],
        emit: Callable[[AgentEvent], None],
        *,
        usage: TokenUsage | None = None,
        model: str | None = None,
    ) -> ChatMessage:
        """Persist one message of a turn and announce it (``MessageStored``, ``MessageAdded``).
        Shielded: a Stop arriving meanwhile does not lose the write."""
        message = await asyncio.shield(
            asyncio.to_thread(
                self.conversations.add_message, session_id, role, content, model=model, usage=usage
            )
        )
        emit(MessageStored(message_id=message.id, role=role))
        if self.bus is not None:
            self.bus.publish(
                MessageAdded(
                    workspace_id=workspace_id, session_id=session_id, message_id=message.id
                )
            )
        return message


class _Turn:
    """The state of one running turn (what Stop must keep)."""

    def __init__(
        self,
        agent: Agent,
        workspace: Workspace,
        session_id: str,
        driver: TurnDriver,
    ) -> None:
        self.agent = agent
        self.workspace = workspace
        self.session_id = session_id
        self.emit = driver.on_event or (lambda _event: None)
        self.approver = driver.approver
        self.denied_note = driver.denied_note or DENIED_NOTE  # told the model
        self.denied_summary = driver.denied_summary or DENIED_SUMMARY  # shown the user
        self.tools = agent.tools_factory(workspace.path)
        self.usage = TokenUsage()
        self.last_text = ""
        self.last_stop: str | None = None
        self.streamed: list[str] = []  # text of the reply being streamed (kept on Stop)
        self.streaming = False
        self.open_calls: list[dict] = []  # tool_use blocks stored but not yet answered
        self.results: list[dict] = []  # their results so far

    async def run(self, prompt: str) -> TurnFinished:
        try:
            messages, system = await self._prepare(prompt)
            return await self._loop(messages, system)
        except asyncio.CancelledError:
            await self._keep_what_was_said()
            self._finish(TurnFinished(status="stopped", text=self.last_text, usage=self.usage))
            raise

    async def _prepare(self, prompt: str) -> tuple[list[dict], list[dict]]:
        """Store the prompt (and a note of a hand edit of the memory before it); return the
        conversation as API messages and the system blocks."""
        agent = self.agent
        history = await asyncio.to_thread(agent.conversations.messages, self.session_id)
        start = await asyncio.to_thread(
            turn_prompt,
            agent.conversations,
            agent.workspaces,
            agent.documents,
            workspace_id=self.workspace.id,
            session_id=self.session_id,
            today=agent.today,
            stale_after_days=agent.stale_after_days,
            line_ages=agent.line_ages,
        )
        if start.loaded:
            self.emit(InstructionsLoaded(files=start.loaded, cut=start.cut))
        if start.references is not None and agent.bus is not None:
            version, check = start.references
            agent.bus.publish(ReferencesChecked(self.workspace.id, version, check))
        last = history[-1] if history else None
        if last is not None and last.role == "assistant" and is_no_reply(last.content):
            last = history[-2] if len(history) > 1 else None  # the question that got no reply
        retry = (  # a retry of a prompt that got no reply: do not store it twice
            last is not None
            and last.role == "user"
            and list(last.content) == [{"type": "text", "text": prompt}]
        )
        if start.note is not None:  # before the prompt (after it on a retry): one user turn
            history.append(await self._store_note(start.note))
        if not retry:
            stored = await agent.store(
                self.session_id,
                self.workspace.id,
                "user",
                [{"type": "text", "text": prompt}],
                self.emit,
            )
            history.append(stored)
        return to_api_messages(history), start.system

    async def _store_note(self, note: dict) -> ChatMessage:
        """Store a memory note as a user message and remember its version as told."""
        stored = await self.agent.store(
            self.session_id, self.workspace.id, "user", [note], self.emit
        )
        await asyncio.shield(
            asyncio.to_thread(
                self.agent.conversations.note_memory_version, self.session_id, note["version"]
            )
        )
        return stored

    async def _loop(self, messages: list[dict], system: list[dict]) -> TurnFinished:
        agent = self.agent
        definitions = WorkspaceTools.definitions()
        rounds = 0
        while True:
            try:
                completion = await self._stream(messages, system, definitions)
            except ProviderError as exc:
                return await self._fail(exc)
            self.usage += completion.usage
            content = [b for b in (clean_block(dict(x)) for x in completion.content) if b]
            calls = [b for b in content if b["type"] == "tool_use"]
            if content:
                self.open_calls = calls
                self.results = []
                await agent.store(
                    self.session_id,
                    self.workspace.id,
                    "assistant",
                    content,
                    self.emit,
                    usage=completion.usage,
                    model=completion.model,
                )
                messages.append({"role": "assistant", "content": content})
            self.last_text = completion.text or self.last_text
            self.last_stop = completion.stop_reason
            if not calls:
                return self._complete("completed")
            if rounds >= agent.max_tool_rounds:
                note = (
                    f"Not run: this turn reached its limit of {agent.max_tool_rounds} tool "
                    "rounds. The user can send a message to continue."
                )
                await self._answer_open_calls(note, messages)
                return self._complete(
                    "tool_limit",
                    error=f"The agent stopped after {agent.max_tool_rounds} rounds of tool calls "
                    "in one turn; send a message to let it continue.",
                )
            rounds += 1
            summaries: dict[str, str] = {}
            for call in calls:
                result = await self._run_tool(call)
                summaries[call["id"]] = result.summary
                self.results.append(tool_result(call["id"], result.output, is_error=not result.ok))
            results, self.results, self.open_calls = self.results, [], []
            # The stored results keep the tool's one-line summary ("13 entries"), so a reloaded
            # chat shows what the live one did; the API never sees it (messages.clean_block).
            stored = [
                {**r, "summary": summaries[r["tool_use_id"]]}
                if r["tool_use_id"] in summaries
                else r
                for r in results
            ]
            await agent.store(self.session_id, self.workspace.id, "user", stored, self.emit)
            messages.append({"role": "user", "content": results})

    async def _stream(
        self, messages: list[dict], system: list[dict], definitions: list[dict]
    ) -> llm.Completion:
        self.streamed = []
        self.streaming = True

        def forward(event: llm.StreamEvent) -> None:
            if isinstance(event, llm.TextDelta):  # the agent's TextDelta too
                self.streamed.append(event.text)
                self.emit(event)

        try:
            completion = await self.agent.provider.stream(
                model=self.agent.model,
                system=system,
                messages=with_cache_breakpoint(messages),
                tools=cached_tools(definitions),
                max_tokens=self.agent.max_tokens,
                on_event=forward,
            )
        except asyncio.CancelledError:
            raise  # still "streaming": Stop keeps the partial text
        except BaseException:
            self.streaming = False
            raise
        self.streaming = False
        return completion

    async def _run_tool(self, call: dict) -> ToolResult:
        name, args, call_id = call["name"], call["input"], call["id"]
        target = tool_target(args)
        self.emit(ToolCallStarted(tool_use_id=call_id, tool=name, target=target))
        result = await self._approved(call, target)
        if result is None:
            result = await self.tools.execute(name, args)
        self.emit(
            ToolCallFinished(
                tool_use_id=call_id,
                tool=name,
                target=result.target or target,
                ok=result.ok,
                summary=result.summary,
                output=head_and_tail(result.output, DISPLAY_OUTPUT_CHARS),
            )
        )
        return result

    async def _approved(self, call: dict, target: str) -> ToolResult | None:
        """``None`` when the call may run; a denial result otherwise."""
        name = call["name"]
        if not self.tools.requires_approval(name):
            return None
        if self.agent.approvals.allowed(self.session_id, name):
            return None
        request = ApprovalRequest(
            session_id=self.session_id,
            tool_use_id=call["id"],
            tool=name,
            target=target,
            detail=self.tools.approval_detail(name, call["input"]),
        )
        if await ask(self.approver, request, self.agent.approvals):
            return None
        return ToolResult(
            ok=False, output=self.denied_note, summary=self.denied_summary, target=target
        )

    async def _answer_open_calls(self, note: str, messages: list[dict] | None = None) -> None:
        """Give every stored, unanswered tool call a result and store them."""
        if not self.open_calls:
            return
        done = {r["tool_use_id"] for r in self.results}
        results = self.results + [
            tool_result(c["id"], note) for c in self.open_calls if c["id"] not in done
        ]
        self.open_calls, self.results = [], []
        await self.agent.store(self.session_id, self.workspace.id, "user", results, self.emit)
        if messages is not None:
            messages.append({"role": "user", "content": results})

    async def _keep_what_was_said(self) -> None:
        """On Stop: store the partial reply (marked) or answer the calls that did not run."""
        try:
            if self.streaming:
                await self._store_partial("".join(self.streamed), STOPPED_MARK)
            else:
                await self._answer_open_calls(STOPPED_RESULT)
        except asyncio.CancelledError:
            log.warning("stopped again while keeping a stopped turn; the write still completes")
        except Exception:  # never let keeping the text hide the Stop itself
            log.exception("could not store what was said before Stop")

    async def _store_partial(self, text: str, mark: str) -> None:
        """Store the reply that was streaming when it ended early (Stop, or the provider cut
        it off), followed by ``mark`` saying why, so the stored conversation shows it."""
        content = [{"type": "text", "text": text}] if text.strip() else []
        content.append({"type": "text", "text": mark})
        self.last_text = text
        self.streamed = []
        self.streaming = False
        await self.agent.store(
            self.session_id,
            self.workspace.id,
            "assistant",
            content,
            self.emit,
            model=self.agent.model,
        )

    async def _fail(self, exc: ProviderError) -> TurnFinished:
        """A provider error ended the reply. When text of it had arrived (a stream cut off by a
        dropped connection, a stall or an error event), that text is stored, followed by
        :func:`~yak.agent.types.incomplete_mark` of why it stopped, and the turn reports
        ``cut_off``; otherwise :func:`~yak.agent.types.no_reply_mark` of the error is stored and
        the turn reports ``no_reply``. Either way the turn is ``failed`` and publishes no
        ``TurnCompleted``."""
        text = "".join(self.streamed)
        self.streamed = []
        self.streaming = False
        if not text.strip():
            # No word arrived: the question stays unanswered, and a mark saying why is stored
            # so a reopened session shows it (and offers Retry).
            await self._store_partial("", no_reply_mark(str(exc)))
            return self._finish(
                TurnFinished(
                    status="failed",
                    text="",
                    usage=self.usage,
                    error=str(exc),
                    no_reply=" ".join(str(exc).split()),
                    reason=exc.reason,
                )
            )
        cause = cut_cause(exc)
        await self._store_partial(text, incomplete_mark(cause))
        return self._finish(
            TurnFinished(
                status="failed",
                text=text,
                usage=self.usage,
                error=f"The reply was cut off ({cause}); the part that arrived is kept in the "
                "conversation, marked incomplete. Send the question again for a whole answer.",
                cut_off=cause,
                reason=exc.reason,
            )
        )

    def _complete(self, status: str, *, error: str | None = None) -> TurnFinished:
        finished = self._finish(
            TurnFinished(
                status=status,
                text=self.last_text,
                usage=self.usage,
                error=error,
                stop_reason=self.last_stop,
            )
        )
        if self.agent.bus is not None:
            self.agent.bus.publish(
                TurnCompleted(workspace_id=self.workspace.id, session_id=self.session_id)
            )
        return finished

    def _finish(self, finished: TurnFinished) -> TurnFinished:
        self.emit(finished)
        return finished
