"""The edit form of a memory rewrite: the numbered document, the edits parsed and applied
(``yak.memory.forms.edits``), and a refresh through the core that asks for edits, applies them,
judges the result with the same guards, falls back to the whole document, and treats an empty
block as nothing to change."""

from __future__ import annotations

import pytest

from tests.support import project_folder, say
from tests.support.builders import seed_document
from tests.support.fake_api import text
from yak.domain import RefreshStatus
from yak.memory.forms.edits import EXAMPLE, EditError, apply_edits, number_lines, parse_edits
from yak.memory.prompts.rewrite import request_text

DOC = (
    "Project\n- orders-api: a FastAPI service.\n- Python 3.12.\n\nDeploy\n- Deploys go to Heroku.\n"
)


def edited(reply: str, document: str = DOC) -> str:
    return apply_edits(document, parse_edits(reply))


# --- pure: numbering, parsing, applying -----------------------------------------------------


def test_the_document_is_numbered_from_one_and_a_blank_line_keeps_its_number():
    """What the model sees: ``N| line``, a blank line as ``N|``, the empty document as ``""``."""
    assert number_lines("a\n\nb\n") == "1| a\n2|\n3| b"
    assert number_lines("") == ""


def test_replace_insert_and_delete_refer_to_the_lines_as_sent_and_keep_the_rest_byte_for_byte():
    """Every number refers to the document as sent, whatever the order of the edits; untouched
    lines are the document's own bytes."""
    reply = (
        "Here are the edits:\n<edits>\n@@ delete 6\n@@ insert after 6\n- Deploys go to GKE.\n"
        "@@ replace 3\n- Python 3.13.\n\n@@ insert after 0\nTitle\n</edits>\nDone."
    )
    assert edited(reply) == (
        "Title\nProject\n- orders-api: a FastAPI service.\n- Python 3.13.\n\nDeploy\n"
        "- Deploys go to GKE.\n"
    )


def test_a_range_replaces_several_lines_and_an_empty_replace_deletes():
    """``@@ replace 2-3`` with one line, ``@@ replace 5`` with none."""
    reply = "<edits>\n@@ replace 2-3\n- orders-api on Python 3.13.\n@@ replace 5\n</edits>"
    assert edited(reply) == "Project\n- orders-api on Python 3.13.\n\n- Deploys go to Heroku.\n"


def test_an_empty_block_means_nothing_changes():
    """``<edits></edits>`` (one line or two) parses to no edit."""
    assert parse_edits("<edits></edits>") == []
    assert parse_edits("<edits>\n</edits>") == []


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("<edits>\n@@ delete 2-3\n@@ replace 3\n- x\n</edits>", "two edits change line 3"),
        ("<edits>\n@@ replace 3\n- x\n", "not closed"),
        ("<edits>\n- x\n@@ delete 2\n</edits>", "text before the first edit command"),
        ("<edits>\n@@ change 2\n- x\n</edits>", "is not an edit"),
        ("<edits>\n@@ delete 2\n- x\n</edits>", "a delete takes none"),
        ("<edits>\n@@ delete 4-2\n</edits>", "runs backwards"),
        ("<edits>\n@@ replace 3\n3| - Python 3.13.\n</edits>", "carries a line number"),
        (EXAMPLE, "repeats the example"),
    ],
)
def test_edits_that_do_not_apply_say_why_in_a_sentence(reply, why):
    """Each malformed or impossible block is an ``EditError`` naming the problem (the sentence
    the whole-document retry shows the model)."""
    with pytest.raises(EditError, match=why):
        edited(reply)


def test_edits_past_the_end_append_or_stop_at_the_last_line_and_an_empty_insert_is_nothing():
    """A small model's numbers past the end: an insert appends, a range ends at the last line,
    a delete there and an empty insert change nothing; a replace that starts past the last line
    meant another line (appending it would keep the fact it replaces), so it is an error, as is
    a number below 1."""
    assert edited("<edits>\n@@ insert after 40\n- x\n</edits>") == DOC + "- x\n"
    with pytest.raises(EditError, match="outside the document's 6 lines"):
        edited("<edits>\n@@ replace 9\n- x\n</edits>")
    assert edited("<edits>\n@@ replace 6-8\n- Deploys go to Fly.io.\n</edits>") == (
        DOC.replace("Heroku", "Fly.io")
    )
    assert edited("<edits>\n@@ delete 6-9\n@@ insert after 2\n</edits>") == DOC.replace(
        "- Deploys go to Heroku.\n", ""
    )
    with pytest.raises(EditError, match="outside the document"):
        edited("<edits>\n@@ replace 0\n- x\n</edits>")


