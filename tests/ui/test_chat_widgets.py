"""The chat widgets on their own: prompt keys, Markdown, throttled streaming, scrolling, tool
calls, and the approval dialog's answers."""

from __future__ import annotations

import asyncio

from chat_support import run
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.support import until
from tests.support.widgets import deliver_posted_events
from yak.agent.types import ApprovalDecision, ApprovalRequest, incomplete_mark
from yak.domain import ChatMessage, TokenUsage
from yak.presenters import token_count
from yak.ui.chat.approval import ApprovalDialog, ask_approval
from yak.ui.chat.blocks import IncompleteNote, MessageBlock, ToolCallBlock
from yak.ui.chat.input import ChatInput
from yak.ui.chat.panel import usage_text
from yak.ui.chat.render import render_markdown, result_summary, settled_length
from yak.ui.chat.transcript import SEGMENT_CHARS, TranscriptView


def _message(role: str, *blocks: dict) -> ChatMessage:
    from datetime import UTC, datetime

    return ChatMessage(
        id=f"m{id(blocks)}",
        session_id="s",
        workspace_id="w",
        role=role,
        content=tuple(blocks),
        created_at=datetime.now(UTC),
    )


# -- the prompt box -------------------------------------------------------------------------------


def test_enter_sends_the_prompt_and_shift_enter_makes_a_new_line(qtbot):
    """Shift+Enter inserts a line break without sending; Enter sends the whole text."""
    box = ChatInput()
    qtbot.addWidget(box)
    sent: list[str] = []
    box.send_requested.connect(sent.append)
    qtbot.keyClicks(box.edit, "first line")
    qtbot.keyClick(box.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(box.edit, "second line")
    assert sent == []
    assert box.text() == "first line\nsecond line"
    qtbot.keyClick(box.edit, Qt.Key.Key_Return)
    assert sent == ["first line\nsecond line"]


def test_enter_on_a_blank_prompt_or_while_busy_sends_nothing(qtbot):
    """A blank prompt is not sent; while a turn runs Enter does not send, the button reads Stop
    and Esc asks to stop."""
    box = ChatInput()
    qtbot.addWidget(box)
    sent: list[str] = []
    stops: list[bool] = []
    box.send_requested.connect(sent.append)
    box.stop_requested.connect(lambda: stops.append(True))
    qtbot.keyClicks(box.edit, "   ")
    qtbot.keyClick(box.edit, Qt.Key.Key_Return)
    assert sent == []
    assert not box.button.isEnabled()

    box.clear()
    qtbot.keyClicks(box.edit, "next question")
    box.set_busy(True)
    assert box.button.text() == "Stop"
    qtbot.keyClick(box.edit, Qt.Key.Key_Return)
    assert sent == []
    assert box.text() == "next question"  # kept for after the turn
    qtbot.keyClick(box.edit, Qt.Key.Key_Escape)
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert stops == [True, True]

    box.set_busy(False)
    assert box.button.text() == "Send"
    qtbot.keyClick(box.edit, Qt.Key.Key_Escape)  # nothing to stop
    assert stops == [True, True]
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert sent == ["next question"]


# -- Markdown and tool calls ----------------------------------------------------------------------


def test_markdown_is_rendered_and_raw_html_in_a_reply_is_shown_as_text(qtbot):
    """Emphasis and code become markup; a reply's own HTML and javascript: links do not."""
    html = render_markdown(
        "**bold** and `code`\n\n<img src=x onerror=alert(1)> [click](javascript:alert(1))"
    )
    assert "<strong>bold</strong>" in html
    assert "<code>code</code>" in html
    assert "<img" not in html
    assert 'href="javascript' not in html
    block = MessageBlock("assistant")
    qtbot.addWidget(block)
    block.set_markdown("# Title\n\n- one\n- two\n\n<b>not bold</b>")
    shown = block.toPlainText()
    assert "Title" in shown and "one" in shown and "two" in shown
    assert "<b>not bold</b>" in shown  # escaped, so the tags are visible text
    assert "#" not in shown


def test_tool_call_shows_name_target_outcome_and_expands_to_its_output(qtbot):
    """A finished tool call is one line; the toggle shows the output underneath."""
    view = TranscriptView()
    qtbot.addWidget(view)
    view.show()
    block = view.start_tool_call("t1", "write_file", "notes.txt")
    assert block.summary_text() == "… write_file notes.txt — running…"
    view.finish_tool_call(
        "t1",
        tool="write_file",
        target="notes.txt",
        ok=True,
        summary="wrote 2 lines",
        output="Wrote notes.txt (2 lines).",
    )
    assert "✓ write_file notes.txt — wrote 2 lines" in view.plain_text()
    qtbot.waitUntil(block.isVisible)  # a widget added to a shown layout is shown by the loop
    assert not block.output_view.isVisible()
    qtbot.mouseClick(block.toggle, Qt.MouseButton.LeftButton)
    assert block.output_view.isVisible()
    assert block.output_view.toPlainText() == "Wrote notes.txt (2 lines)."
    qtbot.mouseClick(block.toggle, Qt.MouseButton.LeftButton)
    assert not block.output_view.isVisible()


def test_expanding_a_tool_call_keeps_its_row_in_place_instead_of_jumping_to_the_bottom(qtbot):
    """At the bottom of a long chat, expanding a tool call just above the end shows its output
    under the row the user clicked: the view does not scroll on to the new bottom."""
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.show()
    bar = view.verticalScrollBar()
    for i in range(40):
        view.append_text(f"line {i}\n\n")
    view.flush()
    view.finish_tool_call(
        "t1",
        tool="list_dir",
        target=".",
        ok=True,
        summary="40 entries",
        output="\n".join(f"entry-{i}/" for i in range(40)),
    )
    view.add_note("Done.")
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    block = view.tool_call("t1")
    assert block is not None
    before, old_maximum = bar.value(), bar.maximum()
    qtbot.mouseClick(block.toggle, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bar.maximum() > old_maximum)
    deliver_posted_events()  # any follow-the-bottom scroll has happened
    assert bar.value() == before
    top = block.mapTo(view.viewport(), block.rect().topLeft()).y()
    assert 0 <= top < view.viewport().height()  # the clicked row is still on screen


def test_a_stored_session_shows_prompts_replies_and_tool_outcomes():
    """History: the user's text verbatim, the reply rendered, each tool call with its result
    (a denied one marked failed), tool results never as a user message."""
    view = TranscriptView()
    view.show_messages(
        [
            _message("user", {"type": "text", "text": "Please *write* a.txt"}),
            _message(
                "assistant",
                {"type": "text", "text": "Sure, **writing** it."},
                {
                    "type": "tool_use",
                    "id": "tu1",
                    "name": "write_file",
                    "input": {"path": "a.txt", "content": "x"},
                },
            ),
            _message(
                "user",
                {
                    "type": "tool_result",
                    "tool_use_id": "tu1",
                    "is_error": True,
                    "content": "denied by user",
                },
            ),
            _message("assistant", {"type": "text", "text": "Understood."}),
        ]
    )
    items = view.items()
    assert [type(i) for i in items] == [MessageBlock, MessageBlock, ToolCallBlock, MessageBlock]
    assert items[0].toPlainText() == "Please *write* a.txt"
    assert items[1].toPlainText() == "Sure, writing it."
    assert items[2].summary_text() == "✗ write_file a.txt — denied by user"
    assert items[3].toPlainText() == "Understood."
    view.deleteLater()


def test_a_stored_cut_reply_shows_marked_incomplete_with_its_cause(qtbot):
    """A stored reply ending with the incomplete mark: its text is styled incomplete and the
    note after it says why; a reply before it stays as it was."""
    view = TranscriptView()
    qtbot.addWidget(view)
    view.show_messages(
        [
            _message("user", {"type": "text", "text": "q"}),
            _message("assistant", {"type": "text", "text": "A whole answer."}),
            _message("user", {"type": "text", "text": "q2"}),
            _message(
                "assistant",
                {"type": "text", "text": "Half of"},
                {"type": "text", "text": incomplete_mark("the provider was overloaded")},
            ),
        ]
    )
    items = view.items()
    assert [getattr(i, "incomplete", None) for i in items[:4]] == [False, False, False, True]
    assert isinstance(items[4], IncompleteNote)
    assert view.plain_text().endswith(
        "Half of\n\n— reply cut off: the provider was overloaded; nothing after this was received"
    )


def test_token_counts_are_short_and_the_cached_share_rounds_down():
    """Counts read 300, 12.4k, 1M; the input counts cache writes and reads; the cached share
    shows once the calls used the cache, rounded down (never 100% while anything was not)."""
    assert [token_count(n) for n in (0, 300, 999, 1_000, 12_400, 999_999, 1_234_567)] == [
        "0",
        "300",
        "999",
        "1k",
        "12.4k",
        "1M",
        "1.2M",
    ]
    assert usage_text(TokenUsage(input_tokens=42, output_tokens=7)) == "42 in · 7 out"
    written = TokenUsage(input_tokens=10, output_tokens=5, cache_creation_input_tokens=2_000)
    assert usage_text(written) == "2k in, 0% cached · 5 out"
    almost = TokenUsage(input_tokens=1, output_tokens=0, cache_read_input_tokens=999)
    assert usage_text(almost) == "1k in, 99% cached · 0 out"


def test_a_stored_result_is_summed_up_in_a_few_words():
    assert (
        result_summary("Denied by the user: this call was not run. Do not retry.")
        == "Denied by the user"
    )
    assert (
        result_summary("created notes.txt (1 lines, 44 characters).")
        == "created notes.txt (1 lines, 44 characters)."
    )
    assert result_summary("\n\nexit 0\nline two") == "exit 0"


def test_a_long_tool_line_is_shortened_not_widening_the_transcript(qtbot):
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.show()
    summary = "refused: " + "very long reason " * 40
    block = view.finish_tool_call(
        "t", tool="run_command", target="make " + "x" * 300, ok=False, summary=summary, output=""
    )
    qtbot.waitUntil(block.isVisible)
    qtbot.waitUntil(lambda: view.widget().width() <= view.viewport().width())
    assert block.label.text().endswith("…")
    assert block.label.toolTip() == block.summary_text()
    assert summary in view.plain_text()  # the full line is still what the transcript says


def test_streamed_text_is_buffered_and_rendered_by_the_timer_not_per_delta(qtbot):
    """Hundreds of deltas cost no render until the render timer fires; then all the text shows
    in one block, and text after a tool call opens a new block."""
    view = TranscriptView()
    qtbot.addWidget(view)
    for i in range(300):
        view.append_text(f"word{i} ")
    assert view.render_count == 0
    assert "word0" not in view.plain_text()  # nothing rendered yet: no per-delta work
    qtbot.waitUntil(lambda: "word299" in view.plain_text())
    assert view.render_count == 1
    view.append_text("**more**")
    qtbot.waitUntil(lambda: "more" in view.plain_text())
    assert view.items()[0].toPlainText().endswith("word299 more")
    view.start_tool_call("t", "read_file", "a.txt")
    view.append_text("after the tool")
    view.end_turn()
    texts = [i.toPlainText() for i in view.items() if isinstance(i, MessageBlock)]
    assert texts[-1] == "after the tool"
    assert len(texts) == 2


def test_settled_length_cuts_at_a_paragraph_break_outside_code_fences():
    assert settled_length("one\n\ntwo") == len("one\n\n")
    assert settled_length("no break yet") == 0
    assert settled_length("para\n\n") == 0  # nothing after the break yet: keep it open
    fenced = "intro\n\n```py\nx = 1\n\ny = 2\n```\n\nafter"
    assert settled_length(fenced) == len(fenced) - len("after")
    open_fence = "intro\n\n```py\nx = 1\n\ny = 2"
    assert settled_length(open_fence) == len("intro\n\n")  # never inside the open fence
    assert settled_length("- item\n\n  continued\n") == 0  # an indented line continues


def test_a_long_reply_streams_in_bounded_blocks_and_keeps_all_its_text(qtbot):
    """Past ``SEGMENT_CHARS`` the settled part of a reply is left rendered and the rest goes on
    in a new block, so no render covers the whole reply; nothing is lost or doubled."""
    view = TranscriptView()
    qtbot.addWidget(view)
    paragraphs = [f"Paragraph {i} with **bold** words and `code`." for i in range(400)]
    for paragraph in paragraphs:
        view.append_text(paragraph + "\n\n")
        view.flush()
        assert max(len(b.toPlainText()) for b in view.items()) < 2 * SEGMENT_CHARS
    view.end_turn()
    blocks = view.items()
    assert len(blocks) > 3
    shown = "\n".join(b.toPlainText() for b in blocks)
    for i in (0, 1, 199, 399):
        assert shown.count(f"Paragraph {i} with bold words and code.") == 1


def test_the_view_follows_new_text_unless_the_user_scrolled_up(qtbot):
    """At the bottom the view follows the stream; scrolled up it stays put; back at the bottom
    it follows again."""
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(400, 200)
    view.show()
    bar = view.verticalScrollBar()
    for i in range(60):
        view.append_text(f"line {i}\n\n")
    view.flush()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())

    bar.setValue(0)  # the user scrolls up to reread
    assert not view.following_bottom
    for i in range(60):
        view.append_text(f"more {i}\n\n")
    view.flush()
    old_maximum = bar.maximum()
    qtbot.waitUntil(lambda: bar.maximum() > old_maximum)
    assert bar.value() == 0

    bar.setValue(bar.maximum())  # back to the bottom: follow again
    assert view.following_bottom
    view.append_text("\n\nthe end\n\nof it")
    view.flush()
    old_maximum = bar.maximum()
    qtbot.waitUntil(lambda: bar.maximum() > old_maximum)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())


