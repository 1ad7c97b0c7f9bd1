"""``yak memory stats`` and ``show --json``'s ``tokens`` as a user runs them: ``python -m yak``
in a subprocess, after refreshes made through the CLI against the fake Messages API; the
windows of 7 and 30 days checked on attempts aged in the SQLite file ("Cost" in
docs/memory.md)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.builders import project_folder, say, workspace_with_document
from tests.support.cli import yak
from tests.support.fake_api import text
from tests.test_cli_refresh import as_json, doc
from yak.db.schema import DB_FILE
from yak.domain import estimate_tokens


@pytest.fixture
def project(core, loop, tmp_path, fake_api):
    """A stored workspace with a 150-line document and one unfolded conversation; returns its
    folder and id."""
    folder = project_folder(tmp_path, "project")
    workspace = loop.run_until_complete(
        workspace_with_document(core, folder, doc(150), by_hand=False)
    )
    say(core, workspace.id, "Lint with ruff.", "Decided.", title="Lint")
    return folder, workspace.id


def age_attempts(data_dir, days: int, *, status: str) -> None:
    """Move the stored attempts with ``status`` ``days`` into the past."""
    when = (datetime.now(UTC) - timedelta(days=days)).replace(tzinfo=None)
    with sqlite3.connect(data_dir / DB_FILE) as db:
        db.execute(
            "UPDATE refresh_attempts SET created_at = ? WHERE status = ?",
            (when.isoformat(sep=" ", timespec="microseconds"), status),
        )


def test_stats_give_the_size_in_tokens_and_the_refreshes_of_7_and_30_days(
    data_dir, project, fake_api
):
    folder, workspace_id = project
    new = doc(150) + "- lint with ruff\n"
    fake_api.script(text(new), text("<edits></edits>"))
    assert yak("memory", "refresh", "-w", folder, data_dir=data_dir).returncode == 0  # applied
    say_more = yak(
        "memory", "refresh", "-w", folder, "--json", data_dir=data_dir
    )  # nothing unfolded
    assert as_json(say_more)["status"] == "up_to_date"
    applied_usage = fake_api.message_requests[0].usage

    result = yak("memory", "stats", "-w", folder, "--json", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    payload = as_json(result)
    assert payload["workspace_id"] == workspace_id and payload["lines"] == 151
    assert payload["tokens"] == estimate_tokens(new) == -(-len(new) // 4)
    week = payload["last_7_days"]
    assert week == {
        "refreshes": 2,
        "calls": 1,  # the second found nothing to fold: no model call
        "input_tokens": applied_usage["input_tokens"],
        "cache_write_tokens": applied_usage["cache_creation_input_tokens"],
        "cache_read_tokens": applied_usage["cache_read_input_tokens"],
        "output_tokens": applied_usage["output_tokens"],
        "outcomes": {"applied": 1, "up_to_date": 1},
        "forms": {"edits": 1},  # a text answer to the tool call is read as edits
    }
    assert week["cache_write_tokens"] > 0  # the rules and the document went to the cache
    assert payload["last_30_days"] == week

    shown = as_json(yak("memory", "show", "-w", folder, "--json", data_dir=data_dir))
    assert shown["tokens"] == payload["tokens"]

    age_attempts(data_dir, 10, status="applied")  # in the month, not the week
    payload = as_json(yak("memory", "stats", "-w", folder, "--json", data_dir=data_dir))
    assert payload["last_7_days"]["refreshes"] == 1
    assert payload["last_7_days"]["outcomes"] == {"up_to_date": 1}
    assert payload["last_30_days"]["refreshes"] == 2 and payload["last_30_days"]["calls"] == 1

    result = yak("memory", "stats", "-w", folder, data_dir=data_dir)
    assert result.returncode == 0 and result.stderr == b""
    lines = result.stdout.decode().splitlines()
    assert lines[0] == (
        f"{folder}: memory of 151 lines, ≈{payload['tokens'] / 1000:.1f}k tokens in every chat "
        "request"
    )
    assert lines[1] == "  last 7 days:  1 refresh, 0 model calls · 1 up to date"
    assert lines[2].startswith("  last 30 days: 2 refreshes, 1 model call · ")
    assert lines[2].endswith(" out · 1 applied, 1 up to date · reply forms: edits 1")

    age_attempts(data_dir, 40, status="applied")  # out of both windows
    age_attempts(data_dir, 40, status="up_to_date")
    payload = as_json(yak("memory", "stats", "--all", "--json", data_dir=data_dir))
    assert payload == {"workspaces": []}
    result = yak("memory", "stats", "--all", data_dir=data_dir)
    assert result.stdout.decode() == "No workspace had a memory refresh in the last 30 days.\n"


def test_stats_and_history_say_which_rewrite_form_each_refresh_used(
    core, data_dir, project, fake_api
):
    """The first refresh is answered with the tool; the endpoint then rejects tools and the
    same refresh asks for edits: ``history --refreshes`` names each attempt's form, and
    ``stats`` counts the attempts per form (text and ``--json``)."""
    from tests.support.fake_api import error, tool_use
    from yak.memory.forms.tool import TOOL_NAME

    folder, workspace_id = project
    fake_api.script(tool_use(TOOL_NAME, {"facts": [], "forget": []}))
    assert as_json(yak("memory", "refresh", "-w", folder, "--json", data_dir=data_dir))[
        "status"
    ] == ("up_to_date")
    say(core, workspace_id, "Thanks, that's all.", "Bye.")
    fake_api.script(error(400, message="tools are not supported"), text("<edits>\n</edits>"))
    assert yak("memory", "refresh", "-w", folder, data_dir=data_dir).returncode == 0

    history = yak("memory", "history", "-w", folder, "--refreshes", data_dir=data_dir)
    rows = history.stdout.decode().splitlines()
    assert rows[0].split()[5] == "FORM"
    assert "  edits (tool rejected)  " in rows[1] and "  tool  " in rows[2]
    listed = as_json(
        yak("memory", "history", "-w", folder, "--refreshes", "--json", data_dir=data_dir)
    )
    assert [a["forms"] for a in listed] == [["edits"], ["tool"]]

    payload = as_json(yak("memory", "stats", "-w", folder, "--json", data_dir=data_dir))
    assert payload["last_7_days"]["forms"] == {"tool": 1, "edits": 1}
    assert payload["last_30_days"]["forms"] == {"tool": 1, "edits": 1}
    lines = yak("memory", "stats", "-w", folder, data_dir=data_dir).stdout.decode().splitlines()
    assert lines[1].endswith(" · reply forms: tool 1, edits 1")


def test_stats_of_a_folder_without_memory_are_zero(data_dir, tmp_path):
    folder = project_folder(tmp_path, "new")
    result = yak("memory", "stats", "-w", folder, "--json", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["tokens"] == 0 and payload["lines"] == 0
    assert payload["last_7_days"]["refreshes"] == 0 and payload["last_30_days"]["outcomes"] == {}
    result = yak("memory", "stats", "-w", folder, data_dir=data_dir)
    assert result.stdout.decode().splitlines()[1:] == [
        "  last 7 days:  no refreshes",
        "  last 30 days: no refreshes",
    ]
