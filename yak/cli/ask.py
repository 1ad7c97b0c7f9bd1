"""``yak ask``: one agent turn without a window, then the workspace's memory refresh.

``yak ask [-w DIR] [--model M] [--yes] [--no-refresh] [--timeout SECONDS]
[--continue | --session ID] PROMPT`` (``--timeout`` bounds each model request, retries included;
see
``docs/cli.md``, "The command line"):

- ``-w`` is resolved like every command that writes (the folder must exist; it is registered
  when new);
- the turn runs in a new session of the workspace (titled from the prompt) through the core's
  chat service, recorded in the same database as the app's; with ``--continue`` it runs in the
  workspace's most recently active session instead, and with ``--session ID`` in that session
  of the workspace (its full id or a unique prefix of at least ``MIN_ID_PREFIX``
  characters), so the model sees the conversation so far and the turn is stored in it;
- the reply streams to stdout as it arrives; each tool call is one short line on stderr;
- reads run freely; writes, edits and commands are refused unless ``--yes`` (the model is told
  "denied: run with --yes to allow", the tool line says "needs --yes to write or run commands");
  each command's line names its confinement (``sandbox: landlock`` / ``bubblewrap`` /
  ``none``), and an unconfined setting is warned about first;
- ``PROMPT`` ``-`` reads the prompt from stdin;
- after a turn that ended normally, unless ``--no-refresh``, the workspace's memory refresh runs
  at once through the core's refresh scheduler, announced on stderr ("Refreshing the memory…
  (Ctrl-C skips it)"); its outcome is one line on stderr, and a failed refresh, or one skipped
  with Ctrl-C (the answer is kept; its conversation waits for the next refresh), never changes
  the exit code;
- exit codes: 0 done, 2 bad ``-w``, an empty prompt, nothing to ``--continue`` or a
  ``--session`` this workspace does not have (one line, before any request and without
  registering the folder), 4 provider failure, or a reply that was empty or cut off at the
  output limit (one line on stderr); Ctrl-C stops the turn,
  keeps what was said, and exits 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from yak import limits
from yak.agent.sandbox import choose
from yak.agent.types import ApprovalDecision
from yak.chat.service import title_from_prompt
from yak.cli import output, turn_output
from yak.cli.context import (
    Context,
    add_timeout_option,
    apply_timeout,
    workspace_path,
)
from yak.cli.parsing import workspace_option
from yak.domain import SessionOrigin
from yak.errors import MissingApiKey, UsageError, YakError
from yak.ids import CONVERSATION_IDS, MIN_ID_PREFIX, id_prefix, only_match
from yak.presenters import turn_failure

if TYPE_CHECKING:
    from yak.agent.types import ApprovalRequest
    from yak.core import Core
    from yak.domain import ChatSession, Workspace

DENIED_NOTE = "denied: run with --yes to allow"
UNCONFINED_WARNING = (
    "commands run without a sandbox (YAK_COMMAND_SANDBOX=none): an approved command can write "
    "anywhere you can"
)
# What a call refused for want of --yes shows (nobody was asked, so not "denied by user").
DENIED_SUMMARY = "needs --yes to write or run commands"


def _ask_parser(p: argparse.ArgumentParser) -> None:
    workspace_option(p)
    p.add_argument(
        "--model",
        metavar="M",
        help="the chat model for this turn (default: $YAK_MODEL or the model in Settings)",
    )
    p.add_argument(
        "--yes",
        action="store_true",
        help="allow the agent to write files, edit files and run commands",
    )
    p.add_argument(
        "--no-refresh",
        action="store_true",
        help="do not refresh the workspace's memory after the turn",
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--continue",
        dest="continue_last",
        action="store_true",
        help="continue the workspace's most recent conversation instead of starting a new one",
    )
    which.add_argument(
        "--session",
        metavar="ID",
        help="continue this conversation of the workspace (its id, or a unique prefix of at "
        f"least {MIN_ID_PREFIX} characters)",
    )
    add_timeout_option(p)
    p.add_argument("prompt", metavar="PROMPT", help="what to ask; '-' reads it from stdin")
    p.set_defaults(func=run)


PARSERS = {"ask": _ask_parser}


def read_prompt(value: str) -> str:
    """The prompt text: ``value``, or stdin when it is ``-``.

    Raises:
        UsageError: the prompt is empty or blank, or stdin is not text. TooLong: over
            ``yak.limits.CHAT_MESSAGE_CHARS`` characters.
    """
    if value == "-":
        try:
            value = sys.stdin.read()
        except UnicodeDecodeError:
            raise UsageError("the prompt on stdin is not text in the terminal's encoding") from None
    if not value.strip():
        raise UsageError("the prompt is empty; say what to ask (or pass '-' and pipe it in)")
    limits.check_chat_message(value, noun="prompt")
    try:  # bytes that are not UTF-8 arrive as surrogates (argv, a C-locale stdin)
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"the prompt is not UTF-8 text (invalid byte at offset {exc.start}); nothing was sent"
        ) from None
    return value


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Run ``yak ask``; returns the exit status.

    Raises:
        UsageError: an empty prompt, nothing to ``--continue``, or a ``--session`` the
            workspace does not have (exit 2). WorkspaceNotFound: ``-w`` is not a folder (2).
        MissingApiKey: no key anywhere (4). StoreError: the database failed.
    """
    prompt = read_prompt(args.prompt)
    if args.model:
        ctx.overrides["chat_model"] = args.model  # this turn's chat model
    apply_timeout(args, ctx)
    continuing = bool(args.continue_last or args.session is not None)

    async def work(core: Core) -> int:
        session: ChatSession | None = None
        if continuing:
            # Looked up without registering the folder, so a mistake changes nothing.
            found, stored = await core.workspaces.for_read(workspace_path(args))
            sessions = await core.chat.sessions(found.id) if stored else []
            session = _chosen_session(sessions, args.session, found.path)
        workspace = await core.workspaces.for_write(workspace_path(args))
        if not await core.settings.check_key():
            raise MissingApiKey()
        await _memory_elsewhere(core, workspace)
        return await _ask(
            core,
            workspace,
            prompt,
            session=session,
            allow=args.yes,
            refresh=not args.no_refresh,
            ctx=ctx,
        )

    return ctx.run(work)