# -- approval -------------------------------------------------------------------------------------


def _request(tool: str = "write_file") -> ApprovalRequest:
    return ApprovalRequest(
        session_id="s",
        tool_use_id="tu",
        tool=tool,
        target="notes.txt",
        detail="--- a/notes.txt\n+++ b/notes.txt\n+hello\n",
    )


def _ask_and_answer(loop, answer) -> ApprovalDecision:
    """Open the dialog through ``ask_approval`` and let ``answer(dialog)`` act on it."""

    async def body() -> ApprovalDecision:
        shown: list[ApprovalDialog] = []
        task = asyncio.ensure_future(ask_approval(_request(), on_shown=shown.append))
        await until(lambda: shown and shown[0].isVisible(), what="the dialog")
        answer(shown[0])
        return await task

    return run(loop, body())


def test_approval_dialog_shows_tool_target_and_detail_in_monospace(qtbot):
    dialog = ApprovalDialog(_request())
    qtbot.addWidget(dialog)
    assert "write_file" in dialog.question.text()
    assert dialog.target.text() == "notes.txt"
    assert dialog.detail.toPlainText().endswith("+hello\n")
    assert dialog.detail.font().fixedPitch() or dialog.detail.font().styleHint() != 0
    assert dialog.deny_button.isDefault()
    assert not dialog.allow_once_button.isDefault()


