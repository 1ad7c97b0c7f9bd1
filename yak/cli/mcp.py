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
