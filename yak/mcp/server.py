"""The MCP server of ``yak mcp`` ("The MCP server" in docs/memory.md).

Four tools over the memory of the workspace the server was started in; no tool takes a
workspace or a path, so the scope comes from the launch folder, never from the model:

- ``memory_read()``: ``{"path", "version", "lines", "content"}`` (version 0 and empty for a
  folder that is not a workspace yet);
- ``memory_blame()``: ``{"path", "version", "lines": [{"line", "text", "version", "source",
  "created_at", "by_person"}]}``;
- ``memory_search(query)``: ``{"query", "matches": [{"line", "text"}]}``, the document's lines
  holding ``query`` (case-insensitive), this workspace only;
- ``memory_propose(reason, text | document)``: ``{"proposal_id", "base_version", "added",
  "removed", "reasons"}``; the change waits in the review inbox (``yak memory review``) and is
  never applied here. A folder that is not a workspace yet is registered by its first proposal.

A refusal or a bad argument is a tool error (``isError``) carrying one sentence; the server
keeps running. Everything on stdout is the protocol; logs go to the log file and warnings to
stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from yak import __version__
from yak.domain import count_lines
from yak.errors import UsageError, YakError
from yak.memory.document import iso_utc

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from yak.core import Core
    from yak.domain import Workspace

ORIGIN = "an agent over MCP"  # the proposal's first reason: "proposed by an agent over MCP: …"
INSTRUCTIONS = (
    "The memory of the project this server was started in: notes the developer keeps for "
    "agents (decisions, conventions, commands). Read it with memory_read and memory_search. "
    "To remember something, call memory_propose: the developer reviews every proposal before "
    "it changes the memory."
)


def build_server(core: Core, folder: str) -> MCPServer:
    """The MCP server for the workspace of ``folder`` (already checked by the caller).

    Args:
        core: the application core; the server never closes it.
        folder: the launch folder, resolved by the workspace registry on every call (so the
            first proposal's registration is seen by the next read).
    """
    server = MCPServer(name="yak", version=__version__, instructions=INSTRUCTIONS)

    async def guarded(work: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        try:
            return await work
        except YakError as exc:
            raise ToolError(str(exc)) from None

    async def stored() -> tuple[Workspace, bool]:
        return await core.workspaces.for_read(folder)

    @server.tool()
    async def memory_read() -> dict[str, Any]:
        """The project's memory document: its text, version and line count."""

        async def work() -> dict[str, Any]:
            workspace, known = await stored()
            if not known:
                return {"path": workspace.path, "version": 0, "lines": 0, "content": ""}
            document = await core.memory.read(workspace.id)
            return {
                "path": workspace.path,
                "version": document.version,
                "lines": count_lines(document.content),
                "content": document.content,
            }

        return await guarded(work())

    @server.tool()
    async def memory_blame() -> dict[str, Any]:
        """Where each line of the memory came from: the version that wrote it, its source
        (hand, import, refresh, proposal, restore), when, and whether a person wrote it."""

        async def work() -> dict[str, Any]:
            workspace, known = await stored()
            origins = await core.memory.blame(workspace.id) if known else []
            version = await core.memory.current_version(workspace.id) if known else 0
            return {
                "path": workspace.path,
                "version": version,
                "lines": [
                    {
                        "line": o.line,
                        "text": o.text,
                        "version": o.version,
                        "source": str(o.source),
                        "created_at": iso_utc(o.created_at),
                        "by_person": o.by_person,
                    }
                    for o in origins
                ],
            }

        return await guarded(work())

    @server.tool()
    async def memory_search(query: str) -> dict[str, Any]:
        """The lines of this project's memory that contain ``query`` (case-insensitive), with
        their line numbers."""

        async def work() -> dict[str, Any]:
            needle = query.strip().casefold()
            if not needle:
                raise UsageError("Give a word or phrase to search for in query.")
            workspace, known = await stored()
            content = (await core.memory.read(workspace.id)).content if known else ""
            matches = [
                {"line": number, "text": line}
                for number, line in enumerate(content.splitlines(), start=1)
                if needle in line.casefold()
            ]
            return {"query": query, "matches": matches}

        return await guarded(work())

    @server.tool()
    async def memory_propose(
        reason: str, text: str | None = None, document: str | None = None
    ) -> dict[str, Any]:
        """Propose a change to the project's memory: ``text`` holds line(s) to add at the end,
        or ``document`` a whole new document (give exactly one), and ``reason`` says why. The
        change is never applied directly: it waits for the developer's review. Returns the
        proposal's id."""

        async def work() -> dict[str, Any]:
            workspace = await core.workspaces.for_write(folder)
            proposal = await core.review.propose_from_agent(
                workspace.id,
                text=text,
                document=document,
                reason=reason,
                origin=ORIGIN,
                floor_ratio=core.settings.current().floor_ratio,
            )
            return {
                "proposal_id": proposal.id,
                "base_version": proposal.base_version,
                "added": proposal.added,
                "removed": proposal.removed,
                "reasons": list(proposal.reasons),
                "status": "waiting for review",
            }

        return await guarded(work())

    return server


async def serve(core: Core, folder: str) -> None:
    """Serve the workspace of ``folder`` on stdin/stdout until the client closes them.

    Raises:
        WorkspaceNotFound: ``folder`` is neither a folder nor a stored workspace.
    """
    await core.workspaces.for_read(folder)  # a bad launch folder fails before serving
    await build_server(core, folder).run_stdio_async()