def test_approval_allow_once_and_allow_for_session(qloop):
    assert (
        _ask_and_answer(qloop, lambda d: d.allow_once_button.click()) is ApprovalDecision.ALLOW_ONCE
    )
    assert (
        _ask_and_answer(qloop, lambda d: d.allow_session_button.click())
        is ApprovalDecision.ALLOW_SESSION
    )


def test_approval_deny_is_the_default_and_escape_denies(qloop, qtbot):
    """Deny by its button, by Enter (the default button), by Esc, and by closing the window."""
    assert _ask_and_answer(qloop, lambda d: d.deny_button.click()) is ApprovalDecision.DENY
    assert (
        _ask_and_answer(qloop, lambda d: qtbot.keyClick(d, Qt.Key.Key_Return))
        is ApprovalDecision.DENY
    )
    assert (
        _ask_and_answer(qloop, lambda d: qtbot.keyClick(d, Qt.Key.Key_Escape))
        is ApprovalDecision.DENY
    )
    assert _ask_and_answer(qloop, lambda d: d.close()) is ApprovalDecision.DENY


def test_stopping_while_the_approval_dialog_is_open_closes_it(qloop):
    async def body() -> None:
        shown: list[ApprovalDialog] = []
        task = asyncio.ensure_future(ask_approval(_request(), on_shown=shown.append))
        await until(lambda: shown and shown[0].isVisible(), what="the dialog")
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("the approval was not cancelled")
        await until(
            lambda: (
                not any(
                    isinstance(w, ApprovalDialog) and w.isVisible()
                    for w in QApplication.topLevelWidgets()
                )
            ),
            what="the dialog to close",
        )

    run(qloop, body())


