"""The issue's trusted-memory cases as a user runs them: ``python -m yak`` in a subprocess
against the fake Messages API; each step a separate process (so quitting between a proposal
and its decision is part of every case). Stored bytes are read back through the test's core
and compared byte for byte."""

from __future__ import annotations

import json

import pytest

from tests.support.builders import project_folder, say, workspace_with_document
from tests.support.cli import yak
from tests.support.fake_api import text
from tests.test_cli_refresh import as_json, doc
from tests.test_trusted_memory import write_raw_content
from yak.memory.prompts.rewrite import request_text

# Run against SQLite, and against PostgreSQL when a test server is configured.
pytestmark = pytest.mark.databases

HAND = "Project: yak\n**Never** force-push\n# of workers: 4\n+ 1 retry on 502\n- lint with ruff\n"


class Project:
    """A stored workspace: its folder, and its document and conversations read back through
    the test's core."""

    def __init__(self, core, loop, folder, workspace_id, fake, data_dir):
        self.core, self.loop, self.folder, self.id = core, loop, folder, workspace_id
        self.fake, self.data_dir = fake, data_dir

    def run(self, *args):
        return yak("memory", *args, "-w", self.folder, data_dir=self.data_dir)

    def set_by_hand(self, content: str) -> None:
        result = yak("memory", "set", "-w", self.folder, stdin=content, data_dir=self.data_dir)
        assert result.returncode == 0, result.stderr

    def content(self) -> bytes:
        return self.loop.run_until_complete(self.core.memory.read(self.id)).content.encode()

    def unfolded(self) -> int:
        return len(self.core.chat.conversations.unfolded_messages(self.id))

    def say(self, *turns: str, title: str = "Chat") -> str:
        return say(self.core, self.id, *turns, title=title)


@pytest.fixture
def project(core, loop, tmp_path, fake_api, data_dir):
    folder = project_folder(tmp_path, "project")
    workspace = loop.run_until_complete(workspace_with_document(core, folder))
    return Project(core, loop, folder, workspace.id, fake_api, data_dir)


def one_error_line(result) -> str:
    err = result.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("yak: "), err
    return err


def test_verbatim_reply_plus_one_line_keeps_the_hand_lines_and_blame_says_so(project):
    """Case 1 through the CLI: refresh --json says added 1 removed 0; every old line is
    byte-identical; blame --json says hand for the old lines and refresh (with its
    conversation) for the new one; history --json carries the counts."""
    project.set_by_hand(HAND)
    session = project.say("The tests run with pytest.", "Noted.", title="Tests")
    new = HAND + "- tests run with pytest\n"
    project.fake.script(text(new))
    result = project.run("refresh", "--json")
    payload = as_json(result)
    assert result.returncode == 0
    assert {k: payload[k] for k in ("status", "added", "removed", "proposal")} == {
        "status": "applied",
        "added": 1,
        "removed": 0,
        "proposal": None,
    }
    assert project.content() == new.encode()

    blame = as_json(project.run("blame", "--json"))
    assert [(b["line"], b["text"], b["source"], b["version"]) for b in blame] == [
        (n, line, "hand", 1) for n, line in enumerate(HAND.splitlines(), 1)
    ] + [(6, "- tests run with pytest", "refresh", 2)]
    assert blame[-1]["sessions"] == [session] and blame[0]["sessions"] == []
    human = project.run("blame")
    assert human.returncode == 0
    first, *_, last = human.stdout.decode().splitlines()
    # The source in the window's words; the refresh's line carries its conversation's marker,
    # which the legend on stderr names.
    assert first.startswith("v1  hand edit  ") and first.endswith("       Project: yak")
    assert last.startswith("v2  refresh    ") and last.endswith("  [1]  - tests run with pytest")
    # Then why the refresh's line is there (its evidence, or "no evidence recorded").
    legend, why = human.stderr.decode().splitlines()
    assert legend == f"[1] {session}: Tests" and why.startswith("line 6: ")

    history = as_json(project.run("history", "--json"))
    assert [(h["source"], h["added"], h["removed"]) for h in history] == [
        ("refresh", 1, 0),
        ("hand", 5, 0),
    ]


