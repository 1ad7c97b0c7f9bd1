"""``yak memory refresh`` as a user runs it: ``python -m yak`` in a subprocess against the fake
Messages API (the real SDK over loopback); each outcome's exit code, JSON and one-line report.

The database is prepared in the test process through the application core and read back from
it afterwards (the GUI and the CLI share one SQLite file), so stored bytes are compared before
and after.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess

import pytest

from tests.support.builders import project_folder, say, workspace_with_document
from tests.support.cli import yak, yak_command
from tests.support.fake_api import error, text
from yak.memory.prompts.rewrite import request_text

# Run against SQLite, and against PostgreSQL when a test server is configured.
pytestmark = pytest.mark.databases


def doc(lines: int, *, prefix: str = "fact", start: int = 0) -> str:
    return "".join(
        f"- {prefix} {i:03d}: the project keeps this fact\n" for i in range(start, lines)
    )


def as_json(result) -> dict:
    assert "Traceback" not in result.stderr.decode("utf-8", "replace")
    return json.loads(result.stdout)


class Project:
    """A stored workspace, read and written through the test's core (``core`` on ``loop``)."""

    def __init__(self, core, loop, folder, workspace_id, fake):
        self.core, self.loop, self.folder, self.id, self.fake = (
            core,
            loop,
            folder,
            workspace_id,
            fake,
        )

    def content(self) -> str:
        return self.loop.run_until_complete(self.core.memory.read(self.id)).content

    def save_meanwhile(self, text: str) -> None:
        """A hand edit on the current version, made from the fake API's thread while the
        command waits for the model's reply."""
        asyncio.run(self.core.memory.save(self.id, text, expected_version=None))

    def say_facts(self, lines: int) -> None:
        """A conversation that says the facts a ``doc(lines)`` reply adds to ``doc(150)``, so
        a refresh may apply them (a line no conversation backs waits for review)."""
        say(self.core, self.id, f"We settled more facts:\n{doc(lines, start=150)}", "Noted.")

    def snapshot(self):
        document = self.loop.run_until_complete(self.core.memory.read(self.id))
        unfolded = self.core.chat.conversations.unfolded_messages(self.id)
        return document.content.encode(), document.version, len(unfolded)


@pytest.fixture
def project(core, loop, tmp_path, fake_api):
    """A stored workspace with a 150-line document and one unfolded conversation."""
    folder = project_folder(tmp_path, "project")
    workspace = loop.run_until_complete(
        workspace_with_document(core, folder, doc(150), by_hand=False)
    )
    say(core, workspace.id, "Lint with ruff.", "Decided.", title="Lint")
    return Project(core, loop, folder, workspace.id, fake_api)


def test_applied_exit_0_with_the_json_contract(data_dir, project):
    new = doc(150) + "- lint with ruff\n"
    project.fake.script(text(new))
    result = yak("memory", "refresh", "-w", project.folder, "--json", data_dir=data_dir)
    payload = as_json(result)
    assert result.returncode == 0
    assert {k: payload[k] for k in ("status", "version", "lines")} == {
        "status": "applied",
        "version": 2,
        "lines": 151,
    }
    assert payload["reason"] and payload["workspace_id"] == project.id
    assert project.content().encode() == new.encode()
    assert project.snapshot()[2] == 0
    assert "Lint with ruff." in request_text(project.fake.message_requests[0].body["messages"])


