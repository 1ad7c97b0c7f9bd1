"""The chat panel end to end: the core's ChatService and agent loop (from ``open_core``), the
real ``anthropic`` client talking to the scripted fake Messages API on 127.0.0.1, and the widgets
driven like a user.

A gated fake reply (``text(..., gate=...)``) pauses the stream so the window can be looked at
mid-reply — and Stop pressed — without timing anything; with ``pause_after=0`` it pauses before
the first words, while the transcript says "thinking…".
"""

from __future__ import annotations

import threading
import time

import pytest
from chat_support import chat_on, run, sent_messages, sent_prompts
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from tests.support import until
from tests.support.builders import say
from tests.support.fake_api import cut, error, hang, text, tool_use
from yak.limits import CHAT_MESSAGE_CHARS, DISPLAY_MESSAGE_CHARS
from yak.ui.chat.blocks import LongMessageBar, MessageBlock
from yak.ui.chat.controller import ChatController
from yak.ui.chat.panel import NO_KEY_MESSAGE, NO_KEY_TOOLTIP, ChatPanel

CUT_NOTE = "— reply cut off: the connection closed; nothing after this was received"
CUT_MARK = "[incomplete: the reply was cut off (the connection closed)]"

# -- sending and streaming ------------------------------------------------------------------------


def test_enter_sends_and_the_reply_streams_into_the_transcript(chat, qloop, qtbot, fake_api):
    """Enter sends the typed prompt; the first words show while the reply is still streaming
    (the button reads Stop); the whole reply, its Markdown rendered, shows when it ends; the
    session is titled from the prompt and the footer counts the tokens."""
    gate = threading.Event()
    fake_api.script(text("Hello **brave** new world.", gate=gate, pause_after=2, usage=(42, 7)))

    async def body() -> None:
        await chat.send_typed(qtbot, "Say hello")
        assert chat.panel.input.text() == ""  # the box is cleared once the turn starts
        await until(lambda: "Hello" in chat.transcript(), what="the first words")
        assert chat.controller.turn_running
        assert chat.panel.input.button.text() == "Stop"
        assert "world" not in chat.transcript()  # paused mid-stream
        gate.set()
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert not chat.panel.transcript.placeholder.isVisible()
    assert "Hello brave new world." in chat.transcript()
    assert "**" not in chat.transcript()
    assert chat.transcript().startswith("Say hello")
    assert chat.panel.input.button.text() == "Send"
    run(qloop, until(lambda: chat.panel.session_titles() == ["Say hello"], what="the title"))
    assert "Last turn: 42 in · 7 out" in chat.panel.usage_label.text()
    assert sent_prompts(fake_api) == [[{"type": "text", "text": "Say hello"}]]


def test_a_new_conversation_names_the_instruction_files_it_read(chat, qloop, qtbot, fake_api):
    """With an AGENTS.md and a Copilot file in the workspace, the first turn of a session adds
    one line naming them to the transcript; the next turn does not repeat it."""
    (chat.folder / "AGENTS.md").write_text("Always run make lint\n", encoding="utf-8")
    (chat.folder / ".github").mkdir()
    (chat.folder / ".github" / "copilot-instructions.md").write_text("Tabs.\n", encoding="utf-8")
    fake_api.script(text("One."), text("Two."))

    async def body() -> None:
        await chat.send_typed(qtbot, "first")
        assert await chat.finished() == "completed"
        await chat.send_typed(qtbot, "second")
        assert await chat.finished(2) == "completed"

    run(qloop, body())
    line = "Instructions: AGENTS.md, .github/copilot-instructions.md"
    assert chat.transcript().count(line) == 1
    assert chat.transcript().index(line) < chat.transcript().index("One.")


def test_an_instruction_file_cut_for_the_chat_says_so_in_the_transcript(
    chat, qloop, qtbot, fake_api
):
    """An AGENTS.md over the 12,000-character limit: the transcript line says the chat got only
    its first part, as the model is told, instead of just naming the file."""
    body_text = "Run make lint before every commit.\n" * 500  # 17,500 characters
    (chat.folder / "AGENTS.md").write_text(body_text, encoding="utf-8")
    fake_api.script(text("One."))

    async def body() -> None:
        await chat.send_typed(qtbot, "first")
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert (
        f"Instructions: AGENTS.md (cut: the first 12,000 of {len(body_text):,} characters)"
        in chat.transcript()
    )