async def _memory_elsewhere(core: Core, workspace: Workspace) -> None:
    """For a folder with no memory of its own, the lines on stderr ``show`` prints: the
    enclosing workspace's memory (which this conversation does not get), an orphan it looks
    like (``reattach``), the git main checkout's (``link``)."""
    if (await core.memory.read(workspace.id)).content:
        return
    output.scope_notes(
        workspace,
        enclosing=await core.workspaces.enclosing(workspace.path),
        renamed_from=await core.workspaces.renamed_from(workspace.path),
        worktree_main=await core.workspaces.worktree_main(workspace.path),
    )


def _chosen_session(sessions: Sequence[ChatSession], wanted: str | None, where: str) -> ChatSession:
    """The session to continue among the workspace's ``sessions`` (most recently active
    first): the first one when ``wanted`` is ``None`` (``--continue``), else the one whose id
    starts with it, case aside (``yak.ids``).

    Raises:
        UsageError: no session to continue; ``wanted`` is shorter than ``MIN_ID_PREFIX``,
            matches none of the workspace's sessions (an id of another workspace's session
            matches none) or several.
    """
    if wanted is None:
        if not sessions:
            raise UsageError(
                f"no conversation to continue in {where}; run yak ask without --continue "
                "to start one"
            )
        return sessions[0]
    key = id_prefix(wanted, CONVERSATION_IDS)
    matches = [s for s in sessions if s.id.upper().startswith(key)]
    return only_match(matches, wanted, CONVERSATION_IDS, where=where)


async def _ask(
    core: Core,
    workspace: Workspace,
    prompt: str,
    *,
    session: ChatSession | None,
    allow: bool,
    refresh: bool,
    ctx: Context,
) -> int:
    """One turn in ``session`` (``None``: a new session titled from the prompt), printed as
    it streams, then the memory refresh (which Ctrl-C skips: ``ctx``); returns the exit
    status."""

    async def approver(_request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.ALLOW_ONCE if allow else ApprovalDecision.DENY

    printer = turn_output.TurnPrinter()
    new_conversation = session is None
    if allow:
        confinement = choose(core.settings.current().command_sandbox)
        if confinement.kind == "none" and confinement.refusal is None:
            turn_output.turn_problem(f"warning: {UNCONFINED_WARNING}")
    if session is None:
        session = await core.chat.create_session(
            workspace.id, title_from_prompt(prompt), origin=SessionOrigin.ASK
        )
    try:
        finished = await core.chat.send(
            workspace,
            session.id,
            prompt,
            approver=approver,
            on_event=printer,
            denied_note=DENIED_NOTE,
            denied_summary=DENIED_SUMMARY,
        )
    finally:
        printer.end_line()
    if finished.status == "failed":
        where = "ask" if new_conversation else "ask_continued"
        error = finished.error or "the turn failed"
        turn_output.turn_problem(turn_failure(error, finished.reason, front_end=where))
        return 4
    if finished.status == "tool_limit" and finished.error:
        turn_output.turn_problem(finished.error)
    if finished.status == "completed" and finished.stop_reason == "max_tokens":
        turn_output.turn_problem(
            "the reply was cut off at the model's output limit (stop reason max_tokens); the "
            "part that arrived is printed above and kept in the conversation"
        )
        return 4
    if finished.status == "completed" and not finished.text.strip():
        turn_output.turn_problem("the model's reply was empty; there is nothing to print")
        return 4
    if refresh and workspace.memory_enabled:
        await _refresh_after_turn(core, workspace, ctx)
    return 0


async def _refresh_after_turn(core: Core, workspace: Workspace, ctx: Context) -> None:
    """Run the workspace's memory refresh now, saying so on stderr first (stdout stays the
    answer), and report it there; never raises for a refresh that fails or that a Ctrl-C
    skips (the turn's exit code stands: the answer was given and stored, and its
    conversation waits for the next refresh)."""
    try:
        with turn_output.quiet_warnings():
            outcome = await ctx.skippable(
                core.refresh.refresh_now(workspace.id), announce=turn_output.refreshing
            )
    except YakError as exc:
        turn_output.refresh_after_turn_failed(str(exc))
        return
    if outcome is None:
        turn_output.refresh_skipped()
        return
    turn_output.refresh_after_turn(outcome)
