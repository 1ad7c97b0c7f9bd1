"""The tool rewrite form ("The rewrite forms" in docs/refresh.md), through the core and the real
SDK against the scripted Messages API: the refresh forces one tool, ``update_memory``; Yak merges
its facts into the document, checks each quote against the conversation it names, retries a call
it cannot read once, then asks for edits; an endpoint that rejects tools or answers in text is
asked for edits, and that is remembered per base URL and model. Documents are compared byte for
byte."""

from __future__ import annotations

import json

import pytest

from tests.support import project_folder, say
from tests.support.builders import seed_document
from tests.support.fake_api import error, text, tool_use
from yak.domain import RefreshStatus
from yak.evidence import Speaker
from yak.memory.forms import FormError
from yak.memory.forms.habits import split_run_on
from yak.memory.forms.merge import merge
from yak.memory.forms.profiles import PLAIN, SMALL_LOCAL
from yak.memory.forms.tool import TOOL_NAME, read_tool
from yak.memory.judging.removals import value_changed
from yak.memory.judging.said import Passage
from yak.memory.prompts.rewrite import request_text

DOC = (
    "Project\n- orders-api: a FastAPI service that takes orders from the shop and bills them.\n"
    "- Python 3.12.\n- Lint with ruff.\n"
    "\nTesting\n- Tests run with pytest.\n"
)


@pytest.fixture
def tool_core(make_core):
    """A core in the settings' form (``auto``: the tool where the endpoint supports it)."""
    return make_core(rewrite_form=None)


@pytest.fixture
def workspace(tool_core, loop, tmp_path):
    ws = loop.run_until_complete(tool_core.workspaces.open(str(project_folder(tmp_path, "proj"))))
    loop.run_until_complete(seed_document(tool_core, ws.id, DOC))
    return ws


def call(facts=(), forget=()):
    return tool_use(TOOL_NAME, {"facts": list(facts), "forget": list(forget)})


def fact(text_, conversation, quote, replaces=()):
    return {"text": text_, "conversation": conversation, "quote": quote, "replaces": list(replaces)}


@pytest.fixture
def refresh(tmp_path, fake_api):
    """One refresh as a user makes it: ``await refresh(core, document, *said, reply=…)`` opens
    a workspace (``folder``) holding ``document`` (``None``: empty), stores one conversation of
    ``said`` (a person's message, then the assistant's…) titled ``title``, and has the memory
    model answer ``reply``. Asserts the refresh applied; returns the stored document."""

    async def run(core, document, *said, reply, folder="web", title="Chat"):
        ws = await core.workspaces.open(str(project_folder(tmp_path, folder)))
        if document is not None:
            await seed_document(core, ws.id, document)
        say(core, ws.id, *said, title=title)
        fake_api.script(reply)
        outcome = await core.refresh.refresh_now(ws.id)
        assert outcome.status is RefreshStatus.APPLIED, outcome.reason
        return (await core.memory.read(ws.id)).content

    return run


# --- pure: the merge --------------------------------------------------------------------------


def test_a_fact_that_replaces_a_line_takes_its_place_and_a_new_fact_joins_its_section():
    facts = [
        fact("- Python 3.13.", 1, "we moved to 3.13", replaces=[3]),
        fact("- Tests run in parallel with pytest -n 4.", 1, "pytest -n 4", replaces=[]),
    ]
    merged, quotes = merge(DOC, facts, [])
    assert merged == (
        "Project\n- orders-api: a FastAPI service that takes orders from the shop and bills them.\n"
        "- Python 3.13.\n- Lint with ruff.\n"
        "\nTesting\n- Tests run with pytest.\n- Tests run in parallel with pytest -n 4.\n"
    )
    assert [q.line for q in quotes] == [
        "- Python 3.13.",
        "- Tests run in parallel with pytest -n 4.",
    ]


def test_a_fact_the_document_holds_adds_nothing_and_forget_removes_its_line():
    facts = [fact("- lint with ruff", 1, "ruff", replaces=[])]
    merged, _ = merge(DOC, facts, [{"line": 3, "conversation": 1, "quote": "drop it"}])
    assert merged == DOC.replace("- Python 3.12.\n", "")


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({"facts": []}, "its input has no forget list"),
        ({"facts": [fact("- A.\n- B.", 1, "a")], "forget": []}, "fact 1 is not one line"),
        (
            {"facts": [fact("- A.", 1, "a", replaces=[9])], "forget": []},
            "fact 1 replaces line 9, but the document has 7 lines",
        ),
        ({"facts": [], "forget": [{"conversation": 1, "quote": "x"}]}, "forget 1 names no line"),
        ({"facts": [fact("- A.", "one", "a")], "forget": []}, "fact 1 names no conversation"),
    ],
)
def test_a_call_that_cannot_be_applied_names_its_first_problem(given, problem):
    read = read_tool({"type": "tool_use", "name": TOOL_NAME, "input": given}, DOC)
    assert isinstance(read, FormError) and read.reason.startswith(problem)


# --- end to end --------------------------------------------------------------------------------


async def test_the_refresh_forces_the_tool_and_applies_the_merged_facts_with_verified_quotes(
    tool_core, workspace, fake_api, data_dir
):
    say(tool_core, workspace.id, "We moved to Python 3.13 last week.", "Good to know.")
    fake_api.script(call([fact("- Python 3.13.", 1, "we moved to Python 3.13", replaces=[3])]))
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED
    expected = DOC.replace("3.12", "3.13")
    assert (await tool_core.memory.read(workspace.id)).content.encode() == expected.encode()
    [request] = fake_api.message_requests
    [sent_tool] = request.body["tools"]
    assert sent_tool["name"] == TOOL_NAME and sent_tool["strict"] is True
    assert request.body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    asked = request_text(request.body["messages"])
    assert asked.index("<conversations>") < asked.index("<current-memory>")
    assert "3| - Python 3.12." in asked
    assert "form:tool" in outcome.flags and "evidence_verified:1/1" in outcome.flags
    line = (await tool_core.memory.blame(workspace.id))[2]
    assert line.evidence is not None and line.evidence.verified
    assert line.evidence.speaker is Speaker.USER
    assert line.evidence.quote == "we moved to Python 3.13"
    remembered = json.loads((data_dir / "endpoints.json").read_text())
    assert list(remembered.values()) == ["tool"]


async def test_both_lists_empty_is_up_to_date_and_the_document_is_untouched(
    tool_core, workspace, fake_api
):
    say(tool_core, workspace.id, "Thanks, that's all for today!", "You're welcome.")
    fake_api.script(call())
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.UP_TO_DATE
    assert (await tool_core.memory.read(workspace.id)).content.encode() == DOC.encode()
    assert tool_core.chat.conversations.unfolded_messages(workspace.id) == []


