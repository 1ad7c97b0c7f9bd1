"""``yak mcp`` as another agent uses it: the SDK's own MCP client (``ClientSession`` over
``stdio_client``) launches ``python -m yak mcp -w FOLDER`` with a private ``YAK_DATA_DIR``, and
talks to it over stdin/stdout. What the server did is then checked the way a user would: with
``yak memory review`` / ``show`` in separate processes, and the stored bytes through the test's
core."""

from __future__ import annotations

import json
from typing import Any

from mcp.client.session import ClientSession

from tests.support.builders import project_folder, workspace_with_document
from tests.support.cli import yak
from tests.support.mcp import mcp_session
from yak.domain import MAX_CHARS, MAX_LINES

TOOLS = {
    "memory_read",
    "memory_blame",
    "memory_search",
    "memory_propose",
    "memory_status",
    "memory_withdraw",
}
HAND = "Project: yak\n- lint with Ruff before committing\n- tests run offscreen\n"


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool call that must succeed: its structured result."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    """A tool call that must fail as a tool error: its one line of text."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    (content,) = result.content
    message = content.text
    assert "\n" not in message and "Traceback" not in message
    return message


def review(data_dir, folder) -> list[dict[str, Any]]:
    """``yak memory review -w folder --json``: the proposals waiting."""
    result = yak("memory", "review", "-w", folder, "--json", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


async def test_an_agent_reads_searches_blames_and_proposes_but_never_writes(
    core, data_dir, tmp_path
):
    """Over a real stdio session: the four tools are listed and none has a workspace or path
    argument; read returns the stored document, its version and line count; search finds a
    line case-insensitively with its number; blame names each line's origin; a proposal comes
    back with an id and then waits in ``yak memory review`` (reason "proposed by an agent over
    MCP: …") while ``yak memory show`` prints the document byte for byte as before. A second
    workspace's server sees none of it."""
    folder = project_folder(tmp_path, "proj")
    other = project_folder(tmp_path, "other")
    workspace = await workspace_with_document(core, folder, HAND)
    before = yak("memory", "show", "-w", folder, data_dir=data_dir).stdout

    async with mcp_session(data_dir, folder) as session:
        tools = (await session.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        for tool in tools:
            fields = set(tool.input_schema.get("properties", {}))
            assert not fields & {"workspace", "path", "folder", "dir", "directory", "cwd"}
        assert {t.name: set(t.input_schema.get("properties", {})) for t in tools} == {
            "memory_read": {"as_of"},
            "memory_blame": set(),
            "memory_search": {"query"},
            "memory_propose": {"reason", "text", "document", "after_line", "heading"},
            "memory_status": set(),
            "memory_withdraw": {"proposal_id"},
        }

        read = await call(session, "memory_read")
        assert (read["content"], read["version"], read["lines"]) == (HAND, 1, 3)

        found = await call(session, "memory_search", query="ruff")
        assert found["matches"] == [{"line": 2, "text": "- lint with Ruff before committing"}]
        assert (await call(session, "memory_search", query="postgres"))["matches"] == []

        blame = await call(session, "memory_blame")
        assert [
            (b["line"], b["text"], b["version"], b["source"], b["by_person"])
            for b in blame["lines"]
        ] == [
            (1, "Project: yak", 1, "hand", True),
            (2, "- lint with Ruff before committing", 1, "hand", True),
            (3, "- tests run offscreen", 1, "hand", True),
        ]

        proposed = await call(
            session,
            "memory_propose",
            text="- run make lint before pushing",
            reason="the user asked me to remember it",
        )
        assert proposed["base_version"] == 1
        assert (proposed["added"], proposed["removed"]) == (1, 0)
        # Still a proposal: the document a tool reads is the stored one.
        assert (await call(session, "memory_read"))["content"] == HAND

    waiting = review(data_dir, folder)
    assert [p["id"] for p in waiting] == [proposed["proposal_id"]]
    assert waiting[0]["reasons"][0] == (
        "proposed by an agent over MCP: the user asked me to remember it"
    )
    shown = yak(
        "memory", "review", proposed["proposal_id"], "-w", folder, "--json", data_dir=data_dir
    )
    assert json.loads(shown.stdout)["content"] == HAND + "- run make lint before pushing\n"
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == before == HAND.encode()
    assert (await core.memory.read(workspace.id)).version == 1

    async with mcp_session(data_dir, other) as session:
        read = await call(session, "memory_read")
        assert (read["content"], read["version"], read["lines"]) == ("", 0, 0)
        assert (await call(session, "memory_search", query="lint"))["matches"] == []
        assert (await call(session, "memory_blame"))["lines"] == []
    assert review(data_dir, other) == []


async def test_proposals_pass_the_rewrite_guards_and_errors_are_one_sentence(
    core, data_dir, tmp_path
):
    """A proposal over the ceiling, one that collapses the document (the floor), a placeholder,
    both or neither of text and document, no reason, and an empty search are tool errors with
    one sentence each; the server keeps serving, nothing waits for review and the document is
    unchanged."""
    folder = project_folder(tmp_path, "proj")
    notes = "".join(f"- note {n}: keep this decision about module {n}\n" for n in range(40))
    await workspace_with_document(core, folder, notes)

    async with mcp_session(data_dir, folder) as session:
        too_long = "".join(f"line {n}\n" for n in range(MAX_LINES + 5))
        message = await refused(session, "memory_propose", text=too_long, reason="more")
        assert message.endswith(
            f"Refused: the proposal has {MAX_LINES + 45} lines "
            f"(limit {MAX_LINES}); nothing was proposed."
        )
        huge = "x" * 20_000_000  # refused before any scan: a secret scan of it takes seconds
        message = await refused(session, "memory_propose", document=huge, reason="x" * 10**6)
        assert message.endswith(
            f"Refused: the proposal has 20,000,000 characters (limit {MAX_CHARS:,}); "
            "nothing was proposed."
        )
        message = await refused(session, "memory_propose", document="short\n", reason="tidy")
        assert "Refused: the proposal has 6 characters" in message
        message = await refused(
            session,
            "memory_propose",
            document=notes + "[rest of the document unchanged]\n",
            reason="tidy",
        )
        assert "placeholder" in message
        message = await refused(session, "memory_propose", text="a", document="b", reason="both")
        assert message.endswith(
            "Give either text (lines to add) or document (a whole new document), not both."
        )
        assert (await refused(session, "memory_propose", reason="none")).endswith(
            "Give the change: text (lines to add) or document (a whole new document)."
        )
        message = await refused(session, "memory_propose", text="- x", reason="  ")
        assert message.endswith("Say why in reason: the person reviewing the proposal reads it.")
        message = await refused(session, "memory_search", query=" ")
        assert message.endswith("Give a word or phrase to search for in query.")
        message = await refused(session, "memory_search", query="ruff " * 1_000)
        assert message.endswith(
            "The query has 5,000 characters; a search takes at most 1,000 (a line of the "
            "memory is shorter). Nothing was searched."
        )
        assert (await call(session, "memory_read"))["content"] == notes

    assert review(data_dir, folder) == []
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == notes.encode()


async def test_a_folder_that_is_not_a_workspace_reads_empty_and_a_proposal_registers_it(
    core, data_dir, tmp_path
):
    """A folder Yak has never seen: reading gives an empty document (version 0) without
    registering it; the first proposal registers the workspace
    and waits for review, while the document stays empty. A secret in a proposal (its text
    or its reason) is redacted before it is stored."""
    folder = project_folder(tmp_path, "fresh")

    async with mcp_session(data_dir, folder) as session:
        read = await call(session, "memory_read")
        assert (read["content"], read["version"]) == ("", 0)
        assert (await core.workspaces.for_read(str(folder)))[1] is False  # not registered

        proposed = await call(
            session,
            "memory_propose",
            text="Deploy key: sk-ant-api03-" + "a1B2c3D4e5" * 9 + "\n- deploys run on Fridays",
            reason="deployment notes, key sk-ant-api03-" + "Z9y8X7w6V5" * 9 + "\x1b]0;PWN\x07",
        )
        assert (await call(session, "memory_read"))["version"] == 0

    waiting = review(data_dir, folder)
    assert [p["id"] for p in waiting] == [proposed["proposal_id"]]
    content = json.loads(
        yak(
            "memory", "review", proposed["proposal_id"], "-w", folder, "--json", data_dir=data_dir
        ).stdout
    )["content"]
    assert "sk-ant-api03" not in content
    assert waiting[0]["reasons"][0].startswith(
        "proposed by an agent over MCP: deployment notes, key [REDACTED"
    )
    assert "sk-ant-api03" not in json.dumps(waiting)
    assert waiting[0]["flags"] == ["agent", "redacted:anthropic_key"]
    assert not any(ord(ch) < 32 for ch in waiting[0]["reasons"][0])  # no terminal escapes
    listed = yak("memory", "review", "-w", folder, data_dir=data_dir).stdout.decode()
    assert "  - secrets replaced by [REDACTED:…] markers: anthropic_key\n" in listed
    assert content.endswith("\n- deploys run on Fridays\n")
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == b""
    assert (await core.workspaces.for_read(str(folder)))[1] is True  # registered


def test_a_launch_folder_that_does_not_exist_is_one_line_and_exit_2(data_dir, tmp_path):
    """``yak mcp -w MISSING`` does not start serving: one line on stderr, exit 2, nothing on
    stdout (the protocol channel)."""
    result = yak("mcp", "-w", tmp_path / "missing", data_dir=data_dir)
    assert result.returncode == 2
    assert result.stdout == b""
    assert len(result.stderr.decode().strip().splitlines()) == 1


async def test_a_whole_new_document_waits_with_the_review_rules_reasons(core, data_dir, tmp_path):
    """``memory_propose(document=…)`` proposes the document as given; when it changes a line
    the person wrote, the review rules' reason follows the agent's, so the reviewer sees both.
    Accepting it with ``yak memory accept`` then writes exactly that document."""
    folder = project_folder(tmp_path, "proj")
    await workspace_with_document(core, folder, HAND)
    new = "Project: yak\n- lint with Ruff before committing\n- tests run offscreen with Xvfb\n"

    async with mcp_session(data_dir, folder) as session:
        proposed = await call(
            session, "memory_propose", document=new, reason="the tests need a display"
        )

    (waiting,) = review(data_dir, folder)
    assert waiting["reasons"] == [
        "proposed by an agent over MCP: the tests need a display",
        'it removes or changes 1 line you wrote: "- tests run offscreen"',
        "it removes 1 of 3 lines (more than 25%)",
    ]
    accepted = yak("memory", "accept", proposed["proposal_id"], "-w", folder, data_dir=data_dir)
    assert accepted.returncode == 0, accepted.stderr
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == new.encode()


SECTIONS = (
    "Project structure\n- yak is a Qt desktop app\n- the core lives in yak/\n\n"
    "Conventions\n- Python 3.11, formatted with ruff\n- tests run with pytest\n\n"
    "Decisions\n- SQLite is the default database\n"
)


async def test_status_placement_and_earlier_proposals_over_a_real_session(core, data_dir, tmp_path):
    """memory_status tells on/off, mode, version, lines and whether proposing is possible; a
    line proposed with no place lands under the section whose words match it, one with a
    heading under that heading (the proposals' documents compared byte for byte); the second
    result says what became of the first proposal (rejected meanwhile); every tool
    description is plain prose; with the memory off, status says so and a proposal is a tool
    error."""
    folder = project_folder(tmp_path, "proj")
    workspace = await workspace_with_document(core, folder, SECTIONS)

    async with mcp_session(data_dir, folder, client="Claude Code") as session:
        for tool in (await session.list_tools()).tools:
            description = tool.description or ""
            assert description and "``" not in description and "\n" not in description
            assert "  " not in description, description
        propose = next(t for t in (await session.list_tools()).tools if t.name == "memory_propose")
        assert "200 lines" in (propose.description or "")

        status = await call(session, "memory_status")
        assert {k: status[k] for k in ("memory_enabled", "mode", "version", "lines")} == {
            "memory_enabled": True,
            "mode": "auto",
            "version": 1,
            "lines": 10,
        }
        assert status["can_propose"] is True and status["your_proposals"] == []

        unplaced = await call(
            session, "memory_propose", text="- run pytest under xvfb-run", reason="UI tests"
        )
        assert unplaced["lands"] == "lands at line 8, under 'Conventions'"
        assert unplaced["your_earlier_proposals"] == []
        shown = yak(
            "memory", "review", unplaced["proposal_id"], "-w", folder, "--json", data_dir=data_dir
        )
        assert json.loads(shown.stdout)["content"] == SECTIONS.replace(
            "- tests run with pytest\n", "- tests run with pytest\n- run pytest under xvfb-run\n"
        )
        assert (
            yak(
                "memory", "reject", unplaced["proposal_id"], "-w", folder, data_dir=data_dir
            ).returncode
            == 0
        )

        placed = await call(
            session,
            "memory_propose",
            text="- PostgreSQL for teams",
            heading="Decisions",
            reason="a team database",
        )
        shown = yak(
            "memory", "review", placed["proposal_id"], "-w", folder, "--json", data_dir=data_dir
        )
        assert json.loads(shown.stdout)["content"] == SECTIONS + "- PostgreSQL for teams\n"
        [earlier] = placed["your_earlier_proposals"]
        assert (earlier["proposal_id"], earlier["status"], earlier["outcome"]) == (
            unplaced["proposal_id"],
            "rejected",
            "rejected",
        )
        [listed] = review(data_dir, folder)
        assert (listed["origin"], listed["client"]) == ("agent", "Claude Code")
        text_review = yak("memory", "review", "-w", folder, data_dir=data_dir).stdout.decode()
        assert "An agent (Claude Code over MCP)" in text_review
        assert "lands at line 11, under 'Decisions'" in text_review

        assert yak("memory", "disable", "-w", folder, data_dir=data_dir).returncode == 0
        off = await call(session, "memory_status")
        assert (off["memory_enabled"], off["can_propose"]) == (False, False)
        assert off["why_not"].startswith("The memory of this project is switched off")
        message = await refused(session, "memory_propose", text="- more", reason="why")
        assert message.endswith(
            "The memory of this project is switched off (yak memory enable turns it on); "
            "nothing was proposed."
        )
    assert (await core.memory.read(workspace.id)).content == SECTIONS


async def test_a_subfolder_and_a_renamed_folder_are_told_of_the_memory_they_could_use(
    core, data_dir, tmp_path
):
    """``yak mcp -w proj/sub``: ``memory_read`` and ``memory_status`` give an empty memory and
    ``elsewhere`` naming the enclosing workspace's, with a sentence; in a folder that looks like
    one whose folder is gone, the sentence names ``yak memory reattach``. A folder with a
    memory of its own has ``elsewhere`` null."""
    folder = project_folder(tmp_path, "proj")
    await workspace_with_document(core, folder, SECTIONS)
    sub = folder / "sub"
    sub.mkdir()
    lines = SECTIONS.count("\n")

    async with mcp_session(data_dir, sub) as session:
        read = await call(session, "memory_read")
        assert (read["content"], read["version"]) == ("", 0)
        assert read["elsewhere"] == {
            "enclosing": {"path": str(folder), "lines": lines},
            "renamed_from": None,
            "note": f"{sub} has no memory of its own; the enclosing workspace {folder} has "
            f"{lines} lines: 'yak memory show -w {folder}'",
        }
        status = await call(session, "memory_status")
        assert status["elsewhere"] == read["elsewhere"]
    async with mcp_session(data_dir, folder) as session:
        assert (await call(session, "memory_read"))["elsewhere"] is None

    moved = tmp_path / "moved" / "proj"
    moved.parent.mkdir()
    folder.rename(moved)
    async with mcp_session(data_dir, moved) as session:
        status = await call(session, "memory_status")
        assert status["elsewhere"]["renamed_from"] == {"path": str(folder), "lines": lines}
        assert status["elsewhere"]["note"] == (
            f"{moved} looks like {folder}, which no longer exists and has a memory of {lines} "
            f"lines: 'yak memory reattach {folder} -w {moved}' moves it here."
        )


async def test_two_agents_with_one_name_own_their_proposals_apart(core, data_dir, tmp_path):
    """Two MCP sessions whose clients both call themselves ``inspector-cli``: neither can
    withdraw the other's proposal, nor sees it among its own; each still withdraws its own.
    The proposals keep the name, for the person, and the document is untouched."""
    folder = project_folder(tmp_path, "proj")
    workspace = await workspace_with_document(core, folder, SECTIONS)

    async with (
        mcp_session(data_dir, folder, client="inspector-cli") as first,
        mcp_session(data_dir, folder, client="inspector-cli") as second,
    ):
        one = await call(first, "memory_propose", text="- use Redis", reason="caching")
        two = await call(second, "memory_propose", text="- use Celery", reason="queues")
        assert two["your_earlier_proposals"] == []
        message = await refused(second, "memory_withdraw", proposal_id=one["proposal_id"])
        assert message.endswith(
            f"Proposal {one['proposal_id']} was not made by this agent; only the developer "
            "can reject it (yak memory reject)."
        )
        assert {p["id"] for p in review(data_dir, folder)} == {
            one["proposal_id"],
            two["proposal_id"],
        }
        [mine] = (await call(first, "memory_status"))["your_proposals"]
        assert mine["proposal_id"] == one["proposal_id"]

        withdrawn = await call(second, "memory_withdraw", proposal_id=two["proposal_id"])
        assert withdrawn["status"] == "withdrawn"
        assert [p["id"] for p in review(data_dir, folder)] == [one["proposal_id"]]
    [kept] = await core.review.proposals(workspace.id)
    assert kept.client == "inspector-cli"
    assert (await core.memory.read(workspace.id)).content == SECTIONS


async def test_an_agent_withdraws_its_own_proposal_and_no_other(core, data_dir, tmp_path):
    """An agent takes back its waiting proposal: it ends "withdrawn" (``review ID --json``),
    leaves the inbox, and the document is untouched byte for byte; another client cannot
    withdraw it, and withdrawing it twice says what became of it, each in one sentence."""
    folder = project_folder(tmp_path, "proj")
    workspace = await workspace_with_document(core, folder, SECTIONS)

    async with mcp_session(data_dir, folder, client="Claude Code") as session:
        made = await call(session, "memory_propose", text="- use Redis", reason="caching")
        async with mcp_session(data_dir, folder, client="Other agent") as other:
            message = await refused(other, "memory_withdraw", proposal_id=made["proposal_id"])
            assert message.endswith(
                f"Proposal {made['proposal_id']} was not made by this agent; only the developer "
                "can reject it (yak memory reject)."
            )
        assert [p["id"] for p in review(data_dir, folder)] == [made["proposal_id"]]

        withdrawn = await call(session, "memory_withdraw", proposal_id=made["proposal_id"][:8])
        assert (withdrawn["proposal_id"], withdrawn["status"]) == (
            made["proposal_id"],
            "withdrawn",
        )
        assert review(data_dir, folder) == []
        shown = yak(
            "memory", "review", made["proposal_id"], "-w", folder, "--json", data_dir=data_dir
        )
        assert json.loads(shown.stdout)["status"] == "withdrawn"
        again = await refused(session, "memory_withdraw", proposal_id=made["proposal_id"])
        assert "withdrawn" in again and again.endswith("nothing was changed.")
        [mine] = (await call(session, "memory_status"))["your_proposals"]
        assert (mine["proposal_id"], mine["outcome"]) == (made["proposal_id"], "withdrawn")
    assert (await core.memory.read(workspace.id)).content == SECTIONS
