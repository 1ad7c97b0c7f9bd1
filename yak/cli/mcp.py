"""``yak mcp [-w DIR]``: serve the workspace's memory to other agents over MCP on stdio (see
``yak.mcp.server``). Building the parser imports nothing beyond ``argparse`` (see ``yak.cli``);
the handler imports the ``mcp`` SDK when it runs.
"""

from __future__ import annotations

import argparse

from yak.cli import workspace_path

TYPE_CHECKING = False  # not ``typing``'s: importing it would slow ``yak --help`` (see yak.cli)
if TYPE_CHECKING:
    from yak.cli import Context
    from yak.core import Core


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``mcp`` command."""
    p = sub.add_parser(
        "mcp",
        help="serve this workspace's memory to other agents (MCP over stdio)",
        description="Serve the memory of one workspace to other agents (Claude Code, Codex, "
        "Cursor and others) as an MCP server on stdin/stdout, until the client disconnects. Tools: "
        "memory_read, memory_blame, memory_search and memory_propose; a proposal waits in "
        "'yak memory review' and is never applied directly. The workspace is the folder "
        "given here, never one the agent names.",
    )
    p.add_argument(
        "-w",
        "--workspace",
        metavar="DIR",
        default=None,
        help="the workspace folder (default: the current directory)",
    )
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, ctx: Context) -> int:
    """``yak mcp``: serve until stdin closes; exit 0, or 2 for a bad folder."""

    async def work(core: Core) -> int:
        from yak.mcp.server import serve

        await serve(core, workspace_path(args))
        return 0

    return ctx.run(work)
