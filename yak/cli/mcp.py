"""``yak mcp [-w DIR]``: serve the workspace's memory to other agents over MCP on stdio (see
``yak.mcp.server``).

An agent starts it with pipes; a person who starts it by hand in a terminal (stdin is a TTY)
is told on stderr what it is, how an agent starts it, and how to stop it, instead of a silent
wait (stdout stays the protocol's).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from yak.cli import output
from yak.cli.context import Context, workspace_path
from yak.cli.parsing import workspace_option

if TYPE_CHECKING:
    from yak.core import Core


def _mcp_parser(p: argparse.ArgumentParser) -> None:
    workspace_option(p)
    p.set_defaults(func=cmd_mcp)


PARSERS = {"mcp": _mcp_parser}


def cmd_mcp(args: argparse.Namespace, ctx: Context) -> int:
    """``yak mcp``: serve until stdin closes; exit 0, or 2 for a bad folder."""

    async def work(core: Core) -> int:
        folder = workspace_path(args)
        workspace, _ = await core.workspaces.for_read(folder)  # a bad folder: its error first
        # The MCP SDK takes longer to import than the rest of the command line: only once the
        # folder is known to be good, so a mistyped -w is said at once.
        from yak.mcp.server import serve

        if sys.stdin is not None and sys.stdin.isatty():
            output.note(started_by_hand(workspace.path))
        await serve(core, folder)
        return 0

    return ctx.run(work)


def started_by_hand(path: str) -> str:
    """What ``yak mcp`` says on stderr when a person starts it in a terminal."""
    return (
        f"yak mcp serves the memory of {path} to an agent over MCP on stdin and stdout, and "
        "waits for one. An agent starts it itself (e.g. 'claude mcp add yak -- yak mcp -w "
        "DIR'); press Ctrl+D (or Ctrl+C) to stop."
    )