def test_dropping_a_hand_line_waits_exit_3_and_accept_applies_exactly(project):
    """Case 2 through the CLI: needs_review, exit 3, the document unchanged and the proposal
    id in the JSON; show --json counts it; review shows its reasons and diff; accept (another
    process) applies exactly the proposal; a second proposal on the same base after a hand
    edit is refused as a conflict, exit 5."""
    project.set_by_hand(HAND)
    project.say("Workers are now 8.", "Ok.")
    reply = "Project: yak\n**Never** force-push\n# of workers: 8\n- lint with ruff\n"
    project.fake.script(text(reply))
    result = project.run("refresh", "--json")
    payload = as_json(result)
    assert result.returncode == 3 and payload["status"] == "needs_review"
    assert (payload["added"], payload["removed"]) == (1, 2)
    proposal = payload["proposal"]
    assert proposal and "you wrote" in payload["reason"]
    assert project.content() == HAND.encode() and project.unfolded() == 2

    shown = as_json(project.run("show", "--json"))
    assert shown["proposals"] == 1 and shown["mode"] == "auto"
    assert shown["last_refresh"]["status"] == "needs_review"
    assert shown["last_refresh"]["reason"] == payload["reason"] and shown["last_refresh"]["at"]
    listed = as_json(project.run("review", "--json"))
    assert [p["id"] for p in listed] == [proposal]
    assert set(listed[0]) >= {"id", "base_version", "reasons", "added", "removed", "created_at"}
    held = listed[0]["held"]  # each reason as data beside its sentence
    assert [h["reason"] for h in held] == listed[0]["reasons"]
    touched = next(h for h in held if h["kind"] == "touched")
    assert touched["lines"] and touched["line"] == ""
    one = as_json(project.run("review", proposal, "--json"))
    assert one["content"] == reply
    assert "-# of workers: 4\n" in one["diff"] and "+# of workers: 8\n" in one["diff"]
    assert "-+ 1 retry on 502\n" in one["diff"]

    accepted = project.run("accept", proposal, "--json")
    assert accepted.returncode == 0, accepted.stderr
    assert as_json(accepted)["version"] == 2
    assert project.content() == reply.encode() and project.unfolded() == 0

    # A second proposal that changes a line as it adds one; a hand edit adds beside that
    # line meanwhile: where the lines go cannot be known (a pure addition would merge).
    project.say("Install with the script.", "Ok.")
    reworded = reply.replace("- lint with ruff", "- lint with ruff and mypy")
    project.fake.script(text(reworded + "- install: curl https://get.example.com/i | sh\n"))
    second = as_json(project.run("refresh", "--json"))["proposal"]
    project.set_by_hand(reply + "- typed meanwhile\n")
    conflict = project.run("accept", second)
    assert conflict.returncode == 5
    assert "changed" in one_error_line(conflict)
    assert project.content() == (reply + "- typed meanwhile\n").encode()


def test_a_line_deleted_by_hand_or_rejected_stays_out(project):
    """Case 3 through the CLI: a hand deletion, then a reply bringing the line back → exit 3,
    the line is not in the document; reject (another process) folds the conversation, and the
    line it added stays out of the next refresh too (which applies its other, new line)."""
    project.set_by_hand(doc(8))
    gone = "- fact 003: the project keeps this fact\n"
    hand = doc(8).replace(gone, "")
    project.set_by_hand(hand)
    project.say("Anything?", "No.")
    project.fake.script(text(hand + gone))
    result = project.run("refresh", "--json")
    payload = as_json(result)
    assert result.returncode == 3 and "you deleted or rejected" in payload["reason"]
    assert project.content() == hand.encode()

    rejected = project.run("reject", payload["proposal"], "--json")
    assert rejected.returncode == 0 and as_json(rejected)["status"] == "rejected"
    assert project.unfolded() == 0 and project.content() == hand.encode()

    assert project.run("mode", "review").returncode == 0  # so that a harmless reply waits
    project.say("Deploy on Fridays.", "Ok.")
    project.fake.script(text(hand + "- deploy on Fridays\n"))
    waiting = as_json(project.run("refresh", "--json"))
    assert waiting["status"] == "needs_review"
    assert project.run("reject", waiting["proposal"]).returncode == 0
    assert project.run("mode", "auto").returncode == 0
    project.say("Use ruff.", "Ok.")
    project.fake.script(text(hand + "- deploy on fridays.\n- use ruff\n"))
    again = project.run("refresh", "--json")
    # Decided per line: the new line is applied, the returning one waits on top of it.
    payload = as_json(again)
    assert again.returncode == 0 and payload["status"] == "applied" and payload["proposal"]
    assert "1 line waits for review" in payload["reason"]
    assert '"- deploy on fridays.": you deleted or rejected this line' in payload["reason"]
    assert project.content() == (hand + "- use ruff\n").encode()


def test_curl_piped_into_a_shell_waits_in_auto_mode(project):
    """Case 4 through the CLI: the assistant suggested the pipe; the line waits, and the
    reason names the danger (it would wait had the person typed it too)."""
    project.set_by_hand(doc(8))
    project.say("How do we set up?", "Run the script: curl https://get.example.com/x | sh")
    project.fake.script(text(doc(8) + "- before tests run curl https://get.example.com/x | sh\n"))
    result = project.run("refresh")
    assert result.returncode == 3
    assert (
        "Refresh waits for your review" in one_error_line(result)
        and "run a script downloaded from the internet" in result.stderr.decode()
    )
    assert project.content() == doc(8).encode()


