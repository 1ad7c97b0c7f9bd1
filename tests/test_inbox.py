"""The review inbox as a user and an agent rely on it ("The inbox" in docs/memory.md): many
proposals wait at once, an agent's proposal is rebased (or kept as conflicting) when the
document changes under it, every proposal and attempt ends with a recorded outcome, and memory
switched off reaches an open conversation at once. Each step is ``python -m yak`` in its own
process against the fake Messages API; documents are compared byte for byte through the test's
core."""

from __future__ import annotations

import json

import pytest

from tests.support.builders import project_folder, say, workspace_with_document
from tests.support.cli import yak
from tests.support.fake_api import text
from yak.errors import UsageError
from yak.memory.history.merge import merge3
from yak.memory.history.placement import landing, place

A = "Project structure\n- yak is a Qt desktop app\n- the core lives in yak/\n"
B = "Conventions\n- Python 3.11, formatted with ruff\n- tests run with pytest\n"
C = "Decisions\n- SQLite is the default database\n"
THREE = f"{A}\n{B}\n{C}"
REFRESHED = THREE.replace("- tests run with pytest\n", "- tests run with pytest\n- lint first\n")


def as_json(result):
    assert "Traceback" not in result.stderr.decode()
    return json.loads(result.stdout)


def one_error_line(result) -> str:
    err = result.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("yak: "), err
    return err.removeprefix("yak: ").rstrip("\n")


class Project:
    def __init__(self, core, loop, folder, workspace_id, fake, data_dir):
        self.core, self.loop, self.folder, self.id = core, loop, folder, workspace_id
        self.fake, self.data_dir = fake, data_dir

    def run(self, *args, stdin: str | None = None):
        return yak("memory", *args, "-w", self.folder, stdin=stdin, data_dir=self.data_dir)

    def content(self) -> bytes:
        return self.loop.run_until_complete(self.core.memory.read(self.id)).content.encode()

    def propose(self, text: str, **place: object) -> str:
        proposal, _lands = self.loop.run_until_complete(
            self.core.review.propose_from_agent(
                self.id, text=text, reason="worth keeping", origin="an agent", **place
            )
        )
        return proposal.id


@pytest.fixture
def project(core, loop, tmp_path, fake_api, data_dir):
    folder = project_folder(tmp_path, "project")
    workspace = loop.run_until_complete(workspace_with_document(core, folder, THREE))
    return Project(core, loop, folder, workspace.id, fake_api, data_dir)


# --- the pure rules ---------------------------------------------------------------------------
def test_merge_moves_a_change_onto_a_newer_version_and_gives_up_where_lines_touch():
    base = "a\nb\nc\nd\n"
    assert merge3(base, "a\nx\nb\nc\nd\n", "a\nb\nc\nD\n") == "a\nx\nb\nc\nD\n"
    assert merge3(base, "a\nb\nc\nd\ny\n", "A\nb\nc\nd\n") == "A\nb\nc\nd\ny\n"
    assert merge3(base, "a\nB\nc\nd\n", "a\nb2\nc\nd\n") is None  # the same line changed
    # A pure addition merges: where the document added too (its lines first, none twice), or
    # at the edge of a line it changed; only a range changed around it is a conflict.
    assert merge3(base, "a\nb\nc\nd\ny\n", "a\nb\nc\nd\nz\n") == "a\nb\nc\nd\nz\ny\n"
    assert merge3(base, "a\nb\nc\nd\nz\ny\n", "a\nb\nc\nd\nz\n") == "a\nb\nc\nd\nz\ny\n"
    assert merge3(base, "a\nb\nc\nd\ny\n", "a\nb\nc\nD\n") == "a\nb\nc\nD\ny\n"
    assert merge3(base, "a\nb\nx\nc\nd\n", "a\nB\nC\nd\n") is None
    assert merge3(base, "a\nb\nc\nd\ny\n", "a\nb\nc\nd\ny\n") == "a\nb\nc\nd\ny\n"
    assert merge3(base, "a\nc\nd\n", "a\nb\nc\nd\ne\n") == "a\nc\nd\ne\n"  # a removal


def test_added_lines_go_under_the_best_matching_section_or_the_one_named():
    placed = place(THREE, "- run pytest with xvfb-run for the UI tests")
    assert placed.document == f"{A}\n{B}- run pytest with xvfb-run for the UI tests\n\n{C}"
    assert (placed.line, placed.section) == (8, "Conventions")
    assert landing(THREE, placed.document) == (8, "Conventions")
    placed = place(THREE, "- keep the tests fast", heading="decisions")
    assert placed.document == f"{A}\n{B}\n{C}- keep the tests fast\n"
    assert place(THREE, "- first", after_line=0).document == "- first\n" + THREE
    unrelated = place(THREE, "- zebra crossings")
    assert unrelated.document == THREE + "\n- zebra crossings\n"  # a block of its own
    assert (unrelated.line, unrelated.section) == (12, None)


