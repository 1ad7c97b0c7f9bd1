"""The workspace folder as evidence for grounding ("Checked at use" in docs/memory.md): what
a folder shows (paths, file names, the languages of its files, the names in its manifests, never
a manifest holding a secret), and a refresh through the core and the real SDK against the
scripted Messages API applying a line the workspace shows, with its evidence naming the
workspace, while a line naming a path that exists nowhere still waits."""

from __future__ import annotations

import pytest

from tests.support import project_folder, say
from tests.support.fake_api import text
from yak.domain import RefreshStatus
from yak.evidence import Speaker
from yak.memory.freshness.workspace import gather_facts
from yak.presenters import evidence_words

PYPROJECT = '[project]\nname = "orders"\ndependencies = ["requests==2.32.3", "Flask>=3"]\n'
PYTHON_LINE = "- A Python library built on requests."
INVENTED_LINE = "- Deploy notes live in ops/runbook.md."


def test_a_folder_shows_its_paths_languages_and_manifest_names(tmp_path):
    folder = project_folder(
        tmp_path,
        files={
            "pyproject.toml": PYPROJECT,
            "src/orders/__init__.py": "",
            "src/orders/api.py": "",
            "package.json": '{"name": "orders-ui", "devDependencies": {"vite": "5"}}',
            "node_modules/left-pad/index.js": "",
        },
    )
    facts = gather_facts(folder)
    assert facts.where("Python") == "2 .py files"
    assert facts.where("requests") == "pyproject.toml"
    assert facts.where("flask") == "pyproject.toml"
    assert facts.where("vite") == "package.json"
    assert facts.where("src/orders/api.py") == "src/orders/api.py"
    assert facts.where("api.py") == "src/orders/api.py"
    assert facts.where("./src/orders/") == "src/orders"
    assert facts.where("JavaScript") is None  # only under node_modules
    assert facts.where("left-pad") is None
    assert facts.where("ops/runbook.md") is None


def test_nothing_of_a_manifest_holding_a_secret_is_evidence(tmp_path):
    secret = 'password = "hunter2-Very-Secret-9f8e7d6c"\n'
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    folder = project_folder(
        tmp_path,
        files={"pyproject.toml": f'{PYPROJECT}[tool.x]\ntoken = "{token}"\n{secret}'},
    )
    facts = gather_facts(folder)
    assert facts.where("requests") is None and facts.where("orders") is None


@pytest.fixture
def python_folder(tmp_path):
    return project_folder(
        tmp_path,
        "orders",
        files={"pyproject.toml": PYPROJECT, "orders/__init__.py": "", "orders/client.py": ""},
    )


async def first_refresh(core, folder, fake_api):
    workspace = await core.workspaces.open(str(folder))
    say(core, workspace.id, "Let's add retries to the HTTP client.", "Done: three retries.")
    fake_api.script(text(f"{PYTHON_LINE}\n{INVENTED_LINE}\n"))
    outcome = await core.refresh.refresh_now(workspace.id)
    return workspace, outcome


async def test_a_first_refresh_in_a_python_folder_applies_the_python_line_from_the_workspace(
    core, python_folder, fake_api
):
    """The line naming Python is applied without review, its evidence "found in the
    workspace"; the line naming a path that exists nowhere waits, not said."""
    workspace, outcome = await first_refresh(core, python_folder, fake_api)
    assert outcome.status is RefreshStatus.APPLIED, outcome.reason
    document = await core.memory.read(workspace.id)
    assert document.content.encode() == f"{PYTHON_LINE}\n".encode()
    (origin,) = await core.memory.blame(workspace.id)
    assert origin.evidence is not None and origin.evidence.speaker is Speaker.WORKSPACE
    assert evidence_words(origin.evidence) == "found in the workspace: 2 .py files"
    (proposal,) = await core.review.proposals(workspace.id, pending_only=True)
    assert INVENTED_LINE in proposal.content
    assert any("'ops/runbook.md' was not said" in reason for reason in proposal.reasons)


async def test_the_same_line_in_a_folder_without_python_files_waits(core, tmp_path, fake_api):
    folder = project_folder(tmp_path, "notes", files={"README.md": "notes"})
    workspace, outcome = await first_refresh(core, folder, fake_api)
    assert (await core.memory.read(workspace.id)).content == ""
    (proposal,) = await core.review.proposals(workspace.id, pending_only=True)
    assert PYTHON_LINE in proposal.content
    assert any("'Python' was not said" in reason for reason in proposal.reasons)
