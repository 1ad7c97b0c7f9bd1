"""``yak ask``: one agent turn without a window, then the workspace's memory refresh.

``yak ask [-w DIR] [--model M] [--yes] [--no-refresh] PROMPT`` (DESIGN.md section 6):

- the turn runs in a new session of the workspace (titled from the prompt), recorded in the
  same database as the app's;
- the reply streams to stdout as it arrives; each tool call is one short line on stderr;
- reads run freely; writes, edits and commands are denied unless ``--yes`` (the model is told
  "denied: run with --yes to allow");
- ``PROMPT`` ``-`` reads the prompt from stdin;
- after a turn that ended normally, unless ``--no-refresh``, the workspace's memory refresh runs
  at once; its outcome is one line on stderr and a failed refresh never changes the exit code;
- exit codes: 0 done, 2 bad ``-w`` or an empty prompt, 4 provider failure (one line on stderr);
  Ctrl-C stops the turn, keeps what was said, and exits 130.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from yak.errors import MissingApiKey, UsageError

DENIED_NOTE = "denied: run with --yes to allow"


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``ask`` command."""
    p = sub.add_parser("ask", help="one agent turn without a window",
                       description="Run one agent turn in a workspace and print the reply, then "
                       "refresh the workspace's memory.")
    p.add_argument("-w", "--workspace", metavar="DIR",
                   help="the workspace folder (default: the current directory)")
    p.add_argument("--model", metavar="M", help="the chat model for this turn (default: "
                   "$YAK_MODEL or the model in Settings)")
    p.add_argument("--yes", action="store_true",
                   help="allow the agent to write files, edit files and run commands")
    p.add_argument("--no-refresh", action="store_true",
                   help="do not refresh the workspace's memory after the turn")
    p.add_argument("prompt", metavar="PROMPT", help="what to ask; '-' reads it from stdin")
    p.set_defaults(func=run)


def read_prompt(value: str) -> str:
    """The prompt text: ``value``, or stdin when it is ``-``.

    Raises:
        UsageError: the prompt is empty or blank, or stdin is not text.
    """
    if value == "-":
        try:
            value = sys.stdin.read()
        except UnicodeDecodeError:
            raise UsageError("the prompt on stdin is not text in the terminal's encoding") \
                from None
    if not value.strip():
        raise UsageError("the prompt is empty; say what to ask (or pass '-' and pipe it in)")
    return value


def run(args: argparse.Namespace, ctx: Any) -> int:
    """Run ``yak ask``; returns the exit status.

    Raises:
        UsageError: an empty prompt (exit 2). WorkspaceNotFound: ``-w`` is not a folder (2).
        MissingApiKey: no key anywhere (4). StoreError: the database failed.
    """
    from yak.memory.store import MemoryStore

    prompt = read_prompt(args.prompt)
    path = args.workspace if args.workspace is not None else os.getcwd()
    workspace = MemoryStore(ctx.db).open_workspace(path, mark_opened=False)
    settings = ctx.settings
    if args.model:
        settings = settings.with_changes(chat_model=args.model)
    from yak.llm import credentials

    if not credentials.has_api_key():
        raise MissingApiKey()
    return asyncio.run(_ask(ctx, workspace, prompt, settings=settings, allow=args.yes,
                            refresh=not args.no_refresh))


class _Printer:
    """Streams reply text to stdout and tool calls to stderr, keeping lines apart."""

    def __init__(self) -> None:
        self.mid_line = False  # stdout has text without its newline yet

    def __call__(self, event: Any) -> None:
        from yak.agent.types import TextDelta, ToolCallFinished

        if isinstance(event, TextDelta):
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, ToolCallFinished):
            self.end_line()
            print(f"[{event.tool}] {event.target}: {event.summary}", file=sys.stderr,
                  flush=True)

    def end_line(self) -> None:
        if self.mid_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.mid_line = False


async def _ask(ctx: Any, workspace: Any, prompt: str, *, settings: Any, allow: bool,
               refresh: bool) -> int:
    from yak.agent.types import ApprovalDecision
    from yak.chat.service import ChatService, title_from_prompt
    from yak.events import EventBus

    service = ChatService(db=ctx.db, bus=EventBus(), settings=lambda: settings)

    async def approver(_request: Any) -> ApprovalDecision:
        return ApprovalDecision.ALLOW_ONCE if allow else ApprovalDecision.DENY

    printer = _Printer()
    session = await service.create_session(workspace.id, title_from_prompt(prompt))
    try:
        finished = await service.send(workspace, session.id, prompt, approver=approver,
                                      on_event=printer, denied_note=DENIED_NOTE)
    finally:
        printer.end_line()
    if finished.status == "failed":
        print(f"yak: {finished.error}", file=sys.stderr)
        return 4
    if finished.status == "tool_limit" and finished.error:
        print(f"yak: {finished.error}", file=sys.stderr)
    if refresh:
        await _refresh_after_turn(ctx, workspace, settings=settings)
    return 0


async def _refresh_after_turn(ctx: Any, workspace: Any, *, settings: Any) -> None:
    """Run the workspace's memory refresh now and report it on stderr; never raises for a
    refresh that fails (the turn's exit code stands)."""
    from yak.db.conversations import ConversationStore
    from yak.domain import RefreshStatus
    from yak.errors import YakError
    from yak.llm.provider import Provider
    from yak.memory.refresh import MemoryRefresher
    from yak.memory.store import MemoryStore

    if not workspace.memory_enabled:
        return
    provider = Provider(base_url=settings.base_url)
    try:
        refresher = MemoryRefresher(store=MemoryStore(ctx.db),
                                    conversations=ConversationStore(ctx.db),
                                    provider_factory=lambda: provider,
                                    settings=lambda: settings)
        outcome = await refresher.refresh(workspace.id)
    except YakError as exc:
        print(f"yak: memory refresh failed: {exc}", file=sys.stderr)
        return
    finally:
        await provider.aclose()
    if outcome.status in (RefreshStatus.APPLIED, RefreshStatus.UP_TO_DATE):
        lines = f"{outcome.lines} line{'' if outcome.lines == 1 else 's'}"
        print(f"memory: {outcome.status}, version {outcome.version}, {lines}",
              file=sys.stderr)
    else:
        reason = outcome.reason.rstrip(". ")
        print(f"yak: memory refresh {outcome.status}: {reason}; the memory document is "
              "unchanged.", file=sys.stderr)
