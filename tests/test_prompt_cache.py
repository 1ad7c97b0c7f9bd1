"""Prompt caching in the chat agent, through ``core.chat`` and the real SDK against the fake
Messages API (which simulates the API's cache): where the requests mark breakpoints, the
per-session snapshot of the system prompt (byte-identical across a memory refresh and a
restart), a hand edit reaching the agent once as a note, and the cache tokens stored per
message. See ``yak/agent/messages.py`` and "The agent" in docs/agent.md."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.support import project_folder
from tests.support.fake_api import (
    RecordedRequest,
    approx_tokens,
    canonical_json,
    count_breakpoints,
    request_blocks,
    text,
    tool_use,
)
from yak.agent.messages import CLEARED_NOTE, EDITED_NOTE, MAX_BREAKPOINTS, MEMORY_NOTE
from yak.agent.types import ApprovalDecision
from yak.domain import RefreshStatus, TokenUsage
from yak.memory.prompts.injection import OPEN_TAG, memory_block

CHAT_MODEL = "claude-chat-cache"
MEMORY_MODEL = "claude-memory-cache"
FIRST_MEMORY = "- The project builds with make.\n- Tests run with pytest.\n"
REFRESHED_MEMORY = FIRST_MEMORY + "- The user prefers short answers.\n"
EDITED_MEMORY = "- The project builds with ninja now.\n- Tests run with pytest.\n"


async def deny(_request):
    return ApprovalDecision.DENY


class Chat:
    """A workspace with a memory document, the chat service on the fake API, a helper to run
    a memory refresh, and the requests of the chat model."""

    def __init__(self, core, workspace, fake_api) -> None:
        self.core = core
        self.workspace = workspace
        self.fake = fake_api

    async def session(self) -> str:
        return (await self.core.chat.create_session(self.workspace.id)).id

    async def turn(self, session_id: str, prompt: str, *, core=None):
        finished = await (core or self.core).chat.send(
            self.workspace, session_id, prompt, approver=deny
        )
        assert finished.status == "completed", finished.error
        return finished

    async def refresh(self, new_document: str) -> None:
        """A memory refresh (the memory model rewrites the document) applied now."""
        self.fake.script(text(new_document))
        outcome = await self.core.refresh.refresh_now(self.workspace.id)
        assert outcome.status is RefreshStatus.APPLIED, outcome.reason

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.fake.message_requests if r.body["model"] == CHAT_MODEL]


@pytest.fixture
def chat(core, loop, tmp_path, fake_api):
    settings = replace(core.settings.current(), chat_model=CHAT_MODEL, memory_model=MEMORY_MODEL)
    core.settings.save(settings)
    folder = project_folder(tmp_path, "proj", files={"Makefile": "all:\n\techo hi\n"})

    async def start():
        workspace = await core.workspaces.open(str(folder))
        await core.memory.save(workspace.id, FIRST_MEMORY, expected_version=0)
        return Chat(core, workspace, fake_api)

    return loop.run_until_complete(start())


def prefix(request: RecordedRequest) -> tuple[str, str]:
    """The canonical JSON of a request's tools and system prompt, as sent (markers included)."""
    return canonical_json(request.body["tools"]), canonical_json(request.body["system"])


def notes_in(request: RecordedRequest) -> list[str]:
    """The memory notes a request's messages carry."""
    return [
        block["text"]
        for message in request.body["messages"]
        for block in message["content"]
        if block.get("type") == "text" and block["text"].startswith(EDITED_NOTE[:30])
    ]


