"""The MCP server of ``yak mcp`` ("The MCP server" in docs/memory.md).

Six tools over the memory of the workspace the server was started in; no tool takes a
workspace or a path, so the scope comes from the launch folder, never from the model. Their
descriptions (what the model reads) are plain prose with the limits in numbers:

- ``memory_read(as_of?)``: ``{"path", "version", "lines", "content", "elsewhere"}`` (with
  ``as_of``, a date or a time: the version current then, ``elsewhere`` null; version 0 and
  empty for a folder that is not a workspace yet; ``elsewhere``, for a folder with no memory of
  its own, is ``{"enclosing", "renamed_from", "note"}``: the enclosing workspace's memory and a
  workspace whose folder is gone that this one looks like, each ``{"path", "lines"}`` or null,
  and a sentence saying so with the command a person runs; else null);
- ``memory_blame()``: ``{"path", "version", "lines": [{"line", "text", "version", "source",
  "created_at", "by_person", "evidence"}]}`` (``evidence``: ``{"line", "session_id",
  "message_id", "speaker", "quote"}`` or ``null``, "Evidence" in docs/memory.md);
- ``memory_search(query)``: ``{"query", "matches": [{"line", "text"}]}``, the document's lines
  holding ``query`` (case-insensitive), this workspace only;
- ``memory_status()``: ``{"path", "memory_enabled", "mode", "version", "lines",
  "can_propose", "why_not", "waiting_for_review", "your_proposals", "elsewhere"}``;
- ``memory_propose(reason, text | document, after_line?, heading?)``: ``{"proposal_id",
  "base_version", "added", "removed", "reasons", "status", "lands",
  "your_earlier_proposals"}``; the change waits in the review inbox (``yak memory review``)
  and is never applied here; added lines go after ``after_line``, under ``heading``, or into
  the best-matching section ("The inbox" in docs/memory.md). A folder that is not a
  workspace yet is registered by its first proposal; a memory switched off takes none;
- ``memory_withdraw(proposal_id)``: ``{"proposal_id", "status": "withdrawn",
  "your_earlier_proposals"}``; takes back one of this server's proposals still waiting.

"Your" proposals are those made through this server process (each ``yak mcp`` start gets its
own id, ``mcp_…``, stored with the proposals it takes), never those of another process whose
client gives the same name; each is listed with what became of it (waiting, conflicting,
accepted → version N, rejected, superseded, withdrawn). The client's name is kept with a
proposal to show the person who made it.

A refusal or a bad argument is a tool error (``isError``) carrying one sentence; the server
keeps running. Everything on stdout is the protocol; logs go to the log file and warnings to
stderr.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from yak import __version__
from yak.domain import MAX_CHARS, MAX_LINES, ProposalOrigin, count_lines
from yak.errors import UsageError, YakError
from yak.ids import new_id
from yak.limits import SEARCH_QUERY_CHARS, TooLong
from yak.memory.document import iso_utc
from yak.memory.freshness.dates import parse_moment
from yak.memory.history.provenance import evidence_json
from yak.memory.inbox.review import REASON_CHARS
from yak.presenters import (
    enclosing_words,
    held_json,
    landing_words,
    proposal_outcome,
    renamed_words,
)

if TYPE_CHECKING:
    from yak.core import Core
    from yak.domain import MemorySummary, Workspace

ORIGIN = "an agent over MCP"  # the proposal's first reason: "proposed by an agent over MCP: …"
_EARLIER = 10  # how many of a client's earlier proposals a result lists
_P = ParamSpec("_P")
MEMORY_OFF = "The memory of this project is switched off (yak memory enable turns it on)"

# What the model reads about each tool: plain prose, limits in numbers.
READ = (
    "Read the project's memory document: its text, version number and line count. When this "
    "folder has no memory of its own, elsewhere says which memory it could use (the enclosing "
    "project's, or one left behind by a renamed folder) and how the developer gets it. With "
    "as_of, the document as it stood then instead."
)
AS_OF = (
    "A date (YYYY-MM-DD: the end of that day, local time) or a time (YYYY-MM-DDTHH:MM): read "
    "the document as it stood then, from its stored versions. Leave out for the current one."
)
STATUS = (
    "Tell whether the project's memory is on, its review mode (auto: refreshes apply by "
    "themselves; review: every change waits for the developer), its version and line count, "
    "whether you can propose changes now, how many proposals wait for review, and what "
    "became of your earlier proposals (the newest 10); when this folder has no memory of its "
    "own, elsewhere says which one it could use."
)
BLAME = (
    "Tell where each line of the memory came from: the version that wrote it, its source "
    "(hand, import, refresh, proposal or restore), when, whether a person wrote it, and "
    "the evidence behind a line a refresh wrote: the passage of a conversation that said it "
    "(who said it, user, assistant or tool_call, and a quote of at most 200 characters), or "
    "null when none was recorded."
)
SEARCH = (
    "Find the lines of this project's memory that contain a word or phrase, ignoring case, "
    "with their line numbers. Only this project's memory is searched. The query is at most "
    f"{SEARCH_QUERY_CHARS:,} characters."
)
PROPOSE = (
    "Propose a change to the project's memory: either lines to add (text) or a whole new "
    "document (document), never both, with the reason in a sentence. Added lines go after "
    "a given line (after_line), or at the end of the section with a given title (heading), "
    "or, with neither, into the section whose words match them best. The change is never "
    f"applied here: it waits for the developer's review. The memory holds at most {MAX_LINES} "
    f"lines and {MAX_CHARS:,} characters; a whole new document must keep most of the current "
    "one, and secrets are replaced by markers. The result gives the proposal's id, where its "
    "lines land, and what became of your earlier proposals."
)
WITHDRAW = (
    "Take back one of your proposals that still waits for review (its id from memory_propose "
    "or memory_status), for example when you learn it was wrong. The memory is not changed."
)
PROPOSAL_ID = "The id of your proposal (or its first 6 or more characters)."
REASON = f"Why the memory should change, in a sentence (at most {REASON_CHARS} characters kept)."
TEXT = "One or more lines to add, separated by newlines."
DOCUMENT = "The whole new document, replacing the current one."
AFTER_LINE = "Put the added lines after this line number (1 is the first line; 0 is the top)."
HEADING = "Put the added lines at the end of the section with this title line."
INSTRUCTIONS = (
    "The memory of the project this server was started in: notes the developer keeps for "
    "agents (decisions, conventions, commands). Read it with memory_read and memory_search. "
    "To remember something, call memory_propose: the developer reviews every proposal before "
    "it changes the memory."
)


def _tool_error(
    method: Callable[_P, Awaitable[dict[str, Any]]],
) -> Callable[_P, Awaitable[dict[str, Any]]]:
    """``method`` with a ``YakError`` raised as a ``ToolError`` carrying its sentence (what the
    client sees as ``isError``); the signature is kept for the SDK's argument schema."""

    @functools.wraps(method)
    async def guarded(*args: _P.args, **kwargs: _P.kwargs) -> dict[str, Any]:
        try:
            return await method(*args, **kwargs)
        except YakError as exc:
            raise ToolError(str(exc)) from None

    return guarded