def test_an_empty_conversation_says_what_the_agent_may_do(chat):
    placeholder = chat.panel.transcript.placeholder
    assert placeholder.isVisible()
    assert chat.folder.name in placeholder.text()
    assert "ask you first" in placeholder.text()
    assert chat.transcript() == ""
    assert chat.panel.usage_label.text() == ""  # no tokens used yet: nothing to count


def test_a_message_over_the_limit_is_refused_in_one_sentence_and_kept_in_the_box(
    chat, qloop, qtbot, fake_api
):
    """A pasted message one character over ``CHAT_MESSAGE_CHARS``: Enter shows one sentence
    with its size and the limit, the text stays in the box, nothing is sent or stored; cut to
    the limit it is sent."""
    over = "x" * (CHAT_MESSAGE_CHARS + 1)
    chat.panel.input.edit.setPlainText(over)  # a paste
    chat.panel.input.edit.setFocus()
    qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Return)

    banner = chat.panel.error_banner
    assert banner.isVisible() and not banner.action_button.isVisible()  # no Retry
    assert banner.text() == (
        f"The message has {CHAT_MESSAGE_CHARS + 1:,} characters; the limit is "
        f"{CHAT_MESSAGE_CHARS:,} (about {CHAT_MESSAGE_CHARS // 4:,} tokens): nothing was sent or "
        "stored. Send a shorter message, or save the text in a file of the workspace and ask "
        "the agent to read it."
    )
    assert chat.panel.input.text() == over
    assert not chat.controller.turn_running and fake_api.message_requests == []
    assert run(qloop, chat.core.chat.sessions(chat.workspace.id)) == []
    assert chat.transcript() == "" or over not in chat.transcript()

    fake_api.script(text("Read it."))
    chat.panel.input.edit.setPlainText(over[:-1])

    async def body() -> None:
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Return)
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert not banner.isVisible()
    assert sent_prompts(fake_api) == [[{"type": "text", "text": over[:-1]}]]


def test_a_paste_over_the_limit_is_not_inserted_and_says_why(chat, qtbot, fake_api):
    """Ctrl+V of 20 MB into a box holding "Look: ": the box keeps "Look: ", the banner says the
    sizes and the limit (laying out such a paste froze the window); a paste that fits goes in."""
    edit = chat.panel.input.edit
    edit.setFocus()
    qtbot.keyClicks(edit, "Look: ")
    huge = "0123456789" * 2_000_000
    QGuiApplication.clipboard().setText(huge)
    qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)

    assert chat.panel.input.text() == "Look: "
    assert chat.panel.error_banner.isVisible()
    assert chat.panel.error_banner.text() == (
        f"The pasted text (20,000,000 characters) would make the message 20,000,006 characters; "
        f"the limit is {CHAT_MESSAGE_CHARS:,} (about {CHAT_MESSAGE_CHARS // 4:,} tokens), so it "
        "was not pasted. Save the text in a file of the workspace and ask the agent to read it."
    )
    QGuiApplication.clipboard().setText("a short log line")
    qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert chat.panel.input.text() == "Look: a short log line"
    assert fake_api.message_requests == []


