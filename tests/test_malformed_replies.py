"""Malformed data from the provider, every kind the fake API can produce, as users meet it:
``yak memory refresh --json`` and ``yak ask`` through the command line's entry point. Never a
traceback; a genuinely malformed reply is ``failed`` with a sentence, recorded as an attempt,
the document untouched."""

from __future__ import annotations

import json

import pytest

from tests.support.builders import project_folder, say, workspace_with_document
from tests.support.fake_api import MALFORMED_FAULTS, malformed

DOCUMENT = "".join(f"- fact {i:03d}: the project keeps this fact\n" for i in range(40))
# What the guards make of the few faults that still carry a readable reply.
REFUSED = {
    "unknown_block": "refused_empty",  # no text in it
    "empty_text": "refused_empty",
    "bad_stop_reason": "refused_floor",  # "Hello" in place of a 40-line document
}
FAILED = [fault for fault in MALFORMED_FAULTS if fault not in REFUSED]


@pytest.fixture
def project(core, loop, tmp_path, fake_api):
    folder = project_folder(tmp_path, "project")
    workspace = loop.run_until_complete(workspace_with_document(core, folder, DOCUMENT))
    say(core, workspace.id, "Lint with ruff.", "Decided.", title="Lint")
    return folder, workspace.id


def state(core, loop, workspace_id):
    document = loop.run_until_complete(core.memory.read(workspace_id))
    attempts = loop.run_until_complete(core.memory.attempts(workspace_id))
    return document.content.encode(), document.version, len(attempts)


@pytest.mark.parametrize("fault", MALFORMED_FAULTS)
def test_memory_refresh_survives_every_malformed_reply(core, loop, yak, fake_api, project, fault):
    """Each fault: one JSON document on stdout, exit 4 and ``failed`` with a sentence (3 and a
    guard's status for the three faults that still carry a readable reply), the attempt
    recorded, the document byte-identical, no traceback."""
    folder, workspace_id = project
    content, version, attempts = state(core, loop, workspace_id)
    fake_api.script(*[malformed(fault)] * 3)  # the SDK retries a 502
    result = yak("memory", "refresh", "-w", folder, "--json")
    assert "Traceback" not in result.stderr
    payload = json.loads(result.stdout)
    if fault in REFUSED:
        assert (result.returncode, payload["status"]) == (3, REFUSED[fault])
    else:
        assert (result.returncode, payload["status"]) == (4, "failed")
        assert payload["reason"].endswith(".") and "\n" not in payload["reason"]
    assert state(core, loop, workspace_id) == (content, version, attempts + 1)


@pytest.mark.parametrize(
    ("fault", "sentence"),
    [
        ("sse_not_json", "The model's reply was malformed (data that could not be read)"),
        ("missing_message", "The model's reply was malformed (data that could not be read)"),
        ("empty_content", "The model sent an empty reply (no content at all)"),
        ("unknown_event", "The model sent an empty reply (no content at all)"),
        ("broken_tool_json", "The model sent a call to read_file whose input is not valid JSON"),
        ("tool_input_not_object", "The model's reply was malformed"),
        ("body_not_json", "The server at http://127.0.0.1:"),
    ],
)
def test_yak_ask_fails_with_one_line_on_a_malformed_reply(yak, fake_api, tmp_path, fault, sentence):
    """``yak ask``: exit 4, one ``yak: …`` line on stderr naming the problem, nothing on stdout
    but what the model said, no traceback; a tool call with broken input is never run."""
    folder = project_folder(tmp_path, "asked", files={"README.md": "# Demo\n"})
    fake_api.script(malformed(fault))
    result = yak("ask", "-w", folder, "--yes", "--no-refresh", "hello")
    assert "Traceback" not in result.stderr
    assert result.returncode == 4
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"yak: {sentence}")
    assert "[read_file]" not in result.stderr
    assert len(fake_api.message_requests) == 1
