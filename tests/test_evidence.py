"""Evidence per line, as a user meets it: a refresh's rewrite stored with the passages behind
its lines (``MemoryService.apply_rewrite(..., evidence=...)``), then ``yak memory blame``
(text and ``--json``), MCP ``memory_blame`` over a real stdio session, proposals accepted as
they are, edited or rebased, restores, and a database from before evidence was kept
("Evidence" in docs/memory.md)."""

from __future__ import annotations

import contextlib
import json
import sqlite3

import pytest

from tests.support.builders import project_folder, say, workspace_with_document
from tests.support.cli import run_cli
from tests.test_mcp import call, mcp_session
from yak.db.engine import DB_FILE
from yak.domain import ProposalOrigin
from yak.evidence import Evidence, Speaker
from yak.memory.history import provenance

# Run against SQLite, and against PostgreSQL when a test server is configured.
pytestmark = pytest.mark.databases

HAND = "# Project\n- lint with ruff\n"
UV = "- packages are managed with uv, not Poetry"
PG = "- the team database is PostgreSQL 16"
SAID_UV = "We moved from Poetry to uv last week, so use uv for everything."


def message_ids(core, session_id: str) -> list[str]:
    return [m.id for m in core.chat.conversations.messages(session_id)]


async def refreshed_with_evidence(core, tmp_path):
    """A hand-typed document, then a refresh's rewrite adding two lines: the uv line backed by
    the user's words, the PostgreSQL line by nothing. Returns (workspace, session, evidence)."""
    folder = project_folder(tmp_path, "proj")
    workspace = await workspace_with_document(core, folder, HAND)
    session = say(core, workspace.id, SAID_UV, "Noted: uv from now on.", title="Packaging")
    user_message = message_ids(core, session)[0]
    backing = Evidence(UV, session, user_message, Speaker.USER, SAID_UV)
    await core.memory.apply_rewrite(
        workspace.id,
        HAND + UV + "\n" + PG + "\n",
        base_version=1,
        model="claude-test",
        session_ids=(session,),
        watermarks={},
        # An entry for a line the text does not hold is not stored.
        evidence=[backing, Evidence("- not in the text", session, user_message, Speaker.USER, "x")],
    )
    return workspace, session, backing


def test_blame_json_gives_each_lines_evidence_or_null(core, loop, tmp_path, capsys):
    """``blame --json``: the uv line carries the passage (who, which message, the quote), the
    unbacked refresh line and the hand lines ``null``; the revision keeps exactly the one."""
    workspace, session, backing = loop.run_until_complete(refreshed_with_evidence(core, tmp_path))
    [latest, _] = loop.run_until_complete(core.memory.history(workspace.id))
    assert latest.evidence == (backing,)

    code, out, err = run_cli(capsys, "memory", "blame", "--json", "-w", workspace.path)
    assert (code, err) == (0, "")
    lines = json.loads(out)
    assert [(b["text"], b["evidence"]) for b in lines] == [
        ("# Project", None),
        ("- lint with ruff", None),
        (
            UV,
            {
                "line": UV,
                "session_id": session,
                "message_id": backing.message_id,
                "speaker": "user",
                "quote": SAID_UV,
            },
        ),
        (PG, None),
    ]


def test_text_blame_says_why_each_line_a_refresh_wrote_is_there(core, loop, tmp_path, capsys):
    """Text ``blame``: stdout stays one line per document line; stderr names the conversation
    and says why: the user's words for the uv line, "no evidence recorded" for the other."""
    workspace, session, _ = loop.run_until_complete(refreshed_with_evidence(core, tmp_path))
    code, out, err = run_cli(capsys, "memory", "blame", "-w", workspace.path)
    assert code == 0
    texts = ["# Project", "- lint with ruff", UV, PG]
    rows = out.splitlines()
    assert all(row.endswith("  " + t) for row, t in zip(rows, texts, strict=True))
    assert rows[2].startswith("v2  refresh  ") and "[1]" in rows[2]
    assert err == (
        f"[1] {session}: Packaging\n"
        f'line 3: you said in "Packaging": "{SAID_UV}"\n'
        "line 4: no evidence recorded\n"
    )