class MemoryTools:
    """The six MCP tools over the memory of one launch folder, one method a tool; each returns
    the tool's structured result (the shapes in this module's docstring) and raises
    ``ToolError`` with one sentence for a refusal or a bad argument.

    Args:
        core: the application core; never closed here.
        folder: the launch folder, resolved by the workspace registry on every call (so the
            first proposal's registration is seen by the next read).
        owner: who this server is, for the proposals it takes (``mcp_…``); the client's name is
            self-reported and two agents may give the same one. A new id by default.
    """

    def __init__(self, core: Core, folder: str, *, owner: str | None = None) -> None:
        self._core = core
        self._folder = folder
        self.owner = owner or f"mcp_{new_id()}"

    @_tool_error
    async def memory_read(
        self, as_of: Annotated[str | None, Field(description=AS_OF)] = None
    ) -> dict[str, Any]:
        """The ``memory_read`` tool; with ``as_of`` the document as it stood then."""
        workspace, known = await self._core.workspaces.for_read(self._folder)
        if as_of is not None:
            moment = parse_moment(as_of, option="as_of")
            then = await self._core.memory.revision_as_of(workspace.id, moment) if known else None
            content, version = (then.content, then.version) if then else ("", 0)
            elsewhere = None
        else:
            document = await self._core.memory.read(workspace.id) if known else None
            content, version = (document.content, document.version) if document else ("", 0)
            elsewhere = await self._elsewhere(workspace, content)
        return {
            "path": workspace.path,
            "version": version,
            "lines": count_lines(content),
            "content": content,
            "elsewhere": elsewhere,
        }

    @_tool_error
    async def memory_status(self) -> dict[str, Any]:
        """The ``memory_status`` tool."""
        workspace, known = await self._core.workspaces.for_read(self._folder)
        document = await self._core.memory.read(workspace.id) if known else None
        pending = await self._core.review.proposals(workspace.id) if known else []
        return {
            "path": workspace.path,
            "memory_enabled": workspace.memory_enabled,
            "mode": str(workspace.review_mode),
            "version": document.version if document else 0,
            "lines": count_lines(document.content) if document else 0,
            "can_propose": workspace.memory_enabled,
            "why_not": None if workspace.memory_enabled else MEMORY_OFF,
            "waiting_for_review": len(pending),
            "your_proposals": await self._earlier(workspace.id) if known else [],
            "elsewhere": await self._elsewhere(workspace, document.content if document else ""),
        }

    @_tool_error
    async def memory_blame(self) -> dict[str, Any]:
        """The ``memory_blame`` tool."""
        workspace, known = await self._core.workspaces.for_read(self._folder)
        origins = await self._core.memory.blame(workspace.id) if known else []
        version = await self._core.memory.current_version(workspace.id) if known else 0
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
                    "evidence": evidence_json(o.evidence),
                }
                for o in origins
            ],
        }

    @_tool_error
    async def memory_search(
        self,
        query: Annotated[str, Field(description="The word or phrase to find (case-insensitive).")],
    ) -> dict[str, Any]:
        """The ``memory_search`` tool."""
        needle = query.strip().casefold()
        if not needle:
            raise UsageError("Give a word or phrase to search for in query.")
        if len(query) > SEARCH_QUERY_CHARS:
            raise TooLong(
                f"The query has {len(query):,} characters; a search takes at most "
                f"{SEARCH_QUERY_CHARS:,} (a line of the memory is shorter). Nothing was "
                "searched.",
                chars=len(query),
                limit=SEARCH_QUERY_CHARS,
            )
        workspace, known = await self._core.workspaces.for_read(self._folder)
        content = (await self._core.memory.read(workspace.id)).content if known else ""
        matches = [
            {"line": number, "text": line}
            for number, line in enumerate(content.splitlines(), start=1)
            if needle in line.casefold()
        ]
        return {"query": query, "matches": matches}

    @_tool_error
    async def memory_propose(
        self,
        reason: Annotated[str, Field(description=REASON)],
        text: Annotated[str | None, Field(description=TEXT)] = None,
        document: Annotated[str | None, Field(description=DOCUMENT)] = None,
        after_line: Annotated[int | None, Field(description=AFTER_LINE)] = None,
        heading: Annotated[str | None, Field(description=HEADING)] = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        """The ``memory_propose`` tool; ``ctx`` (the SDK's, per call) gives the client's name."""
        workspace = await self._core.workspaces.for_write(self._folder)
        if not workspace.memory_enabled:
            raise UsageError(f"{MEMORY_OFF}; nothing was proposed.")
        proposal, lands = await self._core.review.propose_from_agent(
            workspace.id,
            text=text,
            document=document,
            reason=reason,
            origin=ORIGIN,
            client=_client_name(ctx),
            owner=self.owner,
            after_line=after_line,
            heading=heading,
            floor_ratio=self._core.settings.current().floor_ratio,
        )
        return {
            "proposal_id": proposal.id,
            "base_version": proposal.base_version,
            "added": proposal.added,
            "removed": proposal.removed,
            "reasons": list(proposal.reasons),
            "held": [held_json(held) for held in proposal.held_lines],
            "status": "waiting for review",
            "lands": landing_words(lands.line, lands.section) if lands else None,
            "your_earlier_proposals": await self._earlier(workspace.id, but=proposal.id),
        }

    @_tool_error
    async def memory_withdraw(
        self,
        proposal_id: Annotated[str, Field(description=PROPOSAL_ID)],
    ) -> dict[str, Any]:
        """The ``memory_withdraw`` tool."""
        workspace, _known = await self._core.workspaces.for_read(self._folder)
        withdrawn = await self._core.review.withdraw(workspace.id, proposal_id, owner=self.owner)
        return {
            "proposal_id": withdrawn.id,
            "status": str(withdrawn.status),
            "your_earlier_proposals": await self._earlier(workspace.id, but=withdrawn.id),
        }

    async def _elsewhere(self, workspace: Workspace, content: str) -> dict[str, Any] | None:
        """For a folder with no memory of its own, the memory it could use: the enclosing
        workspace's, an orphan it looks like; ``None`` when it has one or there is none."""
        if content:
            return None
        enclosing = await self._core.workspaces.enclosing(workspace.path)
        renamed = await self._core.workspaces.renamed_from(workspace.path)
        if enclosing is None and renamed is None:
            return None
        notes = [
            renamed_words(workspace.path, renamed) if renamed else "",
            enclosing_words(workspace.path, enclosing) if enclosing else "",
        ]
        return {
            "enclosing": _summary_json(enclosing),
            "renamed_from": _summary_json(renamed),
            "note": " ".join(note for note in notes if note),
        }

    async def _earlier(self, workspace_id: str, but: str = "") -> list[dict[str, Any]]:
        """What became of this server's earlier proposals (the newest ``_EARLIER``)."""
        mine = [
            p
            for p in await self._core.review.proposals(workspace_id, pending_only=False)
            if p.origin is ProposalOrigin.AGENT and p.owner == self.owner and p.id != but
        ]
        return [
            {
                "proposal_id": p.id,
                "status": str(p.status),
                "outcome": proposal_outcome(p),
                "result_version": p.result_version,
                "conflicts_with": p.conflicts_with,
            }
            for p in mine[-_EARLIER:]
        ]


def _client_name(ctx: Context | None) -> str | None:
    """The name the client gave when it connected (``None``: none, or blank)."""
    params = ctx.session.client_params if ctx is not None else None
    name = params.client_info.name if params is not None else None
    return name.strip() or None if name else None


def _summary_json(summary: MemorySummary | None) -> dict[str, Any] | None:
    return None if summary is None else {"path": summary.workspace.path, "lines": summary.lines}


def build_server(core: Core, folder: str) -> MCPServer:
    """The MCP server for the workspace of ``folder`` (already checked by the caller): the
    methods of :class:`MemoryTools` registered as its tools, each with the description the
    model reads."""
    server = MCPServer(name="yak", version=__version__, instructions=INSTRUCTIONS)
    tools = MemoryTools(core, folder)
    for method, description in (
        (tools.memory_read, READ),
        (tools.memory_status, STATUS),
        (tools.memory_blame, BLAME),
        (tools.memory_search, SEARCH),
        (tools.memory_propose, PROPOSE),
        (tools.memory_withdraw, WITHDRAW),
    ):
        server.add_tool(method, description=description)
    return server


async def serve(core: Core, folder: str) -> None:
    """Serve the workspace of ``folder`` on stdin/stdout until the client closes them.

    Raises:
        WorkspaceNotFound: ``folder`` is neither a folder nor a stored workspace.
    """
    await core.workspaces.for_read(folder)  # a bad launch folder fails before serving
    await build_server(core, folder).run_stdio_async()