def test_applied_human_line_then_up_to_date_without_a_call(data_dir, project):
    project.fake.script(text(doc(150) + "- lint with ruff\n"))
    result = yak("memory", "refresh", "-w", project.folder, data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().startswith("Refreshed: version 2, 151 lines")
    assert result.stdout.decode().count("\n") == 1

    result = yak("memory", "refresh", "-w", project.folder, "--json", data_dir=data_dir)
    assert result.returncode == 0 and as_json(result)["status"] == "up_to_date"
    assert len(project.fake.message_requests) == 1


def test_refused_floor_exit_3_document_unchanged_then_155_lines_applied(data_dir, project):
    """150 → 12 lines: exit 3 with the reason on one stderr line, bytes unchanged; the same
    setup with a 155-line reply exits 0."""
    before = project.snapshot()
    project.fake.script(text(doc(12)))
    result = yak("memory", "refresh", "-w", project.folder, data_dir=data_dir)
    assert result.returncode == 3
    err = result.stderr.decode()
    assert err.startswith("yak: Refresh refused: the reply kept 12 of 150 lines (8%")
    assert "the document is unchanged" in err and err.count("\n") == 1
    assert project.snapshot() == before

    project.say_facts(155)
    project.fake.script(text(doc(155)))
    result = yak("memory", "refresh", "-w", project.folder, "--json", data_dir=data_dir)
    assert result.returncode == 0 and as_json(result)["status"] == "applied"
    assert project.content() == doc(155)


def test_refused_ceiling_exit_3_after_one_condense_retry(data_dir, project):
    before = project.snapshot()
    project.fake.script(text(doc(240)), text(doc(240)))
    result = yak("memory", "refresh", "-w", project.folder, "--json", data_dir=data_dir)
    payload = as_json(result)
    assert result.returncode == 3 and payload["status"] == "refused_ceiling"
    assert "240 lines" in payload["reason"] and payload["version"] == 1
    assert len(project.fake.message_requests) == 2
    assert project.snapshot() == before


def test_failed_exit_4_on_a_rejected_key_document_unchanged(data_dir, project):
    before = project.snapshot()
    project.fake.script(error(401))
    result = yak("memory", "refresh", "-w", project.folder, "--json", data_dir=data_dir)
    payload = as_json(result)
    assert result.returncode == 4 and payload["status"] == "failed"
    assert "API key" in payload["reason"]
    assert project.snapshot() == before


def test_a_failing_refresh_without_its_lock_is_one_line_its_error(data_dir, project):
    """The refresh lock cannot be created (a folder has its name, as in a read-only data
    folder) and the refresh then fails: stderr is the failure's one line, not a lock warning
    first; the document is unchanged."""
    before = project.snapshot()
    (data_dir / "locks" / f"{project.id}.lock").mkdir(parents=True)
    project.fake.script(error(401))
    result = yak("memory", "refresh", "-w", project.folder, data_dir=data_dir)
    err = result.stderr.decode()
    assert result.returncode == 4
    assert err.count("\n") == 1 and err.startswith("yak: Refresh failed: "), err
    assert project.snapshot() == before


def test_failed_exit_4_when_the_provider_is_unreachable(data_dir, project):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before = project.snapshot()
    result = yak(
        "memory",
        "refresh",
        "-w",
        project.folder,
        env={"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"},
        data_dir=data_dir,
    )
    assert result.returncode == 4
    err = result.stderr.decode()
    assert err.startswith("yak: Refresh failed: Could not reach") and err.count("\n") == 1
    assert project.snapshot() == before


def test_failed_exit_4_without_a_key(data_dir, project):
    env = {"ANTHROPIC_API_KEY": "", "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    result = yak("memory", "refresh", "-w", project.folder, "--json", env=env, data_dir=data_dir)
    payload = as_json(result)
    assert result.returncode == 4 and "No Anthropic API key" in payload["reason"]
    # --json too says the failure in one line on stderr, in the window's words
    err = result.stderr.decode()
    assert err.startswith("yak: Refresh failed: No Anthropic API key") and err.count("\n") == 1
    assert project.fake.message_requests == []


def test_superseded_exit_5_when_hand_edits_land_during_both_runs(data_dir, project):
    """A hand edit during the rewrite and another during its re-run: exit 5; the second hand
    edit is what is stored."""
    edits = [doc(150) + "- hand one\n", doc(150) + "- hand two\n"]

    def editor(n):
        def edit(body):
            project.save_meanwhile(edits[n])
            # Each reply keeps the hand lines of the version it was based on.
            return text(([doc(150)] + edits)[n] + "- lint with ruff\n")

        return edit

    project.fake.script(editor(0), editor(1))
    result = yak("memory", "refresh", "-w", project.folder, "--json", data_dir=data_dir)
    payload = as_json(result)
    assert result.returncode == 5 and payload["status"] == "superseded"
    assert project.content() == edits[1]


def test_a_folder_never_seen_is_up_to_date_and_nothing_is_created(
    data_dir, tmp_path, fake_api, core, loop
):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    result = yak("memory", "refresh", "-w", fresh, "--json", data_dir=data_dir)
    assert result.returncode == 0 and as_json(result)["status"] == "up_to_date"
    assert loop.run_until_complete(core.workspaces.find(str(fresh))) is None
    assert fake_api.message_requests == []


def test_a_missing_folder_is_exit_2_with_one_line(data_dir, tmp_path):
    result = yak("memory", "refresh", "-w", tmp_path / "nope", data_dir=data_dir)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert err.startswith("yak: ") and "no such folder" in err and err.count("\n") == 1


@pytest.mark.sqlite_only  # holds the lock file; a team database's lock is the server's
def test_a_refresh_waiting_for_another_says_so_then_applies(data_dir, project):
    """While another process holds the workspace's refresh lock, the command says on stderr
    that it waits for the other refresh (instead of sitting silent), and once the lock is free
    it runs and applies (exit 0, the new document stored)."""
    from filelock import FileLock

    project.say_facts(151)
    project.fake.script(text(doc(151)))
    other = FileLock(data_dir / "locks" / f"{project.id}.lock", thread_local=False)
    other.acquire()
    try:
        command = subprocess.Popen(
            yak_command("memory", "refresh", "-w", project.folder),
            env={**os.environ, "YAK_DATA_DIR": str(data_dir)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert command.stderr is not None
        first = command.stderr.readline().decode()
        assert first == (
            "Another refresh of this workspace is running (a window, a command or another "
            "machine); waiting for it to finish…\n"
        )
        assert command.poll() is None and project.content() == doc(150)
    finally:
        other.release()
    out, err = command.communicate(timeout=120)
    assert command.returncode == 0, err
    assert out.decode().startswith("Refreshed:")
    assert project.content() == doc(151)


def test_a_paused_outcome_reports_paused_with_exit_4(capsys):
    """A paused run (an automatic one without a key; ``yak memory refresh`` itself is forced and
    runs) is reported as ``paused`` in ``--json``, with exit 4 like a missing key and its line
    on stderr: never as up to date."""
    from yak.cli import output
    from yak.domain import RefreshOutcome, RefreshStatus

    paused = RefreshOutcome(
        status=RefreshStatus.PAUSED,
        reason="no API key is available; nothing was sent",
        workspace_id="ws_x",
        version=0,
        lines=0,
        missing_key=True,
    )
    code = output.refresh_outcome(paused, workspace_path="/p", rebuild=False, as_json=True)
    said = capsys.readouterr()
    assert code == 4
    assert json.loads(said.out)["status"] == "paused"
    assert said.err.startswith("yak: Refresh paused: no API key; its conversations wait")