def test_streaming_renders_do_not_eat_references_to_none(qtbot):
    """Each render calls Qt methods that return nothing; with PySide6 6.12.0 on Python 3.11 each
    such call dropped a reference to ``None`` and the window aborted ("none_dealloc") after about
    5,000 of them. Stream 300 renders' worth of text and check ``None`` kept its references."""
    import sys

    view = TranscriptView()
    qtbot.addWidget(view)
    view.show()
    before = sys.getrefcount(None)
    for i in range(300):
        view.append_text(f"word {i} ")
        view.flush()
    view.end_turn()
    assert "word 299" in view.plain_text()
    assert sys.getrefcount(None) >= before - 50  # a leak would lose well over a thousand


# -- the session list -----------------------------------------------------------------------------


def _session(session_id: str, title: str):
    from datetime import UTC, datetime

    from yak.domain import ChatSession

    now = datetime.now(UTC)
    return ChatSession(id=session_id, workspace_id="w", title=title, created_at=now, updated_at=now)


def _open_title_editor(qtbot, panel):
    from PySide6.QtWidgets import QLineEdit

    panel.session_list.setFocus()
    qtbot.keyClick(panel.session_list, Qt.Key.Key_F2)
    editors = [w for w in panel.session_list.findChildren(QLineEdit) if w.isVisible()]
    assert editors, "F2 opened no title editor"
    return editors[0]