def test_a_block_without_a_title_is_never_named_as_a_heading(core, loop, tmp_path, data_dir):
    """Issue 33, item 12: in a document without sections, where an agent's line lands is said
    by its line alone (``review`` printed "under '- project: api'", a fact line, as a
    heading), and a heading cannot name a fact line; the titled case is in the test above."""
    untitled = "- project: api\n- Go 1.22, built with make.\n- Deploys go to Fly.io.\n"
    folder = project_folder(tmp_path, "api")
    workspace = loop.run_until_complete(workspace_with_document(core, folder, untitled))
    project = Project(core, loop, folder, workspace.id, None, data_dir)
    proposal = project.propose("- the api is built with make release")
    listed = as_json(project.run("review", "--json"))
    assert [p["lands"] for p in listed] == [{"line": 4, "section": None}]
    shown = project.run("review").stdout.decode()
    assert "lands at line 4\n" in shown and "under" not in shown
    assert project.run("accept", proposal).returncode == 0
    assert project.content() == (untitled + "- the api is built with make release\n").encode()
    with pytest.raises(UsageError) as refused:
        project.propose("- more", heading="project")
    assert str(refused.value) == (
        "No section of the memory is titled 'project' (its sections: none); nothing was proposed."
    )


# --- many proposals -------------------------------------------------------------------------
def test_two_agent_proposals_survive_a_refresh_and_each_accept_applies_exactly_its_lines(
    project,
):
    """Two agent proposals, then a refresh applied (it adds a line under Conventions): review
    lists both, rebased onto the new version; accepting one applies exactly its line on the
    current version, and the other is rebased again and applies exactly its line. A proposal
    that adds where the refresh added (issue 33, item 10) changes no line: it is rebased, not
    conflicting, and accept applies it after the refresh's line. A whole document that rewords
    the line the refresh added after is kept, marked conflicting, and accepting it is exit 5
    with one sentence; the document is unchanged."""
    first = project.propose("- the window is built after the first paint", heading="Project")
    second = project.propose("- PostgreSQL for teams", heading="Decisions")
    beside = project.propose("- format before committing", heading="Conventions")
    clashing = project.loop.run_until_complete(
        project.core.review.propose_from_agent(
            project.id,
            document=THREE.replace("- tests run with pytest\n", "- tests run with pytest -q\n"),
            reason="quieter",
            origin="an agent",
        )
    )[0].id
    say(project.core, project.id, "Lint first, before you push.", "Noted.")
    project.fake.script(text(REFRESHED))
    refreshed = project.run("refresh", "--json")
    assert as_json(refreshed)["status"] == "applied", refreshed.stderr
    assert project.content() == REFRESHED.encode()

    listed = {p["id"]: p for p in as_json(project.run("review", "--json"))}
    assert list(listed) == [first, second, beside, clashing]
    assert [listed[p]["base_version"] for p in (first, second, beside)] == [2, 2, 2]
    assert [listed[p]["conflicts_with"] for p in (first, second, beside)] == [None] * 3
    assert listed[clashing]["conflicts_with"] == 2 and listed[clashing]["base_version"] == 1
    assert listed[first]["lands"] == {"line": 4, "section": "Project structure"}
    assert listed[beside]["lands"] == {"line": 9, "section": "Conventions"}
    assert listed[first]["origin"] == "agent"
    shown = project.run("review").stdout.decode()
    assert "! conflicts with version 2" in shown
    assert "lands at line 12, under 'Decisions'" in shown

    accepted = project.run("accept", first, "--json")
    assert accepted.returncode == 0, accepted.stderr
    after_first = REFRESHED.replace(
        "- the core lives in yak/\n",
        "- the core lives in yak/\n- the window is built after the first paint\n",
    )
    assert project.content() == after_first.encode()
    assert as_json(accepted)["version"] == 3
    assert project.run("accept", second).returncode == 0
    after_second = after_first + "- PostgreSQL for teams\n"
    assert project.content() == after_second.encode()
    added_beside = project.run("accept", beside)
    assert added_beside.returncode == 0, added_beside.stderr
    after_beside = after_second.replace(
        "- lint first\n", "- lint first\n- format before committing\n"
    )
    assert project.content() == after_beside.encode()

    refused = project.run("accept", clashing)
    assert refused.returncode == 5
    assert one_error_line(refused) == (
        f"Proposal {clashing} was made on version 1 and conflicts with version 5: the lines "
        "it changes were changed since; nothing was applied. Accept it as you edit it "
        "(--file), or reject it."
    )
    assert project.content() == after_beside.encode()


