"""Memory lines checked against the workspace when a conversation starts ("Checked at use" in
docs/memory.md): which references a line names, which of them are gone from the folder, the
note the model sees on such a line (through the real SDK against the fake Messages API), the
event the panel counts from, and a folder that does not answer in time."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from tests.support import project_folder, record
from tests.support.fake_api import RecordedRequest, text
from yak.agent.types import ApprovalDecision
from yak.events import ReferencesChecked
from yak.memory.freshness import references
from yak.memory.freshness.references import check_references, find_references, gone_notes
from yak.memory.prompts.injection import memory_block

TODAY = date(2026, 12, 7)
BOOTSTRAP = "- Bootstrap a new machine with scripts/bootstrap.sh before the first run."
README = "- The overview is in README.md."
LINT = "- Run `make lint` before pushing."


def shown(line: str) -> list[str]:
    return [reference.text for reference in find_references(line)]


# --- finding references -----------------------------------------------------------------------
def test_paths_file_names_and_runner_targets_are_references():
    """Relative paths, file names and the targets of make, npm/pnpm/yarn, just, tox and nox."""
    assert shown(BOOTSTRAP) == ["scripts/bootstrap.sh"]
    assert shown("- See docs/ and `sh ./deploy/run.sh --prod`; config in pyproject.toml.") == [
        "docs/",
        "pyproject.toml",
        "./deploy/run.sh",
    ]
    assert shown("- Build with make build, then `npm run test:unit` and pnpm dev.") == [
        "make build",
        "npm run test:unit",
        "pnpm dev",
    ]
    assert shown("- CI: `just fmt`, tox -e lint,type and nox -s tests.") == [
        "just fmt",
        "tox -e lint",
        "tox -e type",
        "nox -s tests",
    ]


def test_prose_versions_urls_and_paths_outside_are_not_references():
    """Everyday words after make/just/yarn, versions, domains, library names, URLs, absolute
    and home paths name nothing in the workspace."""
    assert shown("- Make sure to make it small; just run the tests; yarn install first.") == []
    assert shown("- Requests 2.32.3 on Node.js 20, from example.com, and/or I/O.") == []
    assert shown("- Docs at https://x.org/guide.md; notes in ~/vault/a.md and /etc/hosts.") == []
    assert shown("- Standup at 9 a.m. daily, e.g. on Mondays.") == []


# --- checking against a folder ----------------------------------------------------------------
def check(folder: Path, document: str) -> list[tuple[int, tuple[str, ...]]]:
    found = check_references(document, folder, today=TODAY, deadline_seconds=5.0)
    assert not found.gave_up
    return [(gone.index, gone.missing) for gone in found.gone]


def test_a_deleted_script_is_gone_and_a_file_that_exists_is_not(tmp_path):
    folder = project_folder(tmp_path, files={"README.md": "hi", "scripts/bootstrap.sh": "echo"})
    document = f"Setup:\n{BOOTSTRAP}\n{README}\n"
    assert check(folder, document) == []
    (folder / "scripts" / "bootstrap.sh").unlink()
    assert check(folder, document) == [(1, ("scripts/bootstrap.sh",))]


def test_make_lint_is_gone_without_a_lint_target_and_not_with_one(tmp_path):
    folder = project_folder(tmp_path, files={"Makefile": "test:\n\tpytest\n"})
    assert check(folder, f"{LINT}\n") == [(0, ("make lint",))]
    (folder / "Makefile").write_text("test lint:\n\tpytest\n", encoding="utf-8")
    assert check(folder, f"{LINT}\n") == []


def test_scripts_recipes_and_sessions_are_read_from_their_files(tmp_path):
    folder = project_folder(
        tmp_path,
        files={
            "package.json": '{"scripts": {"dev": "vite"}}',
            "justfile": "fmt arg='x':\n    ruff format\n",
            "tox.ini": "[tox]\nenv_list = py311, lint\n[testenv:type]\ncommands = mypy\n",
            "noxfile.py": "@nox.session\ndef tests(session):\n    pass\n",
        },
    )
    document = (
        "- `pnpm dev` and npm run build.\n- `just fmt`, `just lint`.\n"
        "- tox -e lint,type,docs\n- nox -s tests and nox -s docs\n"
    )
    assert check(folder, document) == [
        (0, ("npm run build",)),
        (1, ("just lint",)),
        (2, ("tox -e docs",)),
        (3, ("nox -s docs",)),
    ]


def test_a_file_name_is_found_anywhere_but_in_skipped_folders(tmp_path):
    """A bare file name not at the root is looked for in the tree, not in node_modules nor in
    what the root .gitignore ignores."""
    folder = project_folder(
        tmp_path,
        files={
            "src/pkg/deep/conftest.py": "",
            "node_modules/x/helpers.js": "",
            "build/out/generated.py": "",
            ".gitignore": "build/\n",
        },
    )
    document = "- Fixtures in conftest.py.\n- Helpers in helpers.js.\n- See generated.py.\n"
    assert check(folder, document) == [(1, ("helpers.js",)), (2, ("generated.py",))]


def test_a_folder_that_does_not_answer_gives_up_within_the_bound(tmp_path, monkeypatch):
    """A disk that hangs: the check returns with ``gave_up`` and nothing marked, and the
    hanging read is left on its own thread."""
    folder = project_folder(tmp_path, files={"README.md": ""})
    release = threading.Event()

    def hang(self, relative):
        release.wait(30)
        return True

    monkeypatch.setattr(references._Workspace, "exists", hang)
    try:
        found = check_references(README, folder, today=TODAY, deadline_seconds=0.2)
    finally:
        release.set()
    assert found.gave_up and found.gone == ()


def test_the_note_is_shown_at_the_end_of_its_line():
    found = references.ReferenceCheck(
        (references.GoneReference(1, BOOTSTRAP, ("scripts/bootstrap.sh",)),)
    )
    block = memory_block(f"Setup:\n{BOOTSTRAP}\n", line_notes=gone_notes(found, today=TODAY))
    assert (
        f"{BOOTSTRAP} (not found in the workspace on 2026-12-07: scripts/bootstrap.sh)\n" in block
    )
    two = memory_block("- a\n- b\n", line_notes={1: ["x", "y"], 5: ["past the end"]})
    assert "- a\n- b (x; y)\n" in two and "past the end" not in two


# --- at the start of a conversation -----------------------------------------------------------
CHAT_MODEL = "claude-chat-references"


async def deny(_request):
    return ApprovalDecision.DENY


@pytest.fixture
def folder(tmp_path):
    return project_folder(
        tmp_path,
        files={
            "README.md": "hi",
            "scripts/bootstrap.sh": "echo",
            "Makefile": "test:\n\tpytest\n",
        },
    )


class Chat:
    """The core with a chat model on the fake API, and the session blocks it sends."""

    def __init__(self, core, fake) -> None:
        self.core = core
        self.fake = fake

    async def memory_seen(self, workspace, turns: int = 1) -> list[str]:
        """Start a conversation, run ``turns`` turns; each request's session block."""
        session = (await self.core.chat.create_session(workspace.id)).id
        before = len(self.requests())
        for number in range(turns):
            self.fake.script(text("OK."))
            finished = await self.core.chat.send(workspace, session, f"hi {number}", approver=deny)
            assert finished.status == "completed", finished.error
        return [r.body["system"][1]["text"] for r in self.requests()[before:]]

    def requests(self) -> list[RecordedRequest]:
        return [r for r in self.fake.message_requests if r.body["model"] == CHAT_MODEL]


