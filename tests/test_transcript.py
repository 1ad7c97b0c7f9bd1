"""The rewrite input (docs/refresh.md, "The refresh"): what of the conversations the memory
model sees."""

from __future__ import annotations

from datetime import UTC, datetime

from yak.domain import ChatMessage
from yak.ids import new_id
from yak.memory.prompts.transcript import cut_long, format_transcript, tool_call_line
from yak.memory.redaction import redact


def msg(session: str, role: str, *blocks: dict | str) -> ChatMessage:
    content = tuple({"type": "text", "text": b} if isinstance(b, str) else b for b in blocks)
    return ChatMessage(
        id=new_id(),
        session_id=session,
        workspace_id="ws_x",
        role=role,
        content=content,
        created_at=datetime.now(UTC),
    )


def tool_use(name: str, **input: str) -> dict:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": input}


def tool_result(text: str) -> dict:
    return {"type": "tool_result", "tool_use_id": "toolu_1", "content": text}


def test_messages_of_all_sessions_oldest_first_each_session_labelled():
    """Two sessions interleaved: every message appears, in creation order, under its label."""
    a1 = msg("S_A", "user", "Let us lint with ruff.")
    b1 = msg("S_B", "user", "Pin Python 3.12 please.")
    a2 = msg("S_A", "assistant", "Done: ruff is configured.")
    result = format_transcript([a2, b1, a1], session_titles={"S_A": "Lint", "S_B": "Python"})
    assert result.text == (
        '--- conversation 1: "Lint" ---\n\nuser: Let us lint with ruff.\n\n'
        '--- conversation 2: "Python" ---\n\nuser: Pin Python 3.12 please.\n\n'
        '--- conversation 1: "Lint" ---\n\nassistant: Done: ruff is configured.'
    )
    assert result.session_ids == ("S_A", "S_B")
    assert result.watermarks == {"S_A": a2.id, "S_B": b1.id}
    assert result.included == 3 and result.dropped == 0 and result.flags == ()


def test_tool_calls_are_one_line_and_tool_results_are_never_sent():
    """A tool call becomes '[tool: read_file src/app.py]'; the result's text is absent; a user
    message made only of tool results is left out but still covered by the watermark."""
    call = msg("S", "assistant", "Let me look.", tool_use("read_file", path="src/app.py"))
    result_msg = msg("S", "user", tool_result("SECRET FILE CONTENTS line 1\nline 2"))
    answer = msg("S", "assistant", "The app starts in main().")
    result = format_transcript([call, result_msg, answer])
    assert "assistant: Let me look.\n[tool: read_file src/app.py]" in result.text
    assert "SECRET FILE CONTENTS" not in result.text
    assert result.included == 2
    assert result.watermarks == {"S": answer.id}


def test_tool_call_line_keeps_the_target_short_and_on_one_line():
    assert tool_call_line(tool_use("run_command", command="pytest -q\n  tests/")) == (
        "[tool: run_command pytest -q tests/]"
    )
    long = tool_call_line(tool_use("grep", pattern="x" * 200))
    assert len(long) < 100 and long.endswith("…]")
    assert tool_call_line({"type": "tool_use", "name": "list_directory", "input": {}}) == (
        "[tool: list_directory]"
    )


def test_a_long_message_keeps_head_and_tail_with_a_marker():
    """A 10,000-character message keeps its start and end around '[… N characters cut …]',
    at most 4,000 characters; a 4,000-character one is untouched."""
    body = "HEAD " + "m" * 9_990 + " TAIL"
    text, was_cut = cut_long(body)
    assert was_cut and len(text) <= 4_000
    assert text.startswith("HEAD ") and text.endswith(" TAIL")
    removed = len(body) - (len(text) - len(text[text.index("\n[…") : text.index("…]\n") + 3]))
    assert f"[… {removed:,} characters cut …]" in text
    exact = "y" * 4_000
    assert cut_long(exact) == (exact, False)

    result = format_transcript([msg("S", "user", body)])
    assert "characters cut" in result.text and result.cut == 1
    assert "cut_long_message" in result.flags


def test_over_the_budget_the_oldest_messages_are_dropped_with_a_marker():
    """20 messages of ~3,000 characters against 48,000: the newest fit, the oldest are
    dropped and said so; the watermark still covers the dropped ones."""
    messages = [msg("S", "user", f"message {i:02d} " + "z" * 3_000) for i in range(20)]
    result = format_transcript(messages)
    assert len(result.text) <= 48_000
    assert result.dropped > 0 and result.included + result.dropped == 20
    assert result.text.startswith(f"[… {result.dropped} earlier messages dropped …]")
    assert "message 19" in result.text
    assert f"message {result.dropped - 1:02d}" not in result.text
    assert f"message {result.dropped:02d}" in result.text
    assert "dropped_over_budget" in result.flags
    assert result.watermarks == {"S": messages[-1].id}


def test_under_the_budget_nothing_is_dropped():
    messages = [msg("S", "user", f"message {i:02d} " + "z" * 1_000) for i in range(20)]
    result = format_transcript(messages)
    assert result.dropped == 0 and "dropped" not in result.text
    assert "message 00" in result.text


def test_secrets_are_redacted_before_cutting_so_none_is_left_half_visible():
    """A key sitting exactly where a long message is cut is redacted whole."""
    key = "sk-ant-api03-" + "Q" * 80
    body = "a" * 2_330 + " " + key + " " + "b" * 6_000
    result = format_transcript([msg("S", "user", body)], redactor=redact)
    assert "QQQQQQQQ" not in result.text
    assert "redacted:anthropic_key" in result.flags


def test_session_titles_are_redacted_too():
    result = format_transcript(
        [msg("S", "user", "hello there")],
        redactor=redact,
        session_titles={"S": "postgres://u:hunter2pw@db/x"},
    )
    assert "hunter2pw" not in result.text


def test_nothing_to_say_is_empty_but_covers_the_messages():
    only_results = msg("S", "user", tool_result("output"))
    result = format_transcript([only_results])
    assert result.empty and result.text == ""
    assert result.watermarks == {"S": only_results.id}
    assert format_transcript([]).empty
