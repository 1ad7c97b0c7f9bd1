"""A reply the provider cuts off, through the chat service (``core.chat``) against the fake
Messages API: what arrived is stored followed by the incomplete mark, the turn fails with
``cut_off`` saying why, and the next request built from the stored conversation is valid (see
``docs/agent.md``, "The agent")."""

from __future__ import annotations

import pytest

from tests.support import project_folder, record
from tests.support.fake_api import cut, error, hang, stream_error, text, tool_use
from yak.agent.types import (
    ApprovalDecision,
    MessageStored,
    TurnFinished,
    incomplete_cause,
    incomplete_mark,
    no_reply_reason,
)
from yak.events import TurnCompleted


class Turns:
    """A workspace, a session, the core's chat service on the fake API, and what it reported."""

    def __init__(self, core, workspace, session) -> None:
        self.core = core
        self.workspace = workspace
        self.session = session
        self.events: list = []
        self.completed = record(core.bus, TurnCompleted)

    async def approver(self, _request):
        return ApprovalDecision.ALLOW_ONCE

    async def send(self, prompt: str) -> TurnFinished:
        return await self.core.chat.send(
            self.workspace,
            self.session.id,
            prompt,
            approver=self.approver,
            on_event=self.events.append,
        )

    def stored(self) -> list[tuple[str, list]]:
        """(role, content) of each stored message, oldest first."""
        messages = self.core.chat.conversations.messages(self.session.id)
        return [(m.role, list(m.content)) for m in messages]


@pytest.fixture
def turns(core, loop, tmp_path):
    folder = project_folder(tmp_path, "project", files={"README.md": "# Demo\n"})

    async def start():
        workspace = await core.workspaces.open(str(folder))
        return Turns(core, workspace, await core.chat.create_session(workspace.id))

    return loop.run_until_complete(start())


def _said(words: str, cause: str) -> list[dict]:
    return [{"type": "text", "text": words}, {"type": "text", "text": incomplete_mark(cause)}]


async def test_a_cut_stream_keeps_what_arrived_marked_incomplete(turns, fake_api):
    """The connection closes after two words: they are stored, then the mark; the turn fails
    with ``cut_off``, its sentence says what was kept, and no refresh is triggered."""
    fake_api.script(cut("Partial words here", after_deltas=2))
    finished = await turns.send("Tell me")

    assert finished.status == "failed"
    assert finished.cut_off == "the connection closed"
    assert finished.text == "Partial words "
    assert finished.error == (
        "The reply was cut off (the connection closed); the part that arrived is kept in the "
        "conversation, marked incomplete. Send the question again for a whole answer."
    )
    assert turns.stored() == [
        ("user", [{"type": "text", "text": "Tell me"}]),
        ("assistant", _said("Partial words ", "the connection closed")),
    ]
    assert _said("x", "the connection closed")[1]["text"] == (
        "[incomplete: the reply was cut off (the connection closed)]"
    )
    stored = [e.role for e in turns.events if isinstance(e, MessageStored)]
    assert stored == ["user", "assistant"]
    assert isinstance(turns.events[-1], TurnFinished)
    assert turns.completed == []


async def test_the_question_sent_again_after_a_cut_is_a_valid_request(turns, fake_api):
    """Retry: the prompt is stored again after the marked partial reply, and the request sends
    the partial reply with its mark between the two questions (alternating roles), so the model
    knows its first answer did not finish."""
    fake_api.script(cut("Half an answ", after_deltas=2), text("The whole answer."))
    await turns.send("Explain")
    finished = await turns.send("Explain")

    assert finished.status == "completed" and finished.cut_off is None
    assert fake_api.message_requests[-1].unmarked["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Explain"}]},
        {"role": "assistant", "content": _said("Half an ", "the connection closed")},
        {"role": "user", "content": [{"type": "text", "text": "Explain"}]},
    ]
    assert [role for role, _ in turns.stored()] == ["user", "assistant", "user", "assistant"]
    assert turns.stored()[-1][1] == [{"type": "text", "text": "The whole answer."}]
    assert len(turns.completed) == 1


async def test_an_error_event_mid_stream_is_a_cut_with_its_cause(turns, fake_api):
    """An ``event: error`` (overloaded) after the first words: they are kept, the mark says the
    provider was overloaded."""
    fake_api.script(
        stream_error(error_type="overloaded_error", after_deltas=2, text="One two three")
    )
    finished = await turns.send("Count")
    assert finished.status == "failed"
    assert finished.cut_off == "the provider was overloaded"
    assert turns.stored()[-1] == ("assistant", _said("One two ", "the provider was overloaded"))


async def test_a_stalled_stream_is_cut_at_the_timeout(turns, fake_api, model_clients):
    """The stream stops sending after two words: at the client's timeout the words are kept,
    the mark says nothing more arrived in time."""
    model_clients.timeout_s = 0.5
    fake_api.script(hang(after_deltas=2, text="Still thinking about it"))
    finished = await turns.send("Think")
    assert finished.cut_off == "no more of it arrived in time"
    assert turns.stored()[-1] == ("assistant", _said("Still thinking ", finished.cut_off))


async def test_a_cut_after_a_tool_round_keeps_the_round_and_the_partial_reply(turns, fake_api):
    """The tool call and its result stay stored; the second reply's words follow, marked; the
    next request pairs the call with its result and ends with the question."""
    fake_api.script(
        tool_use("read_file", {"path": "README.md"}, id="toolu_r"),
        cut("It is a demo project", after_deltas=3),
        text("It is a demo project."),
    )
    finished = await turns.send("What is it?")
    assert finished.cut_off == "the connection closed"
    roles = [role for role, _ in turns.stored()]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert turns.stored()[-1][1] == _said("It is a ", "the connection closed")

    await turns.send("What is it?")
    sent = fake_api.message_requests[-1].unmarked["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_r"
    assert sent[3]["content"] == _said("It is a ", "the connection closed")


@pytest.mark.parametrize("reply", [cut("Nothing", after_deltas=0), error(500)])
async def test_a_failure_before_any_text_stores_the_no_reply_mark(turns, fake_api, reply):
    """No words arrived (a stream closed at once, an HTTP error): the prompt is stored followed
    by the no-reply mark carrying the provider's sentence, which is the turn's error and its
    ``no_reply``; ``cut_off`` is unset. A new question afterwards is sent without the mark."""
    fake_api.script(reply)
    finished = await turns.send("Hello?")
    assert finished.status == "failed" and finished.cut_off is None
    assert finished.error and "cut off" not in finished.error
    assert finished.no_reply == finished.error
    assert turns.stored() == [
        ("user", [{"type": "text", "text": "Hello?"}]),
        ("assistant", [{"type": "text", "text": f"[no reply: {finished.error}]"}]),
    ]
    assert no_reply_reason(turns.stored()[-1][1][0]["text"]) == finished.error

    fake_api.script(text("Here."))
    await turns.send("Another question")
    sent = fake_api.message_requests[-1].unmarked["messages"]
    assert sent == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Hello?"},
                {"type": "text", "text": "Another question"},
            ],
        }
    ]


def test_the_incomplete_mark_reads_back_only_as_written():
    """The cause is read back from a block that is exactly a mark; other text is not a mark."""
    mark = incomplete_mark("the connection\nclosed")
    assert mark == "[incomplete: the reply was cut off (the connection closed)]"
    assert incomplete_cause(mark) == "the connection closed"
    assert incomplete_cause("[stopped]") is None
    assert incomplete_cause(f"Quoting {mark}") is None