def test_each_attempt_and_proposal_ends_with_its_recorded_outcome(project):
    """In review mode three refreshes wait: the second supersedes the first (a newer refresh
    proposal), the second is accepted (→ version 2), the third rejected. history --refreshes
    --json gives each attempt its final status; accepting the superseded one is exit 2 with a
    sentence saying what became of it; show --json's last refresh says rejected."""
    assert project.run("mode", "review").returncode == 0
    say(project.core, project.id, "Lint before you push.", "Noted.")
    project.fake.script(text(REFRESHED), text(REFRESHED), text(REFRESHED + "- one more\n"))
    first = as_json(project.run("refresh", "--json"))["proposal"]
    second = as_json(project.run("refresh", "--json"))["proposal"]
    assert first and second and first != second
    assert project.run("accept", second).returncode == 0
    assert project.content() == REFRESHED.encode()
    say(project.core, project.id, "One more thing.", "Sure.")
    third = as_json(project.run("refresh", "--json"))["proposal"]
    assert project.run("reject", third).returncode == 0

    attempts = as_json(project.run("history", "--refreshes", "--json"))
    outcomes = [(a["proposal"], a["status"], a["result_version"]) for a in attempts]
    assert outcomes == [
        (third, "rejected", None),
        (second, "accepted", 2),
        (first, "superseded", None),
    ]
    assert attempts[2]["superseded_by"] == second
    table = project.run("history", "--refreshes").stdout.decode()
    assert "accepted → version 2" in table and f"superseded by proposal {second[:12]}" in table
    assert "awaiting review" not in table
    assert as_json(project.run("show", "--json"))["last_refresh"]["status"] == "rejected"

    late = project.run("accept", first)
    assert late.returncode == 2
    assert one_error_line(late) == (
        f"Proposal {first} was superseded by proposal {second} (a newer refresh); "
        "nothing was changed."
    )
    again = project.run("reject", second)
    assert again.returncode == 2
    assert one_error_line(again) == (
        f"Proposal {second} was already accepted as version 2; nothing was changed."
    )
    assert project.content() == REFRESHED.encode()


def test_an_edited_accept_is_recorded_as_edited_and_accepted(project, tmp_path):
    """accept --file: the person's text is written, and the proposal ends as edited and
    accepted with the version it became."""
    proposal = project.propose("- PostgreSQL for teams", heading="Decisions")
    mine = tmp_path / "mine.txt"
    mine.write_text(THREE + "- PostgreSQL for teams, from version 2\n", encoding="utf-8")
    assert project.run("accept", proposal, "--file", mine).returncode == 0
    decided = as_json(project.run("review", proposal, "--json"))
    assert (decided["status"], decided["outcome"], decided["result_version"]) == (
        "edited",
        "edited_accepted",
        2,
    )
    assert project.content() == mine.read_bytes()


def test_a_hand_edit_rebases_a_waiting_agent_proposal(project):
    """A hand edit elsewhere in the document: the agent's proposal moves onto the new version
    and accepting it applies exactly its line on the hand-edited text."""
    proposal = project.propose("- PostgreSQL for teams", heading="Decisions")
    edited = THREE.replace("- the core lives in yak/\n", "- the core lives in yak/core/\n")
    assert project.run("set", stdin=edited).returncode == 0
    [listed] = as_json(project.run("review", "--json"))
    assert (listed["id"], listed["base_version"], listed["conflicts_with"]) == (proposal, 2, None)
    assert project.run("accept", proposal).returncode == 0
    assert project.content() == (edited + "- PostgreSQL for teams\n").encode()


@pytest.mark.sqlite_only  # the downgrade is run on the local file
def test_proposals_from_before_origins_were_stored_keep_who_made_them(project):
    """A database at the schema before 0010: opening it migrates it, and a proposal flagged
    "agent" becomes an agent proposal, the others refresh proposals."""
    from alembic import command

    from yak.db.engine import open_database
    from yak.db.migrate import alembic_config

    agents = project.propose("- PostgreSQL for teams", heading="Decisions")
    old = open_database(project.data_dir, migrate=False)
    try:
        with old.engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0009")
            conn.exec_driver_sql(
                "INSERT INTO memory_proposals (id, workspace_id, base_version, content, reasons,"
                " added, removed, status, session_ids, watermarks, flags, created_at) SELECT"
                " '01REFRESHPROPOSAL000000000', workspace_id, base_version, content, reasons,"
                " added, removed, status, '[]', '{}', '[]', created_at FROM memory_proposals"
            )
    finally:
        old.close()
    listed = {p["id"]: p["origin"] for p in as_json(project.run("review", "--json"))}
    assert listed == {agents: "agent", "01REFRESHPROPOSAL000000000": "refresh"}
