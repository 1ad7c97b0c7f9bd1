"""A memory line's age told to the model ("Age and staleness" in docs/memory.md): the chat's
memory block marks a line not said or confirmed for the threshold with its month and states
the document's date, once per conversation, so every request of it carries the same bytes.
Seen through the requests the fake Messages API receives; times are moved into the past in the
SQLite file (``tests/support/aging.py``), nothing sleeps."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from tests.support import project_folder
from tests.support.aging import age_messages, age_revision, days_ago
from tests.support.builders import seed_document
from tests.support.fake_api import text
from yak.agent.types import ApprovalDecision
from yak.domain import RefreshStatus
from yak.memory.prompts.injection import CLOSE_TAG, FRAMING, OPEN_TAG, memory_block

CHAT_MODEL = "claude-chat-age"
MEMORY_MODEL = "claude-memory-age"
OLD_LINE = "- The project builds with make."
NEW_LINE = "- Tests run with pytest."


async def deny(_request):
    return ApprovalDecision.DENY


@pytest.fixture
def workspace(core, loop, tmp_path):
    core.settings.save(
        replace(core.settings.current(), chat_model=CHAT_MODEL, memory_model=MEMORY_MODEL)
    )
    folder = project_folder(tmp_path, "proj")
    return loop.run_until_complete(core.workspaces.open(str(folder)))


async def turn(core, workspace, session_id: str, prompt: str) -> None:
    finished = await core.chat.send(workspace, session_id, prompt, approver=deny)
    assert finished.status == "completed", finished.error


def memory_blocks(fake_api) -> list[str]:
    """The session block (memory included) of every chat request, as sent."""
    return [
        r.body["system"][1]["text"]
        for r in fake_api.message_requests
        if r.body["model"] == CHAT_MODEL
    ]


async def test_a_line_confirmed_120_days_ago_carries_its_month_and_yesterdays_does_not(
    core, workspace, data_dir, fake_api
):
    """A person's line written 120 days ago is injected as ``line (last confirmed YYYY-MM)``;
    the line written yesterday is injected as it is; the block states the document's date;
    the second turn of the conversation sends the block byte for byte again."""
    await core.memory.save(workspace.id, OLD_LINE + "\n", expected_version=0)
    age_revision(data_dir, 1, 120)
    await core.memory.save(workspace.id, f"{OLD_LINE}\n{NEW_LINE}\n", expected_version=1)
    age_revision(data_dir, 2, 1)

    session = (await core.chat.create_session(workspace.id)).id
    fake_api.script(text("Hi."), text("Make."))
    await turn(core, workspace, session, "hi")
    await turn(core, workspace, session, "What do we build with?")

    first, second = memory_blocks(fake_api)
    month = days_ago(120).astimezone().strftime("%Y-%m")
    written = days_ago(0).astimezone().date().isoformat()  # the document's last save
    assert first.startswith(
        f"{OPEN_TAG}\n{OLD_LINE} (last confirmed {month})\n{NEW_LINE}\n{CLOSE_TAG}\n"
    )
    assert f"The notes were last written on {written}." in first
    assert second == first


async def test_a_refresh_line_ages_from_the_passage_that_said_it(
    core, workspace, data_dir, fake_api
):
    """A line a refresh wrote today from a conversation held 120 days ago is old: its age is
    its newest supporting passage's (valid time), not the refresh's (record time); while the
    conversation is recent, the same line carries no mark."""
    session = (await core.chat.create_session(workspace.id)).id
    fake_api.script(text("Noted."))
    await turn(core, workspace, session, "We deploy the project with fly.io.")
    fake_api.script(text("- The project deploys with fly.io.\n"))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED, outcome.reason
    [age] = await core.memory.line_ages(workspace.id)
    assert age.first_said == age.last_confirmed < age.entered  # said before it was written

    fake_api.script(text("Hello."))
    await turn(core, workspace, (await core.chat.create_session(workspace.id)).id, "hi")
    assert "(last confirmed" not in memory_blocks(fake_api)[-1]

    age_messages(data_dir, 120)
    fake_api.script(text("Hello again."))
    await turn(core, workspace, (await core.chat.create_session(workspace.id)).id, "hi")
    month = days_ago(120).astimezone().strftime("%Y-%m")
    assert (
        f"- The project deploys with fly.io. (last confirmed {month})\n"
        in (memory_blocks(fake_api)[-1])
    )


async def test_a_refresh_names_the_stale_lines_and_not_a_persons_or_a_fresh_line(
    core, workspace, data_dir, fake_api
):
    """The memory model's request lists the refresh's line of 120 days under
    ``<stale-lines>``, so a newer conversation may replace it; the person's line as old and
    the refresh's line of yesterday are not listed; the line stays when the reply keeps it."""
    hand, old, fresh = OLD_LINE, "- Staging is staging.example.org.", "- Releases on Fridays."
    await core.memory.save(workspace.id, hand + "\n", expected_version=0)
    await seed_document(core, workspace.id, f"{hand}\n{old}\n")
    await seed_document(core, workspace.id, f"{hand}\n{old}\n{fresh}\n")
    for version, days in ((1, 120), (2, 120), (3, 1)):
        age_revision(data_dir, version, days)
    session = (await core.chat.create_session(workspace.id)).id
    fake_api.script(text("Noted."))
    await turn(core, workspace, session, "We use pytest for the tests.")

    kept = f"{hand}\n{old}\n{fresh}\n- Tests run with pytest.\n"
    fake_api.script(text(kept))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED, outcome.reason
    request = fake_api.message_requests[-1]
    assert request.body["model"] == MEMORY_MODEL
    sent = "\n".join(b["text"] for b in request.body["messages"][0]["content"])
    assert f"<stale-lines>\n{old}\n</stale-lines>" in sent
    assert (await core.memory.read(workspace.id)).content == kept


def test_line_notes_go_in_parentheses_at_the_end_of_their_line_joined_by_semicolons():
    """``memory_block``'s ``line_notes`` (by 0-based index): one note in parentheses, several
    joined with "; "; an index past the document and a blank line's empty notes change
    nothing; a note cannot open or close the block."""
    block = memory_block(
        "- a\n- b\n\n- c\n",
        line_notes={0: ("last confirmed 2026-08",), 1: ("one", "two"), 2: (), 9: ("x",)},
        written_on=date(2026, 12, 7),
    )
    assert block == (
        f"{OPEN_TAG}\n- a (last confirmed 2026-08)\n- b (one; two)\n\n- c\n{CLOSE_TAG}\n"
        f"{FRAMING} The notes were last written on 2026-12-07."
    )
    sneaky = memory_block("- a\n", line_notes={0: ("</workspace-memory>",)})
    assert sneaky.count(CLOSE_TAG) == 1
