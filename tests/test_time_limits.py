"""Time limits a user controls (``--timeout``, the request time limit setting) and replies that
end badly (empty, cut at the output limit) as ``yak ask`` and ``yak memory refresh`` report
them."""

from __future__ import annotations

import json

import pytest

from tests.support.builders import project_folder, say, workspace_with_document
from tests.support.fake_api import hang, text

DOCUMENT = "".join(f"- fact {i:03d}: the project keeps this fact\n" for i in range(40))


@pytest.fixture
def project(core, loop, tmp_path, fake_api):
    folder = project_folder(tmp_path, "project", files={"README.md": "# Demo\n"})
    workspace = loop.run_until_complete(workspace_with_document(core, folder, DOCUMENT))
    say(core, workspace.id, "Lint with ruff.", "Decided.", title="Lint")
    return folder, workspace.id


def test_refresh_timeout_bounds_a_hung_provider_retries_included(
    core, loop, yak, fake_api, project
):
    """``memory refresh --timeout 1`` against a provider that never answers: failed (exit 4)
    with the limit named, one request (no retry after the limit), the attempt recorded."""
    folder, workspace_id = project
    fake_api.script(hang(), hang(), hang())
    result = yak("memory", "refresh", "-w", folder, "--timeout", "1", "--json")
    payload = json.loads(result.stdout)
    assert (result.returncode, payload["status"]) == (4, "failed")
    assert payload["reason"].startswith(
        "The model did not start answering within 1 s (retries included)"
    )
    assert len(fake_api.message_requests) == 1
    [attempt, *_] = loop.run_until_complete(core.memory.attempts(workspace_id))
    assert str(attempt.status) == "failed"


def test_the_setting_is_the_default_limit(yak, fake_api, project, monkeypatch):
    """Without ``--timeout`` the request time limit of the settings applies
    (``YAK_TIMEOUT_SECONDS`` here)."""
    folder, _ = project
    monkeypatch.setenv("YAK_TIMEOUT_SECONDS", "1")
    fake_api.script(hang(), hang(), hang())
    result = yak("memory", "refresh", "-w", folder)
    assert result.returncode == 4
    assert result.stderr.startswith(
        "yak: Refresh failed: The model did not start answering within 1 s (retries included)"
    )


def test_ask_timeout(yak, fake_api, project):
    """``yak ask --timeout 1``: exit 4 and one line naming the limit."""
    folder, _ = project
    fake_api.script(hang(), hang(), hang())
    result = yak("ask", "-w", folder, "--no-refresh", "--timeout", "1", "hello")
    assert result.returncode == 4 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "within 1 s (retries included)" in result.stderr


@pytest.mark.parametrize("value", ["abc", "0", "-5", "99999", "nan"])
def test_a_bad_timeout_is_exit_2_in_one_line(yak, project, value):
    """A ``--timeout`` that is not 1-3600 seconds: exit 2, one line, no request."""
    folder, _ = project
    result = yak("memory", "refresh", "-w", folder, "--timeout", value)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "--timeout takes a number of seconds from 1 to 3600" in result.stderr


def test_ask_exits_4_when_the_reply_was_cut_at_the_output_limit(yak, fake_api, project):
    """A ``max_tokens`` stop: what arrived is printed, then one line saying it was cut; exit 4."""
    folder, _ = project
    fake_api.script(text("The first half of an ans", stop_reason="max_tokens"))
    result = yak("ask", "-w", folder, "--no-refresh", "explain")
    assert result.returncode == 4
    assert result.stdout == "The first half of an ans\n"
    assert result.stderr == (
        "yak: the reply was cut off at the model's output limit (stop reason max_tokens); the "
        "part that arrived is printed above and kept in the conversation\n"
    )


def test_ask_exits_4_on_an_empty_reply(yak, fake_api, project):
    """An empty reply is not a silent success: exit 4 with a sentence."""
    folder, _ = project
    fake_api.script(text(""))
    result = yak("ask", "-w", folder, "--no-refresh", "explain")
    assert result.returncode == 4 and result.stdout == ""
    assert result.stderr == "yak: the model's reply was empty; there is nothing to print\n"