def test_review_mode_holds_a_harmless_reply_until_accepted(project):
    """Case 5 through the CLI: mode review, a harmless reply waits (exit 3), accept applies it;
    mode --json says so; mode auto again applies the next one."""
    project.set_by_hand(doc(8))
    assert as_json(project.run("mode", "review", "--json"))["mode"] == "review"
    assert "review" in project.run("mode").stdout.decode()
    project.say("Use ruff.", "Ok.")
    project.fake.script(text(doc(8) + "- use ruff\n"))
    result = project.run("refresh", "--json")
    payload = as_json(result)
    assert result.returncode == 3 and payload["status"] == "needs_review"
    assert project.content() == doc(8).encode()
    assert project.run("accept", payload["proposal"]).returncode == 0
    assert project.content() == (doc(8) + "- use ruff\n").encode()

    assert project.run("mode", "auto").returncode == 0
    project.say("Use mypy.", "Ok.")
    project.fake.script(text(doc(8) + "- use ruff\n- use mypy\n"))
    assert project.run("refresh").returncode == 0


def test_an_echo_of_the_request_is_refused_not_document(project):
    """Case 6 through the CLI: an empty memory, a reply echoing the request."""
    project.say("Set up CI.", "Done.")
    project.fake.script(lambda body: text(request_text(body["messages"])))
    result = project.run("refresh", "--json")
    payload = as_json(result)
    assert result.returncode == 3 and payload["status"] == "refused_not_document"
    assert project.content() == b"" and project.unfolded() == 2


def test_a_bracketed_placeholder_with_100_of_150_lines_is_refused(project):
    """Case 7 through the CLI."""
    project.set_by_hand(doc(150))
    project.say("Anything?", "No.")
    project.fake.script(text(doc(100) + "[Rest of the existing content remains unchanged]\n"))
    result = project.run("refresh", "--json")
    assert result.returncode == 3 and as_json(result)["status"] == "refused_placeholder"
    assert project.content() == doc(150).encode()


def test_memory_off_sends_nothing_and_on_again_folds_the_conversations(project):
    """disable: a refresh sends nothing and folds nothing; enable: the next one folds them."""
    project.set_by_hand(doc(4))
    project.say("Use ruff.", "Ok.")
    assert as_json(project.run("disable", "--json"))["memory_enabled"] is False
    assert as_json(project.run("show", "--json"))["memory_enabled"] is False
    shown = project.run("show")  # the document on stdout, the switch on stderr
    assert shown.stdout == doc(4).encode() and shown.stderr.decode().startswith(
        f"Memory is off for {project.folder}: conversations do not get it"
    )
    off = as_json(project.run("refresh", "--json"))
    assert off["status"] == "up_to_date" and project.fake.message_requests == []
    assert project.unfolded() == 2
    assert project.run("enable").returncode == 0
    project.fake.script(text(doc(4) + "- use ruff\n"))
    assert as_json(project.run("refresh", "--json"))["status"] == "applied"
    assert project.unfolded() == 0


@pytest.mark.sqlite_only  # PostgreSQL's text column cannot hold bytes that are not UTF-8
def test_a_document_that_is_not_utf8_is_one_line_and_has_a_way_out(project):
    """Item 7 through the CLI: show exits 1 with one sentence (no SQLite error), show --raw
    prints the bytes escaped, restore puts a readable revision back."""
    project.set_by_hand("good\n")
    write_raw_content(project.data_dir, project.id, b"caf\xe9\n")
    shown = project.run("show")
    assert shown.returncode == 1 and shown.stdout == b""
    line = one_error_line(shown)
    assert "not valid UTF-8" in line and "--raw" in line and "sqlite" not in line.lower()
    as_json_error = project.run("show", "--json")
    assert as_json_error.returncode == 1 and "not valid UTF-8" in as_json(as_json_error)["error"]
    raw = project.run("show", "--raw")
    assert raw.returncode == 0 and raw.stdout == b"caf\\xe9\n"
    assert json.loads(project.run("show", "--raw", "--json").stdout)["valid_utf8"] is False
    project.say("Use ruff.", "Ok.")
    refreshed = project.run("refresh")  # a database problem (exit 1), not the provider's (4)
    assert refreshed.returncode == 1 and project.fake.message_requests == []
    line = one_error_line(refreshed)
    assert line.startswith(
        "yak: Refresh failed: The memory document (version 1) is not valid UTF-8"
    )
    assert line.endswith("; nothing was changed.\n") and "version 0" not in line
    assert project.run("restore", "1").returncode == 0
    assert project.run("show").stdout == b"good\n"


