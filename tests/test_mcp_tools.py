"""Each tool of ``yak mcp`` called alone, as a method of ``MemoryTools`` on the test's core
(no stdio, no client session): what the caller gets back, and the one sentence of a refusal.
``tests/test_mcp.py`` drives the same tools through a real stdio session."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from tests.support.builders import project_folder, workspace_with_document
from yak.mcp.server import MemoryTools

SECTIONS = (
    "Project structure\n- yak is a Qt desktop app\n- the core lives in yak/\n\n"
    "Conventions\n- Python 3.11, formatted with ruff\n- tests run with pytest\n\n"
    "Decisions\n- SQLite is the default database\n"
)


async def test_memory_read_gives_the_stored_document_and_an_empty_one_for_a_new_folder(
    core, tmp_path
):
    """``memory_read``: the stored text, its version and line count, ``elsewhere`` null; a
    folder Yak has never seen reads as version 0 and empty."""
    folder = project_folder(tmp_path, "proj")
    await workspace_with_document(core, folder, SECTIONS)

    read = await MemoryTools(core, str(folder)).memory_read()
    assert read == {
        "path": str(folder),
        "version": 1,
        "lines": 10,
        "content": SECTIONS,
        "elsewhere": None,
    }
    fresh = await MemoryTools(core, str(project_folder(tmp_path, "fresh"))).memory_read()
    assert (fresh["version"], fresh["lines"], fresh["content"]) == (0, 0, "")


async def test_memory_status_tells_mode_size_and_what_waits(core, tmp_path):
    """``memory_status``: on, auto, version and lines; one proposal of this server waiting is
    counted and listed as its own."""
    folder = project_folder(tmp_path, "proj")
    await workspace_with_document(core, folder, SECTIONS)
    tools = MemoryTools(core, str(folder))
    made = await tools.memory_propose(reason="caching", text="- use Redis")

    status = await tools.memory_status()
    assert {k: v for k, v in status.items() if k != "your_proposals"} == {
        "path": str(folder),
        "memory_enabled": True,
        "mode": "auto",
        "version": 1,
        "lines": 10,
        "can_propose": True,
        "why_not": None,
        "waiting_for_review": 1,
        "elsewhere": None,
    }
    [mine] = status["your_proposals"]
    assert (mine["proposal_id"], mine["status"], mine["outcome"]) == (
        made["proposal_id"],
        "pending",
        "waiting for review",
    )


async def test_memory_blame_names_each_lines_origin(core, tmp_path):
    """``memory_blame``: every line with the version that wrote it, its source and whether a
    person wrote it; no evidence for a hand-written line."""
    folder = project_folder(tmp_path, "proj")
    await workspace_with_document(core, folder, "Project: yak\n- lint with Ruff\n")

    blame = await MemoryTools(core, str(folder)).memory_blame()
    assert blame["version"] == 1
    assert [
        (b["line"], b["text"], b["version"], b["source"], b["by_person"], b["evidence"])
        for b in blame["lines"]
    ] == [
        (1, "Project: yak", 1, "hand", True, None),
        (2, "- lint with Ruff", 1, "hand", True, None),
    ]


async def test_memory_search_finds_lines_ignoring_case_and_refuses_an_empty_query(core, tmp_path):
    """``memory_search``: the matching lines with their numbers; a blank query is a tool error
    with one sentence."""
    folder = project_folder(tmp_path, "proj")
    await workspace_with_document(core, folder, SECTIONS)
    tools = MemoryTools(core, str(folder))

    assert await tools.memory_search(query="RUFF") == {
        "query": "RUFF",
        "matches": [{"line": 6, "text": "- Python 3.11, formatted with ruff"}],
    }
    with pytest.raises(ToolError, match=r"^Give a word or phrase to search for in query\.$"):
        await tools.memory_search(query="  ")


async def test_memory_propose_says_where_the_lines_land_and_never_writes(core, tmp_path):
    """``memory_propose``: lines under a heading land at the end of that section, a whole new
    document where its first added line is, each waiting for review while the document stays
    as it was; with the memory off, a tool error."""
    folder = project_folder(tmp_path, "proj")
    workspace = await workspace_with_document(core, folder, SECTIONS)
    tools = MemoryTools(core, str(folder))

    placed = await tools.memory_propose(
        reason="a team database", text="- PostgreSQL for teams", heading="Decisions"
    )
    assert {k: placed[k] for k in ("base_version", "added", "removed", "status", "lands")} == {
        "base_version": 1,
        "added": 1,
        "removed": 0,
        "status": "waiting for review",
        "lands": "lands at line 11, under 'Decisions'",
    }
    assert placed["reasons"][0] == "proposed by an agent over MCP: a team database"
    whole = await tools.memory_propose(
        reason="pytest flags",
        document=SECTIONS.replace("with pytest\n", "with pytest\n- pytest -q for quiet runs\n"),
    )
    assert whole["lands"] == "lands at line 8, under 'Conventions'"
    assert [p["proposal_id"] for p in whole["your_earlier_proposals"]] == [placed["proposal_id"]]
    assert (await core.memory.read(workspace.id)).content == SECTIONS

    await core.workspaces.set_memory_enabled(workspace.id, enabled=False)
    with pytest.raises(ToolError, match=r"switched off .*; nothing was proposed\.$"):
        await tools.memory_propose(reason="why", text="- more")


async def test_memory_withdraw_takes_back_only_this_servers_proposal(core, tmp_path):
    """``memory_withdraw``: another server (another owner) is refused in one sentence; this
    one's proposal ends withdrawn and leaves the inbox."""
    folder = project_folder(tmp_path, "proj")
    workspace = await workspace_with_document(core, folder, SECTIONS)
    tools = MemoryTools(core, str(folder))
    made = await tools.memory_propose(reason="caching", text="- use Redis")

    with pytest.raises(ToolError, match="was not made by this agent"):
        await MemoryTools(core, str(folder)).memory_withdraw(proposal_id=made["proposal_id"])
    withdrawn = await tools.memory_withdraw(proposal_id=made["proposal_id"][:8])
    assert withdrawn == {
        "proposal_id": made["proposal_id"],
        "status": "withdrawn",
        "your_earlier_proposals": [],
    }
    assert await core.review.proposals(workspace.id) == []