def test_a_huge_stored_message_opens_in_parts_with_the_whole_one_click_away(
    chat, qloop, qtbot, data_dir
):
    """A 20 MB question stored before the size limits existed: the session opens with the
    question's first ``DISPLAY_MESSAGE_CHARS`` characters rendered and a row saying how much
    is shown; Show more renders the next part; Copy whole message puts all of it on the
    clipboard; the reply after it shows whole. (Rendering all of it froze the window for
    minutes.)"""
    huge = "".join(f"line {n:07d} of a pasted log\n" for n in range(20_000_000 // 29))
    say(chat.core, chat.workspace.id, huge, "That is a long log.", title="Log")

    with chat_on(qloop, qtbot, data_dir, chat.folder) as again:
        blocks = [i for i in again.panel.transcript.items() if isinstance(i, MessageBlock)]
        bar = again.panel.findChild(LongMessageBar)
        assert blocks[0].toPlainText() == huge[:DISPLAY_MESSAGE_CHARS].rstrip("\n")
        assert again.transcript() == (
            huge[:DISPLAY_MESSAGE_CHARS].rstrip("\n")
            + f"\n\nShowing the first {DISPLAY_MESSAGE_CHARS:,} of {len(huge):,} characters."
            + "\n\nThat is a long log."
        )
        bar.more_button.click()
        assert blocks[0].toPlainText() == huge[: 2 * DISPLAY_MESSAGE_CHARS].rstrip("\n")
        assert bar.label.text() == (
            f"Showing the first {2 * DISPLAY_MESSAGE_CHARS:,} of {len(huge):,} characters."
        )
        bar.copy_button.click()
        assert QGuiApplication.clipboard().text() == huge


def test_shift_enter_makes_a_new_line_in_the_prompt_sent(chat, qloop, qtbot, fake_api):
    fake_api.script(text("Two lines received."))

    async def body() -> None:
        qtbot.keyClicks(chat.panel.input.edit, "first")
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        assert chat.statuses == [] and not chat.controller.turn_running
        await chat.send_typed(qtbot, "second")
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert sent_prompts(fake_api) == [[{"type": "text", "text": "first\nsecond"}]]
    assert "Two lines received." in chat.transcript()


# -- waiting for the model -----------------------------------------------------------------------


def test_thinking_shows_from_enter_until_the_first_words(chat, qloop, qtbot, fake_api):
    """Right after Enter, before the request has even been sent, the last row reads "thinking…
    0 s" and ticks once a second; the first words take its place and it is gone once the reply
    has ended."""
    gate = threading.Event()
    fake_api.script(text("Here it is.", gate=gate, pause_after=0))
    transcript = chat.panel.transcript

    async def body() -> None:
        chat.panel.input.edit.setFocus()
        qtbot.keyClicks(chat.panel.input.edit, "Why?")
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Return)
        row = transcript.thinking  # no await since Enter: shown at once
        assert row is not None and transcript.items()[-1] is row
        assert chat.transcript() == "Why?\n\nthinking… 0 s"
        assert row.timer.isActive() and row.timer.interval() == 1000
        await until(lambda: fake_api.message_requests, what="the request")
        assert transcript.thinking is row  # asked, nothing received yet
        row.started = time.monotonic() - 3  # as if shown three seconds ago
        row.tick()
        assert chat.transcript().endswith("thinking… 3 s")
        gate.set()
        await until(lambda: "Here it is." in chat.transcript(), what="the first words")
        assert transcript.thinking is None and "thinking" not in chat.transcript()
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert chat.transcript() == "Why?\n\nHere it is."


def test_while_thinking_the_box_takes_typing_and_esc_stops(chat, qloop, qtbot, fake_api):
    """The model never answers: the thinking row stays while the next prompt is typed, Esc
    stops the turn, and the row gives way to "Stopped."; the typed text stays in the box."""
    fake_api.script(hang())

    async def body() -> None:
        await chat.send_typed(qtbot, "Anyone there?")
        await until(lambda: fake_api.message_requests, what="the request")
        assert chat.panel.transcript.thinking is not None
        qtbot.keyClicks(chat.panel.input.edit, "next question")
        assert chat.panel.input.text() == "next question"
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Escape)
        assert await chat.finished() == "stopped"

    run(qloop, body())
    assert chat.panel.transcript.thinking is None
    assert chat.transcript() == "Anyone there?\n\nStopped."
    assert chat.panel.input.text() == "next question"


def test_thinking_shows_again_while_the_model_reads_a_tool_result(chat, qloop, qtbot, fake_api):
    """After a tool call has run and its result went back, the model is asked again: the
    thinking row is the last row until the next words arrive."""
    (chat.folder / "README.md").write_text("hi\n", encoding="utf-8")
    gate = threading.Event()
    fake_api.script(
        tool_use("read_file", {"path": "README.md"}), text("It says hi.", gate=gate, pause_after=0)
    )
    transcript = chat.panel.transcript

    async def body() -> None:
        await chat.send_typed(qtbot, "Read it")
        await until(lambda: len(fake_api.message_requests) == 2, what="the second request")
        assert "✓ read_file README.md" in chat.transcript()
        assert transcript.thinking is not None and transcript.items()[-1] is transcript.thinking
        gate.set()
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert transcript.thinking is None
    assert chat.transcript().endswith("It says hi.")