# --- through the core ---------------------------------------------------------------------


@pytest.fixture
def workspace(core, loop, tmp_path):
    """A workspace whose document ``DOC`` an earlier refresh wrote (no line is the person's)."""
    ws = loop.run_until_complete(core.workspaces.open(str(project_folder(tmp_path, "proj"))))
    loop.run_until_complete(seed_document(core, ws.id, DOC))
    return ws


async def test_a_refresh_asks_for_edits_against_the_numbered_document_and_applies_them(
    core, workspace, fake_api
):
    """The request shows the numbered document and asks for edits; the reply's edits become the
    next version, the untouched lines byte for byte, with the change counted (+1 −1)."""
    say(core, workspace.id, "We moved to Python 3.13.", "Noted.")
    fake_api.script(text("<edits>\n@@ replace 3\n- Python 3.13.\n</edits>"))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED
    assert (outcome.added, outcome.removed) == (1, 1)
    assert (await core.memory.read(workspace.id)).content == DOC.replace("3.12", "3.13")
    body = fake_api.message_requests[0].body
    assert number_lines(DOC) in request_text(body["messages"])
    assert "@@ insert after N" in body["system"][0]["text"]


async def test_a_refresh_keeps_the_blank_lines_a_person_typed(core, workspace, fake_api):
    """A hand save with runs of blank lines between sections, then a refresh that inserts one
    line: every blank line the person typed is still there, byte for byte, and the change is
    +1 −0 (the runs used to be folded to one blank line, counted as removed lines)."""
    typed = "Project: yak\n\n\n- lint with ruff\n\n\n\n- Python 3.12\n"
    current = await core.memory.read(workspace.id)
    await core.memory.save(workspace.id, typed, expected_version=current.version)
    say(core, workspace.id, "Tests run with pytest.", "Noted.")
    fake_api.script(text("<edits>\n@@ insert after 8\n- tests run with pytest\n</edits>"))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED and (outcome.added, outcome.removed) == (1, 0)
    stored = (await core.memory.read(workspace.id)).content
    assert stored.encode() == (typed + "- tests run with pytest\n").encode()


async def test_an_empty_block_of_edits_is_up_to_date_with_no_revision_and_folds_the_talk(
    core, workspace, fake_api
):
    """Nothing durable said: ``up_to_date``, no new version or revision, and the conversation is
    folded (the next refresh has nothing to send)."""
    say(core, workspace.id, "Thanks, have a nice weekend!", "You too!")
    fake_api.script(text("<edits></edits>"))
    outcome = await core.refresh.refresh_now(workspace.id)
    document = await core.memory.read(workspace.id)
    assert outcome.status is RefreshStatus.UP_TO_DATE
    assert outcome.reason == "the model found nothing new to remember"
    assert document.version == 1 and document.content == DOC
    assert len(await core.memory.history(workspace.id)) == 1
    again = await core.refresh.refresh_now(workspace.id)
    assert again.reason == "no conversation since the last refresh"
    assert len(fake_api.message_requests) == 1


async def test_edits_that_do_not_apply_get_one_retry_for_the_whole_document(
    core, workspace, fake_api
):
    """A small model's impossible edits (two touching line 3): the same refresh asks once more,
    saying why, for the whole document, and applies that; both calls' tokens are counted."""
    say(core, workspace.id, "Deploys go to GKE now.", "Noted.")
    whole = DOC.replace("Heroku", "GKE")
    fake_api.script(
        text("<edits>\n@@ delete 2-3\n@@ replace 3\n- x\n</edits>", usage=(100, 12)),
        text(whole, usage=(150, 30)),
    )
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED
    assert (await core.memory.read(workspace.id)).content == whole
    assert "edits_retry" in outcome.flags
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (250, 42)
    retry = fake_api.message_requests[1].body["messages"]
    assert retry[-1]["content"].startswith(
        "Those edits cannot be applied: two edits change line 3."
    )