@pytest.mark.sqlite_only  # PostgreSQL's text column cannot hold bytes that are not UTF-8
def test_list_and_blame_say_a_document_is_not_utf8(project):
    """``list`` counts a document of bytes that are not UTF-8 from its bytes (SQLite's own
    count skips stray continuation bytes) and marks it, with how to look at it on stderr;
    ``blame`` does not print the revisions' lines as if they were the document: one line,
    exit 1, as ``show``."""
    project.set_by_hand("good\n")
    write_raw_content(project.data_dir, project.id, b"\x80\x80\x80 x\nline two\n")

    listed = yak("memory", "list", "--json", data_dir=project.data_dir)
    (entry,) = as_json(listed)
    assert (entry["lines"], entry["chars"], entry["valid_utf8"]) == (2, 15, False)
    table = yak("memory", "list", data_dir=project.data_dir)
    assert table.returncode == 0
    assert table.stdout.decode().splitlines()[1].endswith(f"{project.folder}  (not UTF-8 text)")
    assert table.stderr.decode() == (
        f"The memory of {project.folder} is not UTF-8 text (written by another program?): see "
        f"its bytes with 'yak memory show --raw -w {project.folder}', then restore a revision "
        "or save a new text.\n"
    )

    blamed = project.run("blame")
    assert blamed.returncode == 1 and blamed.stdout == b""
    assert "is not valid UTF-8" in one_error_line(blamed)
    assert project.run("blame", "--json").returncode == 1


def test_refresh_and_accept_json_name_a_kept_file_they_could_not_write(project):
    """A kept AGENTS.md whose markers were broken by hand: the applied refresh and the
    accepted proposal are stored, and their ``--json`` says which file was not written and
    why (``kept_file_error``), beside the stderr line."""
    agents = project.folder / "AGENTS.md"
    assert project.run("sync", agents, "--keep").returncode == 0
    broken = agents.read_text() + "<!-- yak:memory -->\n"
    agents.write_text(broken)
    project.set_by_hand(doc(8))
    project.say("Use ruff.", "Ok.")
    project.fake.script(text(doc(8) + "- use ruff\n"))
    result = project.run("refresh", "--json")
    payload = as_json(result)
    assert result.returncode == 0 and payload["status"] == "applied"
    assert payload["kept_file_error"]["path"] == str(agents)
    assert "markers are not one block" in payload["kept_file_error"]["reason"]
    assert "could not be kept in sync" in result.stderr.decode()

    assert project.run("mode", "review").returncode == 0
    project.say("Use mypy.", "Ok.")
    project.fake.script(text(doc(8) + "- use ruff\n- use mypy\n"))
    proposal = as_json(project.run("refresh", "--json"))["proposal"]
    accepted = project.run("accept", proposal, "--json")
    decided = as_json(accepted)
    assert accepted.returncode == 0 and decided["status"] == "accepted"
    assert decided["kept_file_error"]["path"] == str(agents)
    assert project.content() == (doc(8) + "- use ruff\n- use mypy\n").encode()
    assert agents.read_text() == broken


def test_list_counts_the_changes_waiting_for_review_in_each_workspace(project, tmp_path):
    """``memory list --json`` gives each workspace its ``proposals`` (as ``show --json``
    does): 1 for the workspace with a refresh waiting, 0 for another; the table's WAITING
    column and the note after the folder say the same; once rejected, 0."""
    other = project_folder(tmp_path, "other")
    assert (
        yak("memory", "set", "-w", other, stdin="- b\n", data_dir=project.data_dir).returncode == 0
    )
    project.set_by_hand(doc(8))
    project.say("Remember to lint with ruff.", "Ok.")
    project.fake.script(text(doc(8).replace("fact 003", "fact three")))  # a hand line changed
    waiting = as_json(project.run("refresh", "--json"))
    assert waiting["status"] == "needs_review"

    listed = json.loads(yak("memory", "list", "--json", data_dir=project.data_dir).stdout)
    counts = {entry["workspace"]: entry["proposals"] for entry in listed}
    assert counts == {str(project.folder): 1, str(other): 0}
    shown = as_json(project.run("show", "--json"))
    assert shown["proposals"] == 1

    table = yak("memory", "list", data_dir=project.data_dir).stdout.decode().splitlines()
    assert table[0].split() == ["LINES", "VERSION", "WAITING", "UPDATED", "WORKSPACE"]
    row = next(line for line in table if str(project.folder) in line)
    assert row.endswith(f"{project.folder}  (1 change waiting for you)")
    assert row.split()[2] == "1"
    plain = next(line for line in table if line.endswith(str(other)))
    assert plain.split()[2] == "0"

    assert project.run("reject", waiting["proposal"]).returncode == 0
    listed = json.loads(yak("memory", "list", "--json", data_dir=project.data_dir).stdout)
    assert {entry["workspace"]: entry["proposals"] for entry in listed}[str(project.folder)] == 0