# -- tool calls and approval ----------------------------------------------------------------------


def test_an_allowed_write_runs_and_the_transcript_shows_it(chat, qloop, qtbot, fake_api):
    """The approval dialog shows the tool and target; Allow once writes the file; the tool call
    shows compactly with its outcome and expands to its output."""
    fake_api.script(
        tool_use("write_file", {"path": "notes.txt", "content": "remember me\n"}),
        text("I wrote notes.txt."),
    )

    async def body() -> None:
        await chat.send_typed(qtbot, "Write a note")
        await until(lambda: chat.dialogs and chat.dialogs[0].isVisible(), what="the approval")
        dialog = chat.dialogs[0]
        assert dialog.request.tool == "write_file"
        assert dialog.target.text() == "notes.txt"
        assert "remember me" in dialog.detail.toPlainText()
        assert not (chat.folder / "notes.txt").exists()  # nothing before the answer
        assert "write_file notes.txt — waiting for your approval" in chat.transcript()
        dialog.allow_once_button.click()
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert (chat.folder / "notes.txt").read_text(encoding="utf-8") == "remember me\n"
    shown = chat.transcript()
    assert "✓ write_file notes.txt" in shown
    assert "I wrote notes.txt." in shown
    block = next(iter(b for b in chat.panel.transcript.items() if hasattr(b, "summary_text")))
    block.set_expanded(True)
    assert block.output_view.toPlainText().strip()


def test_a_denied_write_is_not_run_and_the_transcript_says_denied(chat, qloop, qtbot, fake_api):
    """Deny (the default button, here by Esc) leaves the folder untouched; the transcript marks
    the call denied, and a reloaded session still does."""
    fake_api.script(
        tool_use("write_file", {"path": "notes.txt", "content": "nope\n"}),
        text("Understood, I did not write it."),
    )

    async def body() -> None:
        await chat.send_typed(qtbot, "Write a note")
        await until(lambda: chat.dialogs and chat.dialogs[0].isVisible(), what="the approval")
        qtbot.keyClick(chat.dialogs[0], Qt.Key.Key_Escape)
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert not (chat.folder / "notes.txt").exists()
    assert list(chat.folder.iterdir()) == []
    assert "✗ write_file notes.txt — denied by user" in chat.transcript()
    assert "Understood, I did not write it." in chat.transcript()

    messages = run(qloop, chat.service.messages(chat.controller.session_id))
    chat.panel.transcript.show_messages(messages)  # as after a restart
    assert "✗ write_file notes.txt — denied by user" in chat.transcript()