async def test_mcp_memory_blame_carries_the_evidence(core, data_dir, tmp_path):
    """Another agent asking ``memory_blame`` over stdio gets the same evidence objects."""
    workspace, session, backing = await refreshed_with_evidence(core, tmp_path)
    async with mcp_session(data_dir, workspace.path) as mcp:
        blame = await call(mcp, "memory_blame")
    assert [b["evidence"] for b in blame["lines"]] == [
        None,
        None,
        {
            "line": UV,
            "session_id": session,
            "message_id": backing.message_id,
            "speaker": "user",
            "quote": SAID_UV,
        },
        None,
    ]


async def test_hand_saves_and_restores_store_none_and_a_restored_line_keeps_its_evidence(
    core, tmp_path
):
    """A hand save keeps the uv line's origin (and evidence) and stores no evidence itself; a
    restore of the refresh's version after the uv line was deleted by hand gives the line back
    with the passage it had. Blame walking only the new revisions agrees with the whole
    chain."""
    workspace, _, backing = await refreshed_with_evidence(core, tmp_path)
    await core.memory.blame(workspace.id)  # remembered, so the next blames walk only what is new
    await core.memory.save(workspace.id, HAND + UV + "\n- one more\n", expected_version=2)
    origins = await core.memory.blame(workspace.id)
    assert [o.evidence for o in origins] == [None, None, backing, None]
    await core.memory.save(workspace.id, HAND, expected_version=3)
    assert all(o.evidence is None for o in await core.memory.blame(workspace.id))
    await core.memory.restore(workspace.id, "2", expected_version=4)

    history = await core.memory.history(workspace.id)
    assert [r.evidence for r in history] == [(), (), (), (backing,), ()]
    origins = await core.memory.blame(workspace.id)
    assert [(o.text, o.version, o.evidence) for o in origins] == [
        ("# Project", 1, None),
        ("- lint with ruff", 1, None),
        (UV, 2, backing),
        (PG, 2, None),
    ]
    assert origins == provenance.blame(reversed(history))


async def test_an_accepted_proposal_keeps_the_evidence_of_the_lines_still_there(core, tmp_path):
    """A refresh's proposal stored with evidence for two lines: accepted as proposed, both
    lines keep it; edited and accepted with one line reworded, only the untouched line keeps
    it; rebased onto a hand edit made meanwhile, it still carries it when accepted."""
    folder = project_folder(tmp_path, "proj")
    workspace = await workspace_with_document(core, folder, HAND)
    session = say(core, workspace.id, SAID_UV, "Noted.", title="Packaging")
    said = message_ids(core, session)
    backing = (
        Evidence(UV, session, said[0], Speaker.USER, SAID_UV),
        Evidence(PG, session, said[1], Speaker.ASSISTANT, "Noted."),
    )
    proposed = HAND + UV + "\n" + PG + "\n"

    async def propose():
        current = await core.memory.read(workspace.id)
        return await core.review.propose(
            workspace.id,
            proposed if current.version == 1 else current.content + UV + "\n" + PG + "\n",
            base_version=current.version,
            reasons=("this workspace is in review mode: every rewrite waits for you",),
            model="claude-test",
            session_ids=(session,),
            watermarks={},
            evidence=backing,
        )

    first = await propose()
    assert (await core.review.get_proposal(workspace.id, first.id)).evidence == backing
    await core.review.accept(workspace.id, first.id)
    assert (await core.memory.history(workspace.id))[0].evidence == backing

    await core.memory.save(workspace.id, HAND, expected_version=2)
    second = await propose()
    edited = HAND + UV + "\n- the team database is PostgreSQL 17\n"
    await core.review.accept(workspace.id, second.id, content=edited)
    [latest, *_] = await core.memory.history(workspace.id)
    assert (latest.flags, latest.evidence) == (("edited",), backing[:1])
    origins = await core.memory.blame(workspace.id)
    assert [o.evidence for o in origins][-2:] == [backing[0], None]

    await core.memory.save(workspace.id, HAND, expected_version=4)
    third = await propose()
    await core.memory.save(
        workspace.id, "# Project, renamed\n- lint with ruff\n", expected_version=5
    )
    rebased = await core.review.get_proposal(workspace.id, third.id)
    assert rebased.base_version == 6 and rebased.content.startswith("# Project, renamed\n")
    await core.review.accept(workspace.id, third.id)
    assert (await core.memory.history(workspace.id))[0].evidence == backing