# --- breakpoints ------------------------------------------------------------------------------
async def test_requests_mark_the_tools_both_system_blocks_and_the_last_message(chat):
    """Every request of a turn with a tool round carries exactly four breakpoints (the API allows
    four): the last tool, the static instructions, the session block, the last block of the last
    message; the second request reads the first one's prefix from the cache."""
    session = await chat.session()
    chat.fake.script(tool_use("read_file", {"path": "Makefile"}), text("It echoes hi."))
    await chat.turn(session, "What does make do?")

    first, second = chat.chat_requests()
    for request in (first, second):
        body = request.body
        assert count_breakpoints(body) == MAX_BREAKPOINTS
        assert [("cache_control" in t) for t in body["tools"]] == [False] * (
            len(body["tools"]) - 1
        ) + [True]
        assert [b["cache_control"] for b in body["system"]] == [{"type": "ephemeral"}] * 2
        *earlier, last = [b for m in body["messages"] for b in m["content"]]
        assert last["cache_control"] == {"type": "ephemeral"}
        assert not any("cache_control" in b for b in earlier)
    assert second.body["messages"][-1]["content"][-1]["type"] == "tool_result"
    assert first.usage["cache_read_input_tokens"] == 0
    assert first.usage["cache_creation_input_tokens"] > 0
    assert second.usage["cache_read_input_tokens"] == first.usage["cache_creation_input_tokens"]


async def test_the_static_instructions_are_shared_by_every_workspace(chat, tmp_path):
    """Another workspace's first request reads the tools and the static instructions from the
    cache: the first system block names nothing of a workspace, its memory or the day."""
    chat.fake.script(text("Hi."), text("Hello."))
    await chat.turn(await chat.session(), "hi")
    other = await chat.core.workspaces.open(str(project_folder(tmp_path, "other")))
    session = (await chat.core.chat.create_session(other.id)).id
    finished = await chat.core.chat.send(other, session, "hello", approver=deny)
    assert finished.status == "completed"

    first, second = chat.chat_requests()
    assert canonical_json(first.body["system"][0]) == canonical_json(second.body["system"][0])
    assert first.body["system"][1] != second.body["system"][1]
    shared = request_blocks(second.body)[: len(second.body["tools"]) + 1]
    assert second.usage["cache_read_input_tokens"] == sum(approx_tokens(b) for b, _ in shared)


# --- the session snapshot ---------------------------------------------------------------------
async def test_the_system_prompt_stays_byte_identical_across_a_refresh_and_a_restart(
    chat, make_core
):
    """A memory refresh applied mid-session changes neither the tools nor the system prompt of
    the session's next requests, also from a restarted core; the refresh is not noted, and the
    next request reads everything but the last reply and its new prompt from the cache."""
    session = await chat.session()
    chat.fake.script(text("Noted."))
    await chat.turn(session, "Remember that I like short answers.")
    await chat.refresh(REFRESHED_MEMORY)
    assert (await chat.core.memory.read(chat.workspace.id)).content == REFRESHED_MEMORY

    chat.fake.script(text("Sure."))
    await chat.turn(session, "What do we build with?")
    restarted = make_core()
    chat.fake.script(text("Make."))
    await chat.turn(session, "And after a restart?", core=restarted)

    first, second, third = chat.chat_requests()
    assert prefix(second) == prefix(first) and prefix(third) == prefix(first)
    assert FIRST_MEMORY.strip() in first.body["system"][1]["text"]
    for request in (second, third):
        assert "prefers short answers" not in canonical_json(request.body)
        assert notes_in(request) == []
    reply_and_prompt = request_blocks(second.body)[-2:]  # "Noted." and the question
    assert second.usage["cache_read_input_tokens"] > 0
    assert second.usage["cache_creation_input_tokens"] == sum(
        approx_tokens(block) for block, _ in reply_and_prompt
    )


async def test_a_new_session_after_a_refresh_sees_the_new_memory(chat):
    """The refresh takes effect in the next session: its session block holds the new
    document, while the old session keeps the one it started with."""
    old = await chat.session()
    chat.fake.script(text("Noted."))
    await chat.turn(old, "I like short answers.")
    await chat.refresh(REFRESHED_MEMORY)
    chat.fake.script(text("Hi."), text("Hello."))
    await chat.turn(await chat.session(), "hi")
    await chat.turn(old, "hello again")

    first, new, old_again = chat.chat_requests()
    assert new.body["system"][1]["text"].startswith(f"{OPEN_TAG}\n{REFRESHED_MEMORY}")
    assert old_again.body["system"] == first.body["system"]
    assert "prefers short answers" not in old_again.body["system"][1]["text"]