def test_a_list_refresh_while_a_title_is_edited_does_not_drop_the_edit(qtbot):
    """A refresh arriving mid-edit waits: the typed title is committed and renamed; an edit
    cancelled with Esc lets the waiting refresh through."""
    from yak.ui.chat.panel import ChatPanel

    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.show()
    renames: list[tuple[str, str]] = []
    panel.rename_requested.connect(lambda sid, title: renames.append((sid, title)))
    panel.set_sessions([_session("a", "Alpha"), _session("b", "Beta")], "a")

    editor = _open_title_editor(qtbot, panel)
    editor.selectAll()
    qtbot.keyClicks(editor, "Alpha renamed")
    panel.set_sessions([_session("b", "Beta"), _session("a", "Alpha")], "a")  # arrives now
    assert editor.isVisible()
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the delegate commits through a queued call
    qtbot.waitUntil(lambda: panel.session_list.state() != panel.session_list.State.EditingState)
    assert renames == [("a", "Alpha renamed")]
    deliver_posted_events()  # anything the closed editor queued has run
    assert panel.session_titles() == ["Alpha renamed", "Beta"]  # the stale refresh dropped

    editor = _open_title_editor(qtbot, panel)
    panel.set_sessions([_session("b", "Beta"), _session("a", "Alpha renamed")], "a")
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: panel.session_titles() == ["Beta", "Alpha renamed"])
    assert renames == [("a", "Alpha renamed")]
    assert panel.current_session_id() == "a"