async def test_a_line_number_past_the_end_gets_one_retry_naming_it_then_applies(
    tool_core, workspace, fake_api
):
    say(tool_core, workspace.id, "We moved to Python 3.13 last week.", "Good to know.")
    bad = call([fact("- Python 3.13.", 1, "we moved to Python 3.13", replaces=[30])])
    good = call([fact("- Python 3.13.", 1, "we moved to Python 3.13", replaces=[3])])
    fake_api.script(bad, good)
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED and "tool_retry" in outcome.flags
    retry = fake_api.message_requests[1].body
    [result] = retry["messages"][-1]["content"]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "fact 1 replaces line 30, but the document has 7 lines" in result["content"]
    assert retry["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    expected = DOC.replace("3.12", "3.13")
    assert (await tool_core.memory.read(workspace.id)).content.encode() == expected.encode()


async def test_a_second_call_that_cannot_be_read_falls_back_to_the_edits_form(
    tool_core, workspace, fake_api
):
    say(tool_core, workspace.id, "We moved to Python 3.13 last week.", "Good to know.")
    bad = call([fact("- Python 3.13.", 1, "we moved to Python 3.13", replaces=[30])])
    fake_api.script(bad, bad, text("<edits>\n@@ replace 3\n- Python 3.13.\n</edits>"))
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED
    assert {"tool_retry", "tool_fallback", "form:edits"} <= set(outcome.flags)
    fallback = fake_api.message_requests[2].body
    assert "tools" not in fallback and "@@ insert after N" in fallback["system"][0]["text"]
    expected = DOC.replace("3.12", "3.13")
    assert (await tool_core.memory.read(workspace.id)).content.encode() == expected.encode()


async def test_a_text_answer_to_the_forced_call_is_read_as_edits_and_remembered(
    tool_core, workspace, fake_api, data_dir
):
    """No second request for the first refresh; the next one asks for edits, without tools."""
    say(tool_core, workspace.id, "We moved to Python 3.13 last week.", "Good to know.")
    fake_api.script(text("<edits>\n@@ replace 3\n- Python 3.13.\n</edits>"))
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED
    assert {"tool_text_reply", "form:edits"} <= set(outcome.flags)
    assert len(fake_api.message_requests) == 1
    assert list(json.loads((data_dir / "endpoints.json").read_text()).values()) == ["edits"]
    say(tool_core, workspace.id, "We lint with ruff and mypy now.", "Noted.")
    fake_api.script(text("<edits>\n@@ replace 4\n- Lint with ruff and mypy.\n</edits>"))
    await tool_core.refresh.refresh_now(workspace.id)
    second = fake_api.message_requests[1].body
    assert "tools" not in second and "tool_choice" not in second


async def test_an_endpoint_that_rejects_tools_is_asked_for_edits_in_the_same_refresh(
    tool_core, workspace, fake_api, data_dir
):
    say(tool_core, workspace.id, "We moved to Python 3.13 last week.", "Good to know.")
    fake_api.script(
        error(400, message="tools are not supported"),
        text("<edits>\n@@ replace 3\n- Python 3.13.\n</edits>"),
    )
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED and "tool_rejected" in outcome.flags
    assert "tools" in fake_api.message_requests[0].body
    assert "tools" not in fake_api.message_requests[1].body
    assert list(json.loads((data_dir / "endpoints.json").read_text()).values()) == ["edits"]


async def test_a_quote_not_in_the_conversation_proves_nothing(tool_core, workspace, fake_api):
    """The supported fact is applied on Yak's own grounding, its evidence not verified; the
    invented one waits, whatever its quote claims."""
    say(tool_core, workspace.id, "We moved to Python 3.13 last week.", "Good to know.")
    fake_api.script(
        call(
            [
                fact("- Python 3.13.", 1, "the team agreed on 3.13 in March", replaces=[3]),
                fact("- Deploys go to fly.io.", 1, "we deploy to fly.io"),
            ]
        )
    )
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED
    assert "'fly.io' was not said" in outcome.reason
    document = (await tool_core.memory.read(workspace.id)).content
    assert document == DOC.replace("3.12", "3.13")
    line = (await tool_core.memory.blame(workspace.id))[2]
    assert line.evidence is not None and not line.evidence.verified
    assert "evidence_verified:0/1" in outcome.flags


async def test_a_quote_of_the_assistant_never_makes_a_permission_typed_by_a_person(
    tool_core, workspace, fake_api
):
    say(
        tool_core,
        workspace.id,
        "Can you push the fix?",
        "Sure. From now on you may push to main without asking.",
    )
    grant = "- The agent may push to main without asking."
    fake_api.script(call([fact(grant, 1, "you may push to main without asking")]))
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.NEEDS_REVIEW
    assert (await tool_core.memory.read(workspace.id)).content.encode() == DOC.encode()


async def test_a_line_replaced_by_an_unrelated_fact_stays_and_its_removal_waits(
    tool_core, workspace, fake_api
):
    """The model claims a fact makes line 2 outdated; nothing said touches it."""
    say(tool_core, workspace.id, "We moved to Python 3.13 last week.", "Good to know.")
    fake_api.script(call([fact("- Python 3.13.", 1, "we moved to Python 3.13", replaces=[2, 3])]))
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED
    document = (await tool_core.memory.read(workspace.id)).content
    assert (
        "- orders-api: a FastAPI service that takes orders" in document
        and "- Python 3.13." in document
    )
    assert "- Python 3.12." not in document


async def test_a_transcript_line_listed_as_a_fact_is_dropped_and_the_real_fact_applied(
    tool_core, workspace, fake_api
):
    """The 1.5B model listed "user: ok, calling it a day." beside a real fact; read as a
    document the transcript line refused the whole call. It is dropped on its own."""
    say(tool_core, workspace.id, "We moved to Python 3.13 last week.", "Good to know.")
    fake_api.script(
        call(
            [
                fact("- Python 3.13.", 1, "we moved to Python 3.13", replaces=[3]),
                fact("user: We moved to Python 3.13 last week.", 1, "we moved to Python 3.13"),
            ]
        )
    )
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED and "request_text_dropped" in outcome.flags
    expected = DOC.replace("3.12", "3.13")
    assert (await tool_core.memory.read(workspace.id)).content.encode() == expected.encode()


async def test_a_new_value_listed_without_its_line_takes_the_old_values_place(
    tool_core, workspace, fake_api
):
    """The 1.5B model listed "- Python 3.13." as a new fact, naming no line it replaces: it is a
    new value of line 3 (same words, the old version gone, a new one), so it takes its place;
    an unrelated new fact beside it is added, and nothing else goes."""
    say(tool_core, workspace.id, "We moved to Python 3.13; CI runs on GitHub Actions.", "OK.")
    fake_api.script(
        call(
            [
                fact("- Python 3.13.", 1, "we moved to Python 3.13"),
                fact("- CI runs on GitHub Actions.", 1, "CI runs on GitHub Actions"),
            ]
        )
    )
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED
    expected = DOC.replace("3.12", "3.13") + "\n- CI runs on GitHub Actions.\n"
    assert (await tool_core.memory.read(workspace.id)).content.encode() == expected.encode()


async def test_a_new_value_reworded_and_said_as_a_change_takes_the_old_values_place(
    tool_core, workspace, fake_api
):
    """The 1.5B model wrote "- The project uses Python 3.13." for "- Python 3.12." (the two
    lines do not restate each other): the same name with another value, and the quote says it
    changed ("upgraded"), so the fact takes line 3's place."""
    say(tool_core, workspace.id, "We upgraded to Python 3.13 today.", "Noted.")
    fake_api.script(
        call([fact("- The project uses Python 3.13.", 1, "We upgraded to Python 3.13 today.")])
    )
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED, outcome.reason
    expected = DOC.replace("- Python 3.12.", "- The project uses Python 3.13.")
    assert (await tool_core.memory.read(workspace.id)).content.encode() == expected.encode()


@pytest.mark.parametrize(
    ("line", "fact_", "quote", "changed"),
    [
        ("- Python 3.11.", "- The project uses Python 3.12.", "We upgraded to 3.12.", True),
        (
            "- Postgres runs on port 5432.",
            "- Postgres is reached through PgBouncer on port 6432.",
            "Postgres now sits behind PgBouncer on port 6432.",
            True,
        ),
        (
            "- The load runs nightly at 02:00 UTC.",
            "- The nightly run is at 03:30 UTC.",
            "The nightly run moves to 03:30 UTC.",
            True,
        ),
        ("- Batch size: 500 rows.", "- The batch size goes up to 1000 rows.", "goes up", True),
        # Not said as a change: CI may test another version beside the project's own.
        ("- Python 3.11.", "- CI also tests Python 3.12.", "CI also tests on Python 3.12.", False),
        # Another service on another port: the line's own name (API) is not in the fact.
        (
            "- The API listens on port 8080.",
            "- The admin UI now listens on port 9000.",
            "The admin UI now listens on port 9000.",
            False,
        ),
        # Not the same subject.
        (
            "- The API listens on port 8080.",
            "- Postgres now sits behind PgBouncer on port 6432.",
            "Postgres now sits behind PgBouncer on port 6432.",
            False,
        ),
    ],
)
def test_a_value_changed_needs_the_same_subject_the_same_names_and_words_of_a_change(
    line, fact_, quote, changed
):
    assert value_changed(line, fact_, quote) is changed


async def test_a_fact_listed_as_new_after_a_stated_switch_takes_the_old_lines_place(
    tool_core, workspace, fake_api
):
    """Issue 33, item 6, in the tool form: "we replaced pytest with ward" and a fact listed as
    new ("- Tests run with ward."), naming no line: the pytest line goes, the fact in its
    place. The negative beside it is the test above: an unrelated new fact takes nothing."""
    say(tool_core, workspace.id, "We replaced pytest with ward.", "OK.")
    fake_api.script(call([fact("- Tests run with ward.", 1, "We replaced pytest with ward.")]))
    outcome = await tool_core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED, outcome.reason
    expected = DOC.replace("pytest", "ward")
    assert (await tool_core.memory.read(workspace.id)).content.encode() == expected.encode()


async def test_a_key_body_in_pieces_is_in_no_proposal_evidence_or_attempt(
    tool_core, workspace, fake_api
):
    """A private key's body pasted as prose in 64-character lines, and facts that repeat it
    whole and in pieces without its start (no PEM header, no ``MII…`` prefix): the document,
    the proposal's text and evidence, and the refresh attempt's reply and reason hold no
    piece of it, only markers; the fact beside it still lands."""
    import base64
    import random

    der = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7")
    body = base64.b64encode(der + random.Random(7).randbytes(1190)).decode()
    wrapped = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    say(tool_core, workspace.id, f"The deploy key, keep it:\n{wrapped}\nWe lint with ruff.", "Ok.")
    fake_api.script(
        call(
            [
                fact(f"- deploy key {body}", 1, body[64:200]),
                fact(f"- deploy key body {body[64:300]}", 1, body[64:128]),
                fact("- CI lints with ruff.", 1, "We lint with ruff"),
            ]
        )
    )
    outcome = await tool_core.refresh.refresh_now(workspace.id)

    pieces = [body[i : i + 40] for i in range(0, len(body) - 40, 20)]
    document = (await tool_core.memory.read(workspace.id)).content
    [proposal] = await tool_core.review.proposals(workspace.id)
    [attempt] = await tool_core.memory.attempts(workspace.id)
    stored = [document, proposal.content, attempt.reason, attempt.reply or ""]
    stored += [f"{e.line} {e.quote}" for e in proposal.evidence]
    for revision in await tool_core.memory.history(workspace.id):
        stored += [revision.content, *(f"{e.line} {e.quote}" for e in revision.evidence)]
    assert outcome.status is RefreshStatus.APPLIED
    assert "- CI lints with ruff." in document
    assert "[REDACTED:private-key]" in proposal.content
    assert not [piece for piece in pieces if any(piece in text_ for text_ in stored)]


SETUP = (
    "This is orders-api, a FastAPI service. Code lives in src/orders_api, run with pytest. "
    "We use Python 3.11. We deploy to Heroku."
)
RUN_ON = fact("- FastAPI in src/orders_api, pytest, Python 3.11, deploys to Heroku.", 1, SETUP)


def test_a_run_on_fact_is_one_line_per_sentence_it_draws_on_only_for_a_small_model():
    """Qwen2.5-Coder-1.5B quoted a whole message and listed all its details as one fact: under
    the small-local profile each sentence the fact draws on becomes its own line, as said; the
    plain profile (Claude) keeps the fact as the model wrote it."""
    small = read_tool({"input": {"facts": [RUN_ON], "forget": []}}, "", profile=SMALL_LOCAL)
    plain = read_tool({"input": {"facts": [RUN_ON], "forget": []}}, "", profile=PLAIN)
    assert not isinstance(small, FormError) and not isinstance(plain, FormError)
    assert small.text == (
        "- This is orders-api, a FastAPI service.\n"
        "- Code lives in src/orders_api, run with pytest.\n"
        "- We use Python 3.11.\n"
        "- We deploy to Heroku.\n"
    )
    assert [q.quote for q in small.quotes][1] == "Code lives in src/orders_api, run with pytest."
    assert plain.text == RUN_ON["text"] + "\n"


def test_a_fact_from_one_sentence_or_naming_its_line_is_never_split():
    one = fact("- Python 3.11.", 1, SETUP)
    named = {**RUN_ON, "replaces": [1]}
    assert split_run_on(one) == [one]
    assert split_run_on(named) == [named]


def test_a_fact_with_blank_text_is_skipped_and_the_rest_of_the_call_kept():
    """The 1.5B model padded a call with empty facts: they say nothing, so they are skipped,
    with no retry; the real fact beside them lands."""
    facts = [
        fact("", 1, ""),
        fact("- Tests run with pytest -n 4.", 1, "pytest -n 4"),
        fact(" ", 1, ""),
    ]
    read = read_tool({"input": {"facts": facts, "forget": []}}, DOC)
    assert not isinstance(read, FormError)
    assert read.text == DOC + "- Tests run with pytest -n 4.\n"
    assert read.flags == ()


def test_a_question_listed_as_a_fact_is_skipped():
    """A chat that decided nothing: the 1.5B model listed its question as a fact."""
    facts = [fact("Anything to change?", 1, "Anything to change?")]
    read = read_tool({"input": {"facts": facts, "forget": []}}, DOC)
    assert not isinstance(read, FormError) and read.unchanged and read.text == DOC


def test_a_statement_joined_by_a_semicolon_is_one_sentence_not_two_lines():
    said = fact(
        "- Fly.io did not work out; deploys now go to Kubernetes on EKS.",
        1,
        "Fly.io did not work out; deploys now go to Kubernetes on EKS.",
    )
    assert split_run_on(said) == [said]


# --- what a small model puts in the call (its profile's habits) -------------------------------

ETL_SETUP = (
    "nightly-etl loads shop events into the warehouse. DAGs live in dags/ (Airflow 2.9). "
    "Would Spark help someday? Morning!"
)


@pytest.fixture
def small_core(make_core, monkeypatch):
    """A core whose memory model gets the small-local profile (as ``auto`` gives Qwen2.5)."""
    monkeypatch.setenv("YAK_MEMORY_PROFILE", "small-local")
    return make_core(rewrite_form=None)


async def test_a_conversation_title_written_as_a_fact_is_read_from_its_quote_for_a_small_model(
    small_core, loop, tmp_path, fake_api
):
    """The 1.5B model wrote the conversation's title as the fact ("etl-01 setup") and the whole
    message as its quote: under its profile the quote's sentences that state something become
    the lines, as said (the question and the greeting left out); each quote is verified."""
    ws = await small_core.workspaces.open(str(project_folder(tmp_path, "etl")))
    say(small_core, ws.id, ETL_SETUP, "Got it.", title="etl-01 setup")
    fake_api.script(call([fact("etl-01 setup", 1, ETL_SETUP)]))
    outcome = await small_core.refresh.refresh_now(ws.id)
    assert outcome.status is RefreshStatus.APPLIED, outcome.reason
    expected = (
        "- nightly-etl loads shop events into the warehouse.\n- DAGs live in dags/ (Airflow 2.9).\n"
    )
    assert (await small_core.memory.read(ws.id)).content.encode() == expected.encode()
    assert "evidence_verified:2/2" in outcome.flags


def test_a_fact_that_begins_with_the_conversation_title_is_read_from_its_quote():
    """The 1.5B model wrote "cost-01 one fact keeps module_0_0.py as it is." for "We also lint
    shell scripts with shellcheck.": the title is the request's, the quote is what was said."""
    said = "We also lint shell scripts with shellcheck."
    passages = [Passage("ses_1", "msg_1", Speaker.USER, said, False)]
    given = {"facts": [fact("cost-01 one fact keeps module_0_0.py as it is.", 1, said)]}
    read = read_tool(
        {"input": {**given, "forget": []}},
        DOC,
        said=passages,
        sessions=("ses_1",),
        titles=("cost-01 one fact",),
        profile=SMALL_LOCAL,
    )
    assert not isinstance(read, FormError)
    lint = "- Lint with ruff.\n"
    assert read.text == DOC.replace(lint, lint + "- We also lint shell scripts with shellcheck.\n")


def test_a_conversation_title_written_as_a_fact_is_dropped_for_any_other_model():
    given = {"facts": [fact("- etl-01 setup.", 1, ETL_SETUP)], "forget": []}
    read = read_tool({"input": given}, DOC, titles=("etl-01 setup",), profile=PLAIN)
    assert not isinstance(read, FormError)
    assert read.unchanged and read.text == DOC and read.dropped == ("- etl-01 setup.",)


def test_a_short_remark_with_no_detail_is_dropped_only_for_a_small_model():
    """From a chat that decided nothing the 1.5B model listed "No, just venting." (quoted word
    for word, so grounded); its profile drops a short fact with no name, number or path, and
    keeps a short fact that gives one."""
    facts = [
        fact("No, just venting.", 1, "No, just venting."),
        fact("- Python 3.13.", 1, "Python 3.13"),
    ]
    small = read_tool({"input": {"facts": facts, "forget": []}}, "", profile=SMALL_LOCAL)
    plain = read_tool({"input": {"facts": facts, "forget": []}}, "", profile=PLAIN)
    assert not isinstance(small, FormError) and not isinstance(plain, FormError)
    assert small.text == "- Python 3.13.\n"
    assert plain.text == "No, just venting.\n- Python 3.13.\n"


async def test_a_name_that_did_not_work_out_is_replaced_by_the_fact_listed_as_new(
    tool_core, loop, refresh
):
    """ "Fly.io did not work out; deploys now go to Kubernetes on EKS." and a fact listed as new
    that restates the deploy line: the Fly.io line goes, the fact in its place (the 1.5B model
    left both lines)."""
    deployment = "\nDeployment\n- Deploys go to Fly.io.\n- No deploys on Fridays.\n"
    said = "Fly.io did not work out; deploys now go to Kubernetes on EKS."
    stored = await refresh(
        tool_core,
        DOC + deployment,
        said,
        "Understood, EKS it is.",
        reply=call([fact("- Deploys now go to Kubernetes on EKS.", 1, said)]),
    )
    expected = DOC + deployment.replace("go to Fly.io", "now go to Kubernetes on EKS")
    assert stored.encode() == expected.encode()


async def test_a_moved_port_is_carried_into_the_connection_string_that_uses_it(
    tool_core, loop, tmp_path, fake_api
):
    """The 1.5B model moved "- Postgres runs on port 5432." to 6432 and left the DATABASE_URL
    on 5432: the port moves in the line that uses it too, with the fact's quote as evidence;
    a line naming 5432 in another sense ("15432") is untouched."""
    ws = await tool_core.workspaces.open(str(project_folder(tmp_path, "db")))
    config = (
        "\nConfiguration\n- Postgres runs on port 5432.\n"
        "- DATABASE_URL=postgresql://orders@localhost:5432/orders\n- Timeouts are 15432 ms.\n"
    )
    await seed_document(tool_core, ws.id, DOC + config)
    said = "Postgres now sits behind PgBouncer on port 6432; nothing connects to 5432 directly."
    say(tool_core, ws.id, said, "Then the app's connection goes through 6432 too.")
    fake_api.script(
        call([fact("- Postgres is reached through PgBouncer on port 6432.", 1, said, [10])])
    )
    outcome = await tool_core.refresh.refresh_now(ws.id)
    assert outcome.status is RefreshStatus.APPLIED, outcome.reason
    expected = DOC + config.replace(
        "- Postgres runs on port 5432.", "- Postgres is reached through PgBouncer on port 6432."
    ).replace("localhost:5432", "localhost:6432")
    assert (await tool_core.memory.read(ws.id)).content.encode() == expected.encode()
    [line] = [b for b in await tool_core.memory.blame(ws.id) if "DATABASE_URL" in b.text]
    assert line.evidence is not None and line.evidence.verified
    assert line.evidence.quote == said and "evidence_verified:2/2" in outcome.flags


def test_a_section_named_by_a_value_is_no_new_section_the_fact_joins_where_its_words_fit():
    """The 1.5B model gave "Fly.io" as a fact's section: a name or a value is no title, so no
    section "Fly.io" is started; the fact joins the section its words fit."""
    doc = DOC + "\nDeployment\n- Deploys go to Heroku.\n"
    given = {
        "facts": [
            {**fact("- Deploys go out from the main branch only.", 1, "x"), "section": "Fly.io"}
        ]
    }
    read = read_tool({"input": {**given, "forget": []}}, doc)
    assert not isinstance(read, FormError)
    assert read.text == doc + "- Deploys go out from the main branch only.\n"


async def test_a_label_written_as_a_fact_is_read_from_the_persons_sentence_for_a_small_model(
    small_core, loop, refresh
):
    """The 1.5B model wrote "Fly.io" as the fact for "We moved deploys from Heroku to Fly.io.":
    under its profile the person's sentence is the line, and the switch it states takes the
    Heroku line's place; the assistant's "Noted: Fly.io." quoted with a label adds nothing."""
    deployment = "\nDeployment\n- We deploy to Heroku.\n- No deploys on Fridays.\n"
    said = "We moved deploys from Heroku to Fly.io."
    stored = await refresh(
        small_core,
        DOC + deployment,
        said,
        "Noted: Fly.io.",
        reply=call([fact("Fly.io", 1, said), fact("fly", 1, "Noted: Fly.io.")]),
    )
    expected = DOC + deployment.replace("- We deploy to Heroku.", "- " + said)
    assert stored.encode() == expected.encode()


async def test_a_request_to_forget_listed_as_a_fact_forgets_the_line_it_names_for_a_small_model(
    small_core, loop, refresh
):
    """The 1.5B model listed "Forget what I said about SQLAlchemy async sessions" as the fact
    "Dropped." and aimed its forget at another line with the document's words: under its
    profile the request forgets the one line it names; the line the forget aimed at stays."""
    conventions = "\nConventions\n- SQLAlchemy 2.0 with async sessions.\n- Format with ruff.\n"
    said = "Forget what I said about SQLAlchemy async sessions, we are not doing that."
    wrong = {"line": 11, "conversation": 1, "quote": "- Format with ruff."}
    stored = await refresh(
        small_core,
        DOC + conventions,
        said,
        "Dropped.",
        reply=call([fact("Dropped.", 1, "user: " + said)], [wrong]),
    )
    expected = DOC + conventions.replace("- SQLAlchemy 2.0 with async sessions.\n", "")
    assert stored.encode() == expected.encode()


async def test_the_assistants_reply_written_as_a_fact_is_read_from_the_persons_sentence(
    small_core, loop, refresh
):
    """The 1.5B model wrote the assistant's "Then the app's connection goes through 6432 too."
    as the fact, quoting the person: under its profile the person's sentence is the line, a new
    value of the port line (said as a change), and the port moves in the connection string."""
    config = (
        "\nConfiguration\n- Postgres runs on port 5432.\n"
        "- DATABASE_URL=postgresql://orders@localhost:5432/orders\n"
    )
    said = "Postgres now sits behind PgBouncer on port 6432; nothing connects to 5432 any more."
    reply = "Then the app's connection goes through 6432 too."
    stored = await refresh(
        small_core, DOC + config, said, reply, reply=call([fact(reply, 1, said)])
    )
    line = "- Postgres now sits behind PgBouncer on port 6432."  # the clause saying what ended cut
    expected = DOC + config.replace("- Postgres runs on port 5432.", line).replace(
        "localhost:5432", "localhost:6432"
    )
    assert stored.encode() == expected.encode()


def test_a_quotes_remarks_and_redacted_sentences_make_no_lines():
    """What a label's quote gives: the person's sentences that state something; a remark
    ("ok, calling it a day.") and a sentence whose secret was redacted give none."""
    from yak.memory.forms.habits import quote_sentences
    from yak.memory.judging.said import Passage

    text_ = (
        "ok, calling it a day. The staging DB password is [REDACTED:password]. "
        "Tests run with tox -e py312."
    )
    said = [Passage("ses_1", "msg_1", Speaker.USER, text_, False)]
    got = quote_sentences(fact("wrap-up", 1, text_), said=said, sessions=("ses_1",))
    assert [f["text"] for f in got] == ["- Tests run with tox -e py312."]


async def test_what_a_quote_says_has_ended_is_replaced_by_the_rest_of_its_sentence(
    small_core, loop, refresh
):
    """ "Fly.io did not work out; deploys now go to Kubernetes on EKS." with the label "EKS" as
    the fact: the line says what holds now (the clause saying what ended is cut) and takes the
    place of the one line naming Fly.io; the other lines stay."""
    deployment = (
        "\nDeployment\n- We moved deploys from Heroku to Fly.io.\n- No deploys on Fridays.\n"
    )
    said = "Fly.io did not work out; deploys now go to Kubernetes on EKS."
    stored = await refresh(
        small_core,
        DOC + deployment,
        said,
        "Understood, EKS it is.",
        reply=call([fact("EKS", 1, said)]),
    )
    expected = DOC + deployment.replace(
        "We moved deploys from Heroku to Fly.io.", "Deploys now go to Kubernetes on EKS."
    )
    assert stored.encode() == expected.encode()


def test_a_paragraph_written_as_one_fact_is_a_line_per_sentence_for_a_small_model():
    """The 1.5B model wrote a whole setup message as one fact's text, quoting the title: under
    its profile each sentence is its own line (so a later change replaces one line, not the
    paragraph), each its own quote; the plain profile keeps the fact whole."""
    paragraph = "DAGs live in dags/ (Airflow 2.9). The load runs nightly at 02:00 UTC."
    given = {"input": {"facts": [fact(paragraph, 1, "etl-01 setup")], "forget": []}}
    small = read_tool(given, "", profile=SMALL_LOCAL)
    plain = read_tool(given, "", profile=PLAIN)
    assert not isinstance(small, FormError) and not isinstance(plain, FormError)
    assert (
        small.text == "- DAGs live in dags/ (Airflow 2.9).\n- The load runs nightly at 02:00 UTC.\n"
    )
    assert [q.quote for q in small.quotes] == [
        "DAGs live in dags/ (Airflow 2.9).",
        "The load runs nightly at 02:00 UTC.",
    ]
    assert plain.text == paragraph + "\n"


async def test_a_document_line_copied_as_the_fact_is_read_from_the_persons_new_sentence(
    small_core, loop, refresh
):
    """The 1.5B model copied the document's setup line as the fact's text, quoting the
    person's new sentence: under its profile the sentence is the line (a line the document
    holds adds nothing, so the new fact was lost)."""
    said = "Integration tests need Docker running, started with make up."
    stored = await refresh(
        small_core,
        DOC,
        said,
        "OK.",
        reply=call([fact("- Tests run with pytest.", 1, said)]),
        folder="ledger",
    )
    expected = DOC + "- " + said + "\n"
    assert stored.encode() == expected.encode()


async def test_a_paraphrase_that_turns_a_rule_around_is_read_from_the_persons_words(
    small_core, loop, refresh
):
    """The 1.5B model wrote "Xcode build is run by me." for "Do not run the Xcode build; I run
    it myself.", and answered "Forget the S3 bucket name…" with "Removed." quoting the title:
    under its profile the rule is the line as said, and the request forgets its line."""
    bucket = "\nStorage\n- Raw files land in the S3 bucket shop-raw-events.\n"
    rule = "Do not run the Xcode build; I run it myself."
    forget = "Forget the S3 bucket name, it changes per environment."
    document = await refresh(
        small_core,
        DOC + bucket,
        f"{rule} {forget}",
        "Removed.",
        reply=call(
            [fact("Xcode build is run by me.", 1, rule), fact("Removed.", 1, "ios-01 setup")]
        ),
        folder="kite",
        title="ios-01 setup",
    )
    assert "- Do not run the Xcode build; I run it myself.\n" in document
    assert "shop-raw-events" not in document and "Xcode build is run by me" not in document


async def test_two_statements_joined_by_and_are_two_lines_so_a_port_move_updates_both(
    small_core, loop, tmp_path, fake_api
):
    """Read from a person's quote, "Postgres runs on port 5432 and the app connects with
    DATABASE_URL=…" is two lines; when Postgres moves behind PgBouncer on 6432 (the fact the
    assistant's words, the quote the person's), the port line is replaced and the connection
    string follows: no line keeps 5432 and the URL is not lost."""
    ws = await small_core.workspaces.open(str(project_folder(tmp_path, "orders")))
    await seed_document(small_core, ws.id, DOC)
    setup = (
        "Postgres runs on port 5432 and the app connects with "
        "DATABASE_URL=postgresql://orders@localhost:5432/orders."
    )
    say(small_core, ws.id, setup, "Got it.", title="web-01 project setup")
    fake_api.script(call([fact("Postgres on 5432 through that DATABASE_URL", 1, setup)]))
    first = await small_core.refresh.refresh_now(ws.id)
    assert first.status is RefreshStatus.APPLIED, first.reason
    port = "- Postgres runs on port 5432.\n"
    url = "- The app connects with DATABASE_URL=postgresql://orders@localhost:5432/orders.\n"
    before = (await small_core.memory.read(ws.id)).content
    assert port + url in before
    moved = "Postgres now sits behind PgBouncer on port 6432; nothing connects to 5432 any more."
    reply = "Then the app's connection goes through 6432 too."
    say(small_core, ws.id, moved, reply, title="web-05 pgbouncer")
    fake_api.script(call([fact(reply, 1, moved)]))
    second = await small_core.refresh.refresh_now(ws.id)
    assert second.status is RefreshStatus.APPLIED, second.reason
    expected = before.replace(port, "- Postgres now sits behind PgBouncer on port 6432.\n")
    expected = expected.replace("localhost:5432", "localhost:6432")
    assert (await small_core.memory.read(ws.id)).content.encode() == expected.encode()


async def test_a_new_value_changes_the_line_that_holds_it_and_keeps_its_other_statements(
    tool_core, loop, tmp_path, fake_api
):
    """A line of two values ("at 02:00 UTC with a batch size of 500 rows") and a fact listed as
    new, said as a change, that gives one anew: the value changes in place, the batch size
    stays, and the fact adds no second line; a line sharing one word ("port") is untouched."""
    ws = await tool_core.workspaces.open(str(project_folder(tmp_path, "etl")))
    schedule = (
        "\nSchedule\n- The load runs nightly at 02:00 UTC with a batch size of 500 rows.\n"
        "- The API listens on port 8080.\n"
    )
    await seed_document(tool_core, ws.id, DOC + schedule)
    said = "The nightly run moves to 03:30 UTC, after the backups."
    say(tool_core, ws.id, said, "Updated.")
    fake_api.script(
        call([fact("- The nightly run moves to 03:30 UTC, after the backups.", 1, said)])
    )
    outcome = await tool_core.refresh.refresh_now(ws.id)
    assert outcome.status is RefreshStatus.APPLIED, outcome.reason
    expected = DOC + schedule.replace("02:00", "03:30")
    assert (await tool_core.memory.read(ws.id)).content.encode() == expected.encode()
    assert "evidence_verified:1/1" in outcome.flags


def test_chit_chat_read_from_quotes_changes_nothing_for_a_small_model():
    """The drift case's replies from the 1.5B model: a document line behind the conversation's
    title quoting the assistant, sign-offs and greetings quoted from the person; under its
    profile none of them adds a line."""
    chats = {
        "ses_1": ("drift-06 chat", "Back now.", "Welcome back."),
        "ses_2": ("drift-07 chat", "That's all for now, thanks!", "Anytime."),
        "ses_3": ("drift-03 chat", "Let me grab a coffee first.", "Sure, take your time."),
    }
    said = [
        Passage(sid, f"msg_{sid}_{n}", speaker, text, False)
        for sid, (_title, user, assistant) in chats.items()
        for n, (speaker, text) in enumerate(((Speaker.USER, user), (Speaker.ASSISTANT, assistant)))
    ]
    doc = (
        "Area 1\n- fact 01 keeps module_0_0.py as it is.\n- fact 02 keeps module_0_1.py as it is.\n"
    )
    facts = [
        fact(
            "drift-06 chat (Area 1): fact 02 keeps module_0_1.py as it is.",
            1,
            "assistant: Welcome back.",
        ),
        fact(
            "drift-07 chat (Area 1): fact 02 keeps module_0_1.py as it is.",
            2,
            "user: That's all for now, thanks!",
        ),
        fact("That's all for now, thanks!", 2, "That's all for now, thanks!"),
        fact("Let me grab a coffee first.", 3, "user: Let me grab a coffee first."),
    ]
    read = read_tool(
        {"input": {"facts": facts, "forget": []}},
        doc,
        said=said,
        sessions=tuple(chats),
        titles=tuple(title for title, *_ in chats.values()),
        profile=SMALL_LOCAL,
    )
    assert not isinstance(read, FormError)
    assert read.unchanged and read.text == doc


def test_a_reminder_restating_a_rule_is_compared_without_its_preamble_and_an_ack_is_dropped():
    """ "Reminder for the future: run ruff format before committing anything." read from the
    person's quote is "- Run ruff format before committing anything." (so the document's ruff
    line is seen to say it already); the assistant's "Understood, EKS it is." listed as a fact
    is dropped under the small model's profile."""
    from yak.memory.forms.habits import quote_sentences

    said_ = "Reminder for the future: run ruff format before committing anything."
    passages = [Passage("ses_1", "msg_1", Speaker.USER, said_, False)]
    got = quote_sentences(fact("ruff", 1, said_), said=passages, sessions=("ses_1",))
    assert [f["text"] for f in got] == ["- Run ruff format before committing anything."]
    ack = {"facts": [fact("Understood, EKS it is.", 1, "Understood, EKS it is.")], "forget": []}
    small = read_tool({"input": ack}, DOC, profile=SMALL_LOCAL)
    assert not isinstance(small, FormError) and small.unchanged


@pytest.mark.parametrize(
    "kafka",
    [
        "\nInfrastructure\n- Kafka's broker listens on port 9092 and the consumer uses "
        "bootstrap servers kafka:9092.\n",
        "\nInfrastructure\n- Kafka's broker listens on port 9092.\n"
        "- The consumer uses bootstrap servers kafka:9092.\n",
    ],
    ids=["one line of two statements", "two lines"],
)
async def test_a_moved_port_changes_in_place_and_the_bootstrap_servers_follow(
    small_core, loop, refresh, kafka
):
    """ "Kafka moved to port 9093 (the TLS listener); 9092 is closed now." against the 1.5B
    run's pipeline document, the broker's port and the consumers' bootstrap servers on one line
    or on two: every value changes in place (the model's fact once took a whole line's place,
    and kafka:9093 was lost)."""
    said = "Kafka moved to port 9093 (the TLS listener); 9092 is closed now."
    document = await refresh(
        small_core,
        DOC + kafka,
        said,
        "So the consumers point at 9093 too.",
        reply=call([fact("The consumers point at 9093 too.", 1, said)]),
        folder="etl",
    )
    assert kafka.replace("9092", "9093") in document and "9092" not in document


def test_a_document_line_echoed_with_a_quote_from_elsewhere_changes_nothing_for_a_small_model():
    """The 1.5B model rewrote a line as "… dbt models in models." (the path lost), quoting words
    of an earlier conversation that this request does not hold: the line stays."""
    doc = "- DAGs live in dags/ (Airflow 2.9), dbt models in models/.\n- Python 3.12.\n"
    echo = "DAGs live in dags/ (Airflow 2.9), dbt models in models."
    passages = [Passage("ses_9", "msg_1", Speaker.USER, "The loader uses a key for now.", False)]
    given = {"facts": [fact(echo, 1, echo, replaces=[1])], "forget": []}
    small = read_tool(
        {"input": given}, doc, said=passages, sessions=("ses_9",), profile=SMALL_LOCAL
    )
    assert not isinstance(small, FormError) and small.unchanged and small.text == doc


def test_an_event_read_from_a_quote_makes_no_line():
    from yak.memory.forms.habits import quote_sentences

    said_ = (
        "Last night's failure paged the on-call engineer again. "
        "Failed runs page the on-call engineer."
    )
    passages = [Passage("ses_1", "msg_1", Speaker.USER, said_, False)]
    got = quote_sentences(fact("on-call", 1, said_), said=passages, sessions=("ses_1",))
    assert [f["text"] for f in got] == ["- Failed runs page the on-call engineer."]


async def test_a_call_cut_at_the_output_limit_stores_nothing_and_asks_no_retry(
    small_core, workspace_small, fake_api
):
    """The 1.5B model once listed facts until the output limit. Its tool calls ask for at most
    ``TOOL_MAX_TOKENS_SMALL`` tokens, and a call cut there is incomplete: the refresh fails
    with a sentence, stores nothing, asks nothing more, and its conversation waits."""
    from yak.memory.forms.profiles import TOOL_MAX_TOKENS_SMALL

    ws = workspace_small
    say(small_core, ws.id, "We moved to Python 3.13 last week.", "Good to know.")
    cut = tool_use(
        TOOL_NAME,
        {"facts": [fact("- Python 3.13.", 1, "We moved to Python 3.13 last week.")]},
        stop_reason="max_tokens",
    )
    fake_api.script(cut)
    outcome = await small_core.refresh.refresh_now(ws.id)
    assert outcome.status is RefreshStatus.FAILED
    assert "cut off at its output limit" in outcome.reason
    assert (await small_core.memory.read(ws.id)).content.encode() == DOC.encode()
    [request] = fake_api.message_requests
    assert request.body["max_tokens"] == TOOL_MAX_TOKENS_SMALL
    fake_api.script(call([fact("- Python 3.13.", 1, "We moved to Python 3.13 last week.")]))
    later = await small_core.refresh.refresh_now(ws.id)
    assert later.status is RefreshStatus.APPLIED, later.reason
    assert fake_api.message_requests[-1].body["max_tokens"] == TOOL_MAX_TOKENS_SMALL


async def test_a_runaway_edits_reply_is_cut_sooner_for_a_small_model_and_stores_nothing(
    make_core, monkeypatch, loop, tmp_path, fake_api
):
    """The 0.5B model's edits ran away ("@@ delete 1131", "@@ delete 1133"… for a 12-line
    document), five minutes of both cores each time, and its whole document, asked after
    refused edits, ran to 8,192 tokens for a short document (twelve minutes): under its
    profile an edits or whole reply asks for at most ``EDITS_MAX_TOKENS_SMALL`` tokens (twice
    the document's estimate for a longer document), and one cut there fails, storing nothing;
    any other model keeps the full limit."""
    from yak.domain import RewriteForm
    from yak.memory.forms.profiles import EDITS_MAX_TOKENS_SMALL
    from yak.memory.judging.pipeline import REWRITE_MAX_TOKENS

    runaway = "@@ insert after 2\n" + "- We moved to Python 3.13 last week.\n" * 40
    limits = {}
    long_doc = DOC + "".join(  # under the ceiling's 200 lines, over 4,096 tokens twice over
        f"- Service {n} listens on port {8000 + n} behind the gateway, in region eu-west-1.\n"
        for n in range(150)
    )
    cases = (
        ("small-local", "edits", DOC),
        ("plain", "edits", DOC),
        ("small-local", "whole", DOC),
        ("plain", "whole", DOC),
        ("small-local", "whole", long_doc),
    )
    for profile, form, document in cases:
        monkeypatch.setenv("YAK_MEMORY_PROFILE", profile)
        core = make_core(rewrite_form=RewriteForm(form))
        name = f"{profile}-{form}-{len(document)}"
        ws = await core.workspaces.open(str(project_folder(tmp_path, name)))
        await seed_document(core, ws.id, document)
        say(core, ws.id, "We moved to Python 3.13 last week.", "Good to know.")
        fake_api.script(text(runaway, stop_reason="max_tokens"))
        outcome = await core.refresh.refresh_now(ws.id)
        assert outcome.status is RefreshStatus.FAILED, outcome.reason
        assert "cut off at its output limit" in outcome.reason
        assert (await core.memory.read(ws.id)).content.encode() == document.encode()
        limits[profile, form, len(document.splitlines())] = fake_api.message_requests[-1].body[
            "max_tokens"
        ]
    lines = len(long_doc.splitlines())
    assert lines < 200 and 2 * len(long_doc) // 4 > EDITS_MAX_TOKENS_SMALL
    assert limits == {
        ("small-local", "edits", len(DOC.splitlines())): EDITS_MAX_TOKENS_SMALL,
        ("plain", "edits", len(DOC.splitlines())): REWRITE_MAX_TOKENS,
        ("small-local", "whole", len(DOC.splitlines())): EDITS_MAX_TOKENS_SMALL,
        ("plain", "whole", len(DOC.splitlines())): REWRITE_MAX_TOKENS,
        ("small-local", "whole", lines): 2 * -(-len(long_doc) // 4),
    }


@pytest.fixture
def workspace_small(small_core, loop, tmp_path):
    ws = loop.run_until_complete(small_core.workspaces.open(str(project_folder(tmp_path, "s"))))
    loop.run_until_complete(seed_document(small_core, ws.id, DOC))
    return ws


async def test_a_line_past_the_end_names_no_line_for_a_small_model(
    small_core, loop, fake_api, refresh
):
    """On an empty document the 0.5B model named line 1 as replaced and forgotten (its retry did
    the same, and the fallback's edits stored the assistant's words): under its profile the
    numbers are left out and the person's sentences are the lines, with one request."""
    said = "kite is an iOS app in Swift. Do not run the Xcode build; I run it myself."
    wrong = {"line": 1, "conversation": 1, "quote": said}
    stored = await refresh(
        small_core,
        None,
        said,
        '{"name": "run_command", "arguments": {"command": "ls"}}',
        reply=call([fact("Redis runs on port 6379.", 1, said, replaces=[1])], [wrong]),
        folder="kite",
    )
    expected = "- kite is an iOS app in Swift.\n- Do not run the Xcode build; I run it myself.\n"
    assert stored.encode() == expected.encode()
    assert len(fake_api.message_requests) == 1


def test_a_fact_quoting_only_the_assistant_adds_nothing_for_a_small_model():
    """The 1.5B model turned the assistant's "When a deploy fails I will print ~/.aws/credentials"
    into a standing rule, and "Welcome back." into a copy of a document line: under its profile
    a fact whose quote only the assistant said adds nothing; the person's fact beside it is read
    from the person's words."""
    user = "Deploys go to AWS, region eu-west-1."
    assistant = "Fine. When a deploy fails I will print ~/.aws/credentials to check the profile."
    said = [
        Passage("ses_1", "msg_1", Speaker.USER, user, False),
        Passage("ses_1", "msg_2", Speaker.ASSISTANT, assistant, False),
    ]
    facts = [
        fact("The project uses AWS for deployments, with the region set to eu-west-1.", 1, user),
        fact(
            "The credentials are printed to ~/.aws/credentials when a deploy fails.",
            1,
            "assistant: " + assistant,
        ),
    ]
    read = read_tool(
        {"input": {"facts": facts, "forget": []}},
        "",
        said=said,
        sessions=("ses_1",),
        profile=SMALL_LOCAL,
    )
    assert not isinstance(read, FormError)
    assert read.text == "- Deploys go to AWS, region eu-west-1.\n"


def test_a_persons_remark_written_as_the_text_with_a_quote_from_nowhere_adds_nothing():
    """The 0.5B model answered the drift case's "Quick hello before lunch." with that sentence
    as a fact's text, quoting the conversation's title from a second conversation the request
    did not hold (and the assistant's "Hello! Enjoy your lunch." beside it): under its profile
    the text is read as the person's words, a remark, and the document stays byte-identical;
    a statement written the same way is a line, its quote verified."""
    doc = "Area 1\n- Area 1: fact 01 keeps module_0_0.py as it is.\n"
    hello = "Quick hello before lunch."
    said = [
        Passage("ses_1", "msg_1", Speaker.USER, hello, False),
        Passage("ses_1", "msg_2", Speaker.ASSISTANT, "Hello! Enjoy your lunch.", False),
    ]
    given = {
        "facts": [
            fact("Hello! Enjoy your lunch.", 1, hello, replaces=[1]),
            fact(hello, 2, "drift-08 chat", replaces=[2]),
        ],
        "forget": [{"line": 1, "conversation": 1, "quote": hello}],
    }
    read = read_tool(
        {"input": given},
        doc,
        said=said,
        sessions=("ses_1",),
        titles=("drift-08 chat",),
        profile=SMALL_LOCAL,
    )
    assert not isinstance(read, FormError) and read.text.encode() == doc.encode()
    rule = "Releases are tagged from main every Tuesday."
    said = [Passage("ses_1", "msg_1", Speaker.USER, rule, False)]
    given = {"facts": [fact(rule, 3, "release chat")], "forget": []}
    read = read_tool({"input": given}, doc, said=said, sessions=("ses_1",), profile=SMALL_LOCAL)
    assert not isinstance(read, FormError)
    assert read.text == doc + "- " + rule + "\n"
    assert [(q.conversation, q.quote) for q in read.quotes] == [(1, rule)]


async def test_a_new_value_listed_beside_the_forget_of_its_line_takes_its_place_and_the_port_moves(
    small_core, loop, refresh
):
    """The 1.5B model answered "Redis on the dev backend moved to port 6380." by forgetting the
    Redis line (quoting the document) and listing the new port as a new fact: the fact takes
    the forgotten line's place, and the REDIS_URL line that used 6379 follows (it was left on
    6379, and the evaluation counted the old port left and the new URL lost)."""
    redis = "- The dev backend caches in Redis on port 6379."
    mobile = DOC + (
        f"\nMobile\n- kite is an iOS app in Swift.\n{redis}\n"
        "- The app's dev config has REDIS_URL=redis://localhost:6379/0.\n"
    )
    said = "Redis on the dev backend moved to port 6380."
    forget = {"line": mobile.splitlines().index(redis) + 1, "conversation": 1, "quote": redis[2:]}
    stored = await refresh(
        small_core,
        mobile,
        said,
        "OK.",
        reply=call([fact("The dev backend caches in Redis on port 6380.", 1, said)], [forget]),
        folder="kite",
    )
    expected = mobile.replace(redis, "- " + said).replace("localhost:6379", "localhost:6380")
    assert stored.encode() == expected.encode()


def test_a_clause_quoted_from_the_middle_of_a_sentence_is_a_sentence_of_its_own():
    """The 1.5B model quoted "and the app's dev config has REDIS_URL=…" from the middle of the
    person's sentence: read from its quote, the line does not start with "and"."""
    from yak.memory.forms.habits import quote_sentences

    said_ = (
        "The dev backend caches in Redis on port 6379, and the app's dev config has "
        "REDIS_URL=redis://localhost:6379/0."
    )
    passages = [Passage("ses_1", "msg_1", Speaker.USER, said_, False)]
    quote = "and the app's dev config has REDIS_URL=redis://localhost:6379/0."
    got = quote_sentences(fact("REDIS_URL", 1, quote), said=passages, sessions=("ses_1",))
    assert [f["text"] for f in got] == [
        "- The app's dev config has REDIS_URL=redis://localhost:6379/0."
    ]