async def test_an_agents_proposal_has_no_evidence(core, tmp_path):
    """An agent's proposal over MCP records none: its lines say "no evidence recorded"."""
    folder = project_folder(tmp_path, "proj")
    workspace = await workspace_with_document(core, folder, HAND)
    proposal, _lands = await core.review.propose_from_agent(
        workspace.id, text=UV, reason="the user said so", origin="an agent over MCP"
    )
    assert (proposal.origin, proposal.evidence) == (ProposalOrigin.AGENT, ())


@pytest.mark.sqlite_only  # the stored text and the downgrade are read on the local file
def test_evidence_is_stored_as_json_text_and_an_old_database_reads_no_evidence_recorded(
    core, loop, tmp_path, data_dir, capsys
):
    """The column holds the JSON list; a database at the schema before evidence (0010), with a
    refresh revision in it, is migrated on open and its refresh lines read "no evidence
    recorded" (text) and ``null`` (JSON)."""
    from alembic import command

    from yak.db.engine import open_database
    from yak.db.migrate import alembic_config

    workspace, session, backing = loop.run_until_complete(refreshed_with_evidence(core, tmp_path))
    with contextlib.closing(sqlite3.connect(data_dir / DB_FILE)) as connection:
        stored = [
            row[0]
            for row in connection.execute("SELECT evidence FROM memory_revisions ORDER BY version")
        ]
    assert stored[0] is None  # the hand save
    assert json.loads(stored[1]) == [
        {
            "line": UV,
            "session_id": session,
            "message_id": backing.message_id,
            "speaker": "user",
            "quote": SAID_UV,
        }
    ]
    old = open_database(data_dir, migrate=False)
    try:
        with old.engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0010")
    finally:
        old.close()
    with contextlib.closing(sqlite3.connect(data_dir / DB_FILE)) as connection:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(memory_revisions)")]
    assert "evidence" not in columns

    code, out, _ = run_cli(capsys, "memory", "blame", "--json", "-w", workspace.path)
    assert code == 0
    assert [(b["source"], b["evidence"]) for b in json.loads(out)] == [
        ("hand", None),
        ("hand", None),
        ("refresh", None),
        ("refresh", None),
    ]
    code, _, err = run_cli(capsys, "memory", "blame", "-w", workspace.path)
    assert code == 0
    assert err.splitlines()[-1] == "lines 3-4: no evidence recorded"


def test_review_json_lists_a_proposals_evidence(core, loop, tmp_path, capsys):
    """``review --json``: a refresh's proposal carries its lines' evidence, as blame gives it."""
    folder = project_folder(tmp_path, "proj")
    workspace = loop.run_until_complete(workspace_with_document(core, folder, HAND))
    session = say(core, workspace.id, SAID_UV, "Noted.", title="Packaging")
    backing = Evidence(UV, session, message_ids(core, session)[0], Speaker.USER, SAID_UV)
    loop.run_until_complete(
        core.review.propose(
            workspace.id,
            HAND + UV + "\n",
            base_version=1,
            reasons=("this workspace is in review mode: every rewrite waits for you",),
            model="claude-test",
            session_ids=(session,),
            watermarks={},
            evidence=[backing],
        )
    )
    code, out, _ = run_cli(capsys, "memory", "review", "--json", "-w", workspace.path)
    assert code == 0
    [listed] = json.loads(out)
    assert listed["evidence"] == [
        {
            "line": UV,
            "session_id": session,
            "message_id": backing.message_id,
            "speaker": "user",
            "quote": SAID_UV,
        }
    ]