# --- hand edits -------------------------------------------------------------------------------
async def test_a_hand_edit_arrives_once_as_a_note_on_the_next_user_turn(chat, make_core):
    """A hand edit after the session started: the next request's user turn opens with a note
    and the current document, the system prompt unchanged; later requests (a restart included)
    carry that one note and add none; the transcript and the memory refresh leave it out."""
    session = await chat.session()
    chat.fake.script(text("Noted."))
    await chat.turn(session, "We build with make.")
    await chat.core.memory.save(chat.workspace.id, EDITED_MEMORY, expected_version=None)

    chat.fake.script(text("Ninja replaced make, then."))
    await chat.turn(session, "What do we build with?")
    chat.fake.script(text("Yes."))
    await chat.turn(session, "Sure?", core=make_core())

    first, second, third = chat.chat_requests()
    assert prefix(second) == prefix(first) == prefix(third)
    turn = second.unmarked["messages"][-1]
    assert turn["role"] == "user"
    [note, prompt] = turn["content"]
    assert note["text"].startswith(EDITED_NOTE + "\n" + OPEN_TAG + "\n" + EDITED_MEMORY)
    assert prompt == {"type": "text", "text": "What do we build with?"}
    assert len(notes_in(second)) == 1 and notes_in(third) == notes_in(second)

    stored = await chat.core.chat.messages(session)
    kinds = [[b["type"] for b in m.content] for m in stored]
    assert kinds.count([MEMORY_NOTE]) == 1
    noted = kinds.index([MEMORY_NOTE])
    assert stored[noted].text == "" and stored[noted + 1].text == "What do we build with?"

    await chat.refresh(EDITED_MEMORY + "- Ninja replaced make.\n")
    [rewrite] = [r for r in chat.fake.message_requests if r.body["model"] == MEMORY_MODEL]
    assert EDITED_NOTE not in canonical_json(rewrite.body)


@pytest.mark.parametrize("how", ["import", "restore", "clear"])
async def test_imports_restores_and_clears_are_noted_too(chat, how):
    """Every write a person makes (an import, a restore, a clear) is noted on the next turn; a
    clear says so without a document."""
    session = await chat.session()
    chat.fake.script(text("Noted."), text("Ok."))
    await chat.turn(session, "hello")
    memory, ws = chat.core.memory, chat.workspace.id
    if how == "import":
        await memory.import_bytes(ws, EDITED_MEMORY.encode("utf-16"), source_name="m.txt")
    elif how == "restore":
        await memory.save(ws, EDITED_MEMORY, expected_version=None)
        await memory.restore(ws, "1")
    else:
        await memory.clear(ws)
    await chat.turn(session, "again")

    [note, _prompt] = chat.chat_requests()[-1].unmarked["messages"][-1]["content"]
    if how == "clear":
        assert note["text"] == CLEARED_NOTE
    else:
        expected = EDITED_MEMORY if how == "import" else FIRST_MEMORY
        assert note["text"] == f"{EDITED_NOTE}\n{memory_block(expected)}"


# --- usage ------------------------------------------------------------------------------------
async def test_cache_tokens_are_stored_per_message_and_summed_per_turn(chat):
    """Each stored reply keeps the usage its request reported, cache reads and writes included;
    the turn's usage is their sum, with the share read from the cache."""
    session = await chat.session()
    chat.fake.script(tool_use("read_file", {"path": "Makefile"}), text("It echoes hi."))
    finished = await chat.turn(session, "What does make do?")

    replies = [m for m in await chat.core.chat.messages(session) if m.role == "assistant"]
    reported = [TokenUsage(**r.usage) for r in chat.chat_requests()]
    assert [m.usage for m in replies] == reported
    assert reported[1].cache_read_input_tokens > 0
    assert finished.usage == reported[0] + reported[1]
    total = finished.usage
    assert total.total_input_tokens == (
        total.input_tokens + total.cache_creation_input_tokens + total.cache_read_input_tokens
    )
    assert total.cached_share == total.cache_read_input_tokens / total.total_input_tokens