def test_a_tool_summary_reads_the_same_after_a_reload(chat, qloop, qtbot, fake_api):
    """A listing shows "N entries" live and, reloaded as after a restart, still "N entries"
    (not the listing's first line)."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (chat.folder / name).write_text("x\n")
    (chat.folder / ".git").mkdir()
    fake_api.script(tool_use("list_directory", {"path": "."}), text("Four entries."))

    async def body() -> None:
        await chat.send_typed(qtbot, "What is here?")
        assert await chat.finished() == "completed"

    run(qloop, body())
    live = [line for line in chat.transcript().splitlines() if "list_directory" in line]
    assert len(live) == 1 and live[0].endswith("— 4 entries"), live
    messages = run(qloop, chat.service.messages(chat.controller.session_id))
    chat.panel.transcript.show_messages(messages)  # as after a restart
    assert [line for line in chat.transcript().splitlines() if "list_directory" in line] == live


# -- stop, errors, retry --------------------------------------------------------------------------


def test_stop_mid_stream_keeps_the_partial_reply(chat, qloop, qtbot, fake_api):
    """Stop while the reply streams: the words already shown stay, the transcript says it
    stopped, the stored session keeps them, and the box can send again."""
    gate = threading.Event()
    fake_api.script(text("one two three four five", gate=gate, pause_after=2))

    async def body() -> None:
        await chat.send_typed(qtbot, "Count")
        await until(lambda: "one two" in chat.transcript(), what="the first words")
        qtbot.mouseClick(chat.panel.input.button, Qt.MouseButton.LeftButton)  # Stop
        assert await chat.finished() == "stopped"

    run(qloop, body())
    gate.set()
    shown = chat.transcript()
    assert "one two" in shown and "five" not in shown
    assert shown.endswith("Stopped.")
    assert chat.panel.input.button.text() == "Send"
    messages = run(qloop, chat.service.messages(chat.controller.session_id))
    assert "one two" in messages[-1].text
    chat.panel.transcript.show_messages(messages)
    assert "one two" in chat.transcript() and chat.transcript().endswith("Stopped.")


def test_esc_in_the_prompt_box_stops_the_turn(chat, qloop, qtbot, fake_api):
    gate = threading.Event()
    fake_api.script(text("alpha beta gamma", gate=gate, pause_after=1))

    async def body() -> None:
        await chat.send_typed(qtbot, "Go")
        await until(lambda: "alpha" in chat.transcript(), what="the first word")
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Escape)
        assert await chat.finished() == "stopped"

    run(qloop, body())
    gate.set()
    assert "alpha" in chat.transcript() and "gamma" not in chat.transcript()


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (500, "server"),
        (401, "key"),
        # the way out fits the window (yak ask gets its own words)
        (413, "too large (413): fake error 413. start a new conversation (ctrl+n), or send"),
    ],
)
def test_a_provider_error_shows_the_banner_and_retry_recovers(
    chat, qloop, qtbot, fake_api, status, words
):
    """A failed reply shows one sentence in the banner with Retry; Retry sends the same prompt
    once more (not stored twice, not shown twice) and the reply appears."""
    fake_api.script(error(status), text("Recovered answer."))

    async def body() -> None:
        await chat.send_typed(qtbot, "Explain the build")
        assert await chat.finished() == "failed"
        assert chat.panel.error_banner.isVisible()
        sentence = chat.panel.error_banner.text()
        assert words in sentence.lower()
        assert "Traceback" not in sentence and "\n" not in sentence
        assert chat.panel.error_banner.action_button.isVisible()
        chat.panel.error_banner.action_button.click()  # Retry
        assert await chat.finished(2) == "completed"

    run(qloop, body())
    assert not chat.panel.error_banner.isVisible()
    assert "Recovered answer." in chat.transcript()
    assert chat.transcript().count("Explain the build") == 1
    assert sent_prompts(fake_api) == [[{"type": "text", "text": "Explain the build"}]]


# -- cut replies ----------------------------------------------------------------------------------


def test_a_cut_reply_stays_marked_incomplete_and_retry_asks_again(chat, qloop, qtbot, fake_api):
    """The connection closes mid-reply: the words that arrived stay, their block styled as
    incomplete and followed by a note saying so; the banner says what happened; the stored
    reply ends with the incomplete mark. Retry sends the question again after the marked
    partial reply, and the whole answer appears."""
    fake_api.script(cut("The answer is forty-two", after_deltas=3), text("The answer is 42."))

    async def body() -> None:
        await chat.send_typed(qtbot, "What is the answer?")
        assert await chat.finished() == "failed"
        assert chat.transcript() == f"What is the answer?\n\nThe answer is\n\n{CUT_NOTE}"
        blocks = [b for b in chat.panel.transcript.items() if isinstance(b, MessageBlock)]
        assert [b.incomplete for b in blocks] == [False, True]
        assert "Last turn" not in chat.panel.usage_label.text()  # no usage came back
        assert chat.panel.error_banner.isVisible()
        assert chat.panel.error_banner.text().startswith(
            "The reply was cut off: the connection closed. What arrived is kept above"
        )
        stored = await chat.service.messages(chat.controller.session_id)
        assert [m.role for m in stored] == ["user", "assistant"]
        assert [b["text"] for b in stored[-1].content] == ["The answer is ", CUT_MARK]
        chat.panel.error_banner.action_button.click()  # Retry
        assert await chat.finished(2) == "completed"

    run(qloop, body())
    assert not chat.panel.error_banner.isVisible()
    assert chat.transcript() == (
        f"What is the answer?\n\nThe answer is\n\n{CUT_NOTE}\n\n"
        "What is the answer?\n\nThe answer is 42."
    )
    question = [{"type": "text", "text": "What is the answer?"}]
    partial = [{"type": "text", "text": "The answer is "}, {"type": "text", "text": CUT_MARK}]
    assert sent_messages(fake_api) == [
        ("user", question),
        ("assistant", partial),
        ("user", question),
    ]


def test_a_cut_reply_is_still_marked_after_a_restart_and_retry_there_resends(
    chat, qloop, qtbot, fake_api, data_dir
):
    """A second window on the same database (the app started again) opens the session with the
    question, the partial reply and the incomplete note, and the banner offers Retry, which
    sends the question again and shows the answer."""
    fake_api.script(cut("Partial answ", after_deltas=1))

    async def body() -> None:
        await chat.send_typed(qtbot, "Question?")
        assert await chat.finished() == "failed"

    run(qloop, body())
    with chat_on(qloop, qtbot, data_dir, chat.folder) as again:
        assert again.transcript() == f"Question?\n\nPartial\n\n{CUT_NOTE}"
        assert again.panel.error_banner.isVisible()
        assert again.panel.error_banner.text().startswith(
            "The last reply here was cut off: the connection closed."
        )
        fake_api.script(text("Full answer."))

        async def retry() -> None:
            again.panel.error_banner.action_button.click()  # Retry
            assert await again.finished() == "completed"

        run(qloop, retry())
        assert again.transcript().endswith("Question?\n\nFull answer.")
        assert [role for role, _ in sent_messages(fake_api)] == ["user", "assistant", "user"]


def test_a_question_without_a_reply_is_marked_and_stays_so_after_a_restart(
    chat, qloop, qtbot, fake_api, data_dir
):
    """The provider refuses the key before any word arrives: the question is followed by
    "— no reply: <the sentence>", the banner offers Retry, and the stored rows are the question
    and the agent's no-reply mark. A second window on the same database (the app started again)
    opens the session with the question, the same mark and a banner saying the question got no
    reply; its Retry sends the question once (the mark is not sent) and the answer appears."""
    fake_api.script(error(401))

    async def body() -> None:
        await chat.send_typed(qtbot, "Why is the build slow?")
        assert await chat.finished() == "failed"

    run(qloop, body())
    sentence = chat.panel.error_banner.text()
    assert "key" in sentence.lower() and chat.panel.error_banner.action_button.isVisible()
    assert chat.transcript() == f"Why is the build slow?\n\n— no reply: {sentence}"
    stored = run(qloop, chat.service.messages(chat.controller.session_id))
    assert [(m.role, list(m.content)) for m in stored] == [
        ("user", [{"type": "text", "text": "Why is the build slow?"}]),
        ("assistant", [{"type": "text", "text": f"[no reply: {sentence}]"}]),
    ]

    with chat_on(qloop, qtbot, data_dir, chat.folder) as again:
        assert again.transcript() == f"Why is the build slow?\n\n— no reply: {sentence}"
        assert again.panel.error_banner.isVisible()
        assert again.panel.error_banner.text() == (
            f"The last question here got no reply ({sentence.rstrip('.')}); Retry sends it again."
        )
        fake_api.script(text("It rebuilds every module."))

        async def retry() -> None:
            again.panel.error_banner.action_button.click()  # Retry
            assert await again.finished() == "completed"

        run(qloop, retry())
        assert again.transcript() == (
            f"Why is the build slow?\n\n— no reply: {sentence}\n\nIt rebuilds every module."
        )
        assert not again.panel.error_banner.isVisible()
        assert sent_messages(fake_api) == [
            ("user", [{"type": "text", "text": "Why is the build slow?"}])
        ]


# -- the footer -----------------------------------------------------------------------------------


def test_the_footer_counts_cached_input(chat, qloop, qtbot, fake_api, data_dir):
    """The footer counts every input token, cached or not, with the share read from the prompt
    cache, for the last turn and the conversation; a restarted window sums the stored turns
    the same way."""
    fake_api.script(
        text("First.", usage=(1_000, 300, 100, 11_300)),  # in, out, cache written, cache read
        text("Second.", usage=(200, 50, 0, 12_400)),
    )

    async def body() -> None:
        await chat.send_typed(qtbot, "One")
        assert await chat.finished() == "completed"
        footer = chat.panel.usage_label.text()
        assert footer.startswith("Last turn: 12.4k in, 91% cached · 300 out")
        await chat.send_typed(qtbot, "Two")
        assert await chat.finished(2) == "completed"

    run(qloop, body())
    assert chat.panel.usage_label.text() == (
        "Last turn: 12.6k in, 98% cached · 50 out   "
        "Conversation: 25k in, 94% cached · 350 out tokens"
    )
    with chat_on(qloop, qtbot, data_dir, chat.folder) as again:
        assert again.panel.usage_label.text() == (
            "Conversation: 25k in, 94% cached · 350 out tokens"
        )


# -- without a key --------------------------------------------------------------------------------


async def key_checked(controller: ChatController) -> None:
    """Check the API key again, as after a change in Settings, and wait for the answer."""
    await controller.refresh_key_notice()


def test_without_a_key_the_chat_says_how_to_add_one_and_sends_nothing(
    chat, qloop, qtbot, fake_api, monkeypatch
):
    """Without a key the notice says how to add one, Send is disabled with a tooltip saying
    why, and Enter sends nothing (the text is kept); once a key exists Send works again."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    run(qloop, key_checked(chat.controller))  # the key is checked off the UI thread
    notice = chat.panel.key_notice
    assert notice.isVisible()
    assert notice.text() == NO_KEY_MESSAGE
    assert "ANTHROPIC_API_KEY" in notice.text() and "Settings › Provider" in notice.text()
    opened: list[bool] = []
    chat.controller.provider_settings_requested.connect(lambda: opened.append(True))
    notice.action_button.click()
    assert opened == [True]

    qtbot.keyClicks(chat.panel.input.edit, "Hello?")
    send = chat.panel.input.button
    assert not send.isEnabled()  # Send is off, and says why
    assert send.toolTip() == NO_KEY_TOOLTIP
    qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Return)
    assert not chat.controller.turn_running
    assert chat.panel.input.text() == "Hello?"  # kept for when a key is added
    assert fake_api.message_requests == []
    assert "Hello?" not in chat.transcript()

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # the user adds a key
    run(qloop, key_checked(chat.controller))
    assert not notice.isVisible()
    assert send.isEnabled() and send.toolTip() == "Send (Enter)"