@pytest.fixture
def chat(core, fake_api):
    core.settings.save(replace(core.settings.current(), chat_model=CHAT_MODEL))
    return Chat(core, fake_api)


async def test_a_deleted_script_is_marked_for_the_model_until_it_is_restored(chat, folder):
    """The next conversation after the file is deleted marks its line (the same bytes on every
    turn), the line naming a file that exists carries no mark, the panel's event counts one
    line; restoring the file clears the mark in the conversation after."""
    core = chat.core
    workspace = await core.workspaces.open(str(folder))
    await core.memory.save(workspace.id, f"Setup:\n{BOOTSTRAP}\n{README}\n", expected_version=0)
    seen = record(core.bus, ReferencesChecked)
    assert all("not found" not in block for block in await chat.memory_seen(workspace))
    assert [len(event.check.gone) for event in seen] == [0]

    (folder / "scripts" / "bootstrap.sh").unlink()
    first, second = await chat.memory_seen(workspace, turns=2)
    assert first == second
    marked = "(not found in the workspace on "
    lines = {line.split(" (")[0]: line for line in first.splitlines()}
    assert marked in lines[BOOTSTRAP] and lines[BOOTSTRAP].endswith(": scripts/bootstrap.sh)")
    assert lines[README] == README
    assert [event.check.gone[0].line for event in seen[1:]] == [BOOTSTRAP]

    (folder / "scripts" / "bootstrap.sh").write_text("echo", encoding="utf-8")
    (again,) = await chat.memory_seen(workspace)
    assert "not found" not in again and f"\n{BOOTSTRAP}\n" in again
    assert len(seen[-1].check.gone) == 0


async def test_make_lint_is_marked_until_the_makefile_has_the_target(chat, folder):
    core = chat.core
    workspace = await core.workspaces.open(str(folder))
    await core.memory.save(workspace.id, f"{LINT}\n", expected_version=0)
    (block,) = await chat.memory_seen(workspace)
    assert f"{LINT} (not found in the workspace on " in block and "make lint)" in block
    (folder / "Makefile").write_text("test:\n\tpytest\nlint:\n\truff check\n", encoding="utf-8")
    (block,) = await chat.memory_seen(workspace)
    assert f"\n{LINT}\n" in block and "not found" not in block