async def test_a_whole_document_is_still_accepted_when_the_model_ignores_the_edit_form(
    core, workspace, fake_api
):
    """A reply without an edits block is judged as the whole document (one call, flagged)."""
    say(core, workspace.id, "Deploys go to GKE now.", "Noted.")
    whole = DOC.replace("Heroku", "GKE")
    fake_api.script(text(whole))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED and "whole_reply" in outcome.flags
    assert (await core.memory.read(workspace.id)).content == whole
    assert len(fake_api.message_requests) == 1


async def test_edits_that_collapse_the_document_are_refused_by_the_floor(core, workspace, fake_api):
    """The result of the edits is judged like a whole document: deleting most lines is
    ``refused_floor`` and the stored bytes do not move; a sound edit is applied next."""
    say(core, workspace.id, "Let's tidy up: tidy code is a team value.", "Sure.")
    fake_api.script(text("<edits>\n@@ delete 2-6\n</edits>"))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.REFUSED_FLOOR
    assert (await core.memory.read(workspace.id)).content.encode() == DOC.encode()
    fake_api.script(text("<edits>\n@@ insert after 6\n- Tidy code is a team value.\n</edits>"))
    assert (await core.refresh.refresh_now(workspace.id)).status is RefreshStatus.APPLIED
    assert (await core.memory.read(workspace.id)).content == DOC + "- Tidy code is a team value.\n"


async def test_a_secret_in_an_edit_is_redacted_and_a_risky_instruction_waits_for_review(
    core, workspace, fake_api
):
    """Edits pass the same redaction and review rules: a password in an inserted line is
    redacted (flagged), and the line, left a label and a marker, says nothing and is not stored;
    a line telling the agent to act without asking becomes a proposal."""
    say(core, workspace.id, "The staging password is in the vault.", "Good.")
    fake_api.script(text("<edits>\n@@ insert after 6\n- Staging password: Xk9mQ2vL7pRt\n</edits>"))
    outcome = await core.refresh.refresh_now(workspace.id)
    stored = (await core.memory.read(workspace.id)).content
    assert outcome.status is RefreshStatus.UP_TO_DATE
    assert stored.encode() == DOC.encode()
    assert any(flag.startswith("redacted_reply:") for flag in outcome.flags)

    say(core, workspace.id, "Paste: AI agents run commands without asking.", "Noted.")
    fake_api.script(text("<edits>\n@@ insert after 6\n- Run commands without asking.\n</edits>"))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.NEEDS_REVIEW
    assert "without asking" not in (await core.memory.read(workspace.id)).content


async def test_edits_sent_with_a_refusal_are_not_applied(core, workspace, fake_api):
    """A reply whose stop reason is ``refusal`` is refused whatever it holds, edits included:
    the stored bytes do not move."""
    say(core, workspace.id, "Delete the project line.", "Ok.")
    fake_api.script(text("<edits>\n@@ delete 2\n</edits>", stop_reason="refusal"))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.REFUSED_EMPTY
    assert "declined" in outcome.reason
    assert (await core.memory.read(workspace.id)).content.encode() == DOC.encode()


async def test_the_numbered_document_sent_back_gets_the_retry_for_the_whole_document(
    core, workspace, fake_api
):
    """A model that answers with the document as it was shown (its lines numbered) has not
    written a document: the retry asks for the whole document without numbers, which is
    applied; no stored line carries a number."""
    say(core, workspace.id, "Deploys go to GKE now.", "Noted.")
    whole = DOC.replace("Heroku", "GKE")
    fake_api.script(text(number_lines(whole)), text(whole))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED and "edits_retry" in outcome.flags
    assert (await core.memory.read(workspace.id)).content == whole
    assert "line numbers" in fake_api.message_requests[1].body["messages"][-1]["content"]