def test_quitting_mid_reply_stores_what_was_said_before_the_database_closes(
    chat, qloop, qtbot, fake_api
):
    """``aclose`` (the app's quit) stops the turn and waits for the agent to keep the partial
    reply, so nothing is written to a closed database."""
    gate = threading.Event()
    fake_api.script(text("first second third fourth", gate=gate, pause_after=2))

    async def body() -> None:
        await chat.send_typed(qtbot, "Go on")
        await until(lambda: "first second" in chat.transcript(), what="the first words")
        await chat.controller.aclose()
        assert not chat.controller.turn_running

    run(qloop, body())
    gate.set()
    messages = chat.service.conversations.messages(chat.controller.session_id)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert "first second" in messages[-1].text and "fourth" not in messages[-1].text


def test_work_in_flight_when_the_panel_is_deleted_is_dropped(chat, qloop, qtbot, fake_api):
    """A session list still loading when the window goes away is cancelled, not applied to
    deleted widgets (``background_errors`` fails the test if a task died)."""
    import asyncio

    from PySide6.QtCore import QCoreApplication, QEvent

    gate = asyncio.Event()
    real_sessions = chat.service.sessions

    async def slow_sessions(workspace_id: str):
        found = await real_sessions(workspace_id)
        await gate.wait()
        return found

    panel = ChatPanel()  # its own panel: the fixture's stays for qtbot to close
    controller = ChatController(panel, chat.service, chat.core.settings)

    async def body() -> None:
        chat.service.sessions = slow_sessions
        task = controller.set_workspace(chat.workspace)
        await asyncio.sleep(0)
        panel.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gate.set()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()

    run(qloop, body())
