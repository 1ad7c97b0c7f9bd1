"""``yak mcp [-w DIR]``: serve the workspace's memory to other agents over MCP on stdio (see
``yak.mcp.server``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from yak.cli.context import Context, workspace_path
from yak.cli.parsing import workspace_option

if TYPE_CHECKING:
    from yak.core import Core


def _mcp_parser(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Serve the memory of one workspace to other agents (Claude Code, Codex, Cursor and "
        "others) as an MCP server on stdin/stdout, until the client disconnects. Tools: "
        "memory_read, memory_blame, memory_search and memory_propose; a proposal waits in "
        "'yak memory review' and is never applied directly. The workspace is the folder given "
        "here, never one the agent names."
    )
    workspace_option(p)
    p.set_defaults(func=cmd_mcp)


PARSERS = {"mcp": _mcp_parser}


def cmd_mcp(args: argparse.Namespace, ctx: Context) -> int:
    """``yak mcp``: serve until stdin closes; exit 0, or 2 for a bad folder."""

    async def work(core: Core) -> int:
        # The MCP SDK takes longer to import than the rest of the command line: only here.
        from yak.mcp.server import serve

        await serve(core, workspace_path(args))
        return 0

    return ctx.run(work)
