"""``yak ask`` end to end: a real subprocess against the fake Messages API."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.builders import say, workspace_with_document
from tests.support.cli import yak, yak_command
from tests.support.fake_api import error, hang, text, tool_use
from yak.cli import main
from yak.domain import SessionOrigin
from yak.limits import CHAT_MESSAGE_CHARS

MEMORY_MODEL = "claude-memory-test"
# What a ``yak`` subprocess runs on: the fake API answers any model name.
MODELS = {"YAK_MEMORY_MODEL": MEMORY_MODEL, "YAK_MODEL": "claude-chat-test"}


@pytest.fixture
def folder(tmp_path):
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "README.md").write_text("# Demo\n")
    return ws


def the_session(core, loop, folder):
    """The one session ``yak ask`` recorded in ``folder``'s workspace, and its messages."""
    workspace = loop.run_until_complete(core.workspaces.find(str(folder)))
    [session] = loop.run_until_complete(core.chat.sessions(workspace.id))
    return session, loop.run_until_complete(core.chat.messages(session.id))


def document_of(core, loop, folder) -> str:
    workspace = loop.run_until_complete(core.workspaces.find(str(folder)))
    return loop.run_until_complete(core.memory.read(workspace.id)).content


def chat_requests(fake_api):
    return [r for r in fake_api.message_requests if r.body["model"] != MEMORY_MODEL]


def plain(value):
    """A request part without its prompt-cache marks (``cache_control``), which say nothing
    about the conversation."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def session_block(body) -> str:
    """The part of a request's system prompt that carries the memory: the prompt itself when it
    is one string, else its last block (the session block, after the static instructions)."""
    system = body["system"]
    return system if isinstance(system, str) else system[-1]["text"]


def conversation(body) -> list[tuple[str, str]]:
    """A request's messages as (role, their text blocks joined) pairs."""
    return [
        (m["role"], "".join(b.get("text", "") for b in m["content"] if isinstance(b, dict)))
        for m in body["messages"]
    ]


def stored_texts(core, loop, session_id) -> list[str]:
    return [m.text for m in loop.run_until_complete(core.chat.messages(session_id))]


def test_prints_the_reply_with_memory_on_top_and_records_the_session(core, loop, folder, fake_api):
    """The reply is on stdout; the request's system prompt starts with the memory document;
    the session and its messages are in the shared database."""
    document = "Demo project.\n- run tests with pytest\n"
    loop.run_until_complete(workspace_with_document(core, folder, document))
    fake_api.script(text("Hello from the fake."))

    result = yak("ask", "-w", str(folder), "--no-refresh", "Say hello", env=MODELS, text=True)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from the fake.\n"
    assert result.stderr == ""
    [request] = fake_api.message_requests
    assert session_block(request.body).startswith("<workspace-memory>\n" + document)
    assert request.body["model"] == "claude-chat-test"
    assert plain(request.body["messages"]) == [
        {"role": "user", "content": [{"type": "text", "text": "Say hello"}]}
    ]
    session, messages = the_session(core, loop, folder)
    assert session.title == "Say hello"
    assert session.origin is SessionOrigin.ASK  # the window's list marks it
    assert [m.text for m in messages] == ["Say hello", "Hello from the fake."]
    assert document_of(core, loop, folder) == document  # --no-refresh: untouched


def test_a_subfolder_or_a_renamed_folder_is_told_of_the_memory_it_does_not_get(
    core, loop, folder, tmp_path, fake_api
):
    """``yak ask -w project/sub``: the reply as usual, and one stderr line first naming the
    enclosing workspace's memory (which this conversation does not carry); in a folder that
    looks like one whose folder is gone, the line names ``yak memory reattach``."""
    document = "Demo project.\n- run tests with pytest\n"
    loop.run_until_complete(workspace_with_document(core, folder, document))
    sub = folder / "sub"
    sub.mkdir()
    fake_api.script(text("Hello."))

    result = yak("ask", "-w", str(sub), "--no-refresh", "Say hello", env=MODELS, text=True)

    assert (result.returncode, result.stdout) == (0, "Hello.\n")
    assert result.stderr == (
        f"{sub} has no memory of its own; the enclosing workspace {folder} has 2 lines: "
        f"'yak memory show -w {folder}'\n"
    )
    assert "<workspace-memory>" not in session_block(fake_api.message_requests[0].body)

    moved = tmp_path / "elsewhere" / "project"
    moved.parent.mkdir()
    folder.rename(moved)
    fake_api.script(text("Hello again."))
    again = yak("ask", "-w", str(moved), "--no-refresh", "Say hello", env=MODELS, text=True)
    assert (again.returncode, again.stdout) == (0, "Hello again.\n")
    assert again.stderr == (
        f"{moved} looks like {folder}, which no longer exists and has a memory of 2 lines: "
        f"'yak memory reattach {folder} -w {moved}' moves it here.\n"
    )


def test_memory_refresh_runs_after_the_turn(core, loop, folder, fake_api):
    """Without --no-refresh the memory model rewrites the document right after the reply."""
    fake_api.respond_with(
        lambda body: text(
            "Demo project.\n\n- We lint with ruff.\n"
            if body["model"] == MEMORY_MODEL
            else "Hi there."
        )
    )
    prompt = "Greet me. This is the demo project; we lint with ruff."
    result = yak("ask", "--model", "claude-other", prompt, cwd=folder, env=MODELS, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hi there.\n"
    # Said before the pause it announces, on stderr: stdout stays the answer.
    assert result.stderr.startswith("Refreshing the memory… (Ctrl-C skips it)\n")
    assert "Memory refreshed: version 1, 3 lines" in result.stderr
    assert [r.body["model"] for r in fake_api.message_requests] == ["claude-other", MEMORY_MODEL]
    assert document_of(core, loop, folder) == "Demo project.\n\n- We lint with ruff.\n"


def test_a_failed_refresh_is_reported_but_the_turn_succeeds(core, loop, folder, fake_api):
    """The refresh's provider error is one stderr line; exit 0; the document is unchanged."""
    loop.run_until_complete(workspace_with_document(core, folder, "Kept exactly.\n"))
    fake_api.script(text("Answer."), error(400, message="refresh refused"))
    result = yak("ask", "-w", str(folder), "Question?", env=MODELS, text=True)
    assert result.returncode == 0
    assert result.stdout == "Answer.\n"
    assert "yak: memory refresh failed:" in result.stderr
    assert "Traceback" not in result.stderr
    assert document_of(core, loop, folder) == "Kept exactly.\n"


def test_provider_failure_exits_4_with_one_line(folder, fake_api):
    """A 500 on every attempt (the SDK retries twice): exit 4, one line, nothing on stdout."""
    fake_api.respond_with(lambda body: error(500, retry_after_ms=1))
    result = yak("ask", "-w", str(folder), "--no-refresh", "Anyone there?", env=MODELS, text=True)
    assert result.returncode == 4
    assert result.stdout == ""
    host = fake_api.url.partition("://")[2].rstrip("/")  # not Anthropic: the server is named
    assert (
        result.stderr == f"yak: The server at {host} had a server error (500); try again shortly.\n"
    )
    assert len(fake_api.message_requests) == 3


def test_a_request_too_large_says_what_to_do_in_yak_ask_terms(folder, fake_api):
    """A 413: a new ``yak ask`` is told to send a shorter prompt (each ask already starts a new
    conversation); with ``--continue``, that leaving it out starts one."""
    fake_api.script(text("First answer."))
    assert (
        yak("ask", "-w", str(folder), "--no-refresh", "Hello", env=MODELS, text=True).returncode
        == 0
    )
    host = fake_api.url.partition("://")[2].rstrip("/")
    refused = f"yak: The server at {host} refused the request as too large (413): Request too big."

    fake_api.script(error(413, message="Request too big"))
    new = yak("ask", "-w", str(folder), "--no-refresh", "A big question", env=MODELS, text=True)
    fake_api.script(error(413, message="Request too big"))
    continued = yak(
        "ask", "-w", str(folder), "--no-refresh", "--continue", "And more", env=MODELS, text=True
    )

    assert (new.returncode, new.stderr) == (4, f"{refused} Send a shorter prompt.\n")
    assert (continued.returncode, continued.stderr) == (
        4,
        f"{refused} Send a shorter prompt, or ask without --continue or --session to start a "
        "new conversation.\n",
    )


def test_missing_key_exits_4_before_any_request(folder, fake_api, monkeypatch):
    """No key in the environment and no keyring: exit 4 with how to add one."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = yak("ask", "-w", str(folder), "hi", env=MODELS, text=True)
    assert result.returncode == 4
    assert "No Anthropic API key is set" in result.stderr
    assert fake_api.requests == []


def test_mutating_tool_denied_without_yes_and_allowed_with_it(folder, fake_api):
    """Without --yes the write is denied (the model is told how to allow it) and nothing is
    written; with --yes the same call writes the file."""
    fake_api.script(
        tool_use("write_file", {"path": "out.txt", "content": "data"}),
        text("I could not write it."),
    )
    denied = yak("ask", "-w", str(folder), "--no-refresh", "Write out.txt", env=MODELS, text=True)
    assert denied.returncode == 0, denied.stderr
    assert not (folder / "out.txt").exists()
    assert "[write_file] out.txt: needs --yes to write or run commands" in denied.stderr
    assert "denied by user" not in denied.stderr  # nobody was asked
    result_block = fake_api.message_requests[1].body["messages"][-1]["content"][0]
    assert result_block["content"] == "denied: run with --yes to allow"
    assert result_block["is_error"] is True
    assert denied.stdout == "I could not write it.\n"

    fake_api.script(
        tool_use("write_file", {"path": "out.txt", "content": "data"}), text("Written.")
    )
    allowed = yak(
        "ask", "-w", str(folder), "--yes", "--no-refresh", "Write out.txt", env=MODELS, text=True
    )
    assert allowed.returncode == 0, allowed.stderr
    assert (folder / "out.txt").read_text() == "data"
    assert "[write_file] out.txt: created out.txt (1 line)" in allowed.stderr


def test_reads_run_and_text_rounds_stay_on_separate_lines(folder, fake_api):
    """A read runs without --yes; text before and after a tool call does not run together."""
    fake_api.script(
        tool_use("read_file", {"path": "README.md"}, text="Reading."), text("It is a demo.")
    )
    result = yak("ask", "-w", str(folder), "--no-refresh", "What is this?", env=MODELS, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Reading.\nIt is a demo.\n"
    assert result.stderr == "[read_file] README.md: read 1 line\n"


def test_a_server_that_does_not_stream_is_answered_as_it_answers(core, loop, folder, fake_api):
    """A server that ignores ``stream: true`` and answers each request with one JSON message
    (some local servers do): the turn works as with a streaming one, tool round included, and
    the memory refresh after it too (it was told to check its base URL)."""
    fake_api.streams = False
    fake_api.script(
        tool_use("read_file", {"path": "README.md"}, text="Reading."),
        text("It is a demo."),
        text("- the project is a demo\n"),
    )
    result = yak("ask", "-w", str(folder), "What is this?", env=MODELS, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Reading.\nIt is a demo.\n"
    assert all(r.body["stream"] for r in fake_api.message_requests)  # asked, not honoured
    assert document_of(core, loop, folder) == "- the project is a demo\n"


def test_prompt_from_stdin(folder, fake_api):
    """PROMPT '-' reads the prompt from stdin."""
    fake_api.script(text("Got it."))
    result = yak(
        "ask",
        "-w",
        str(folder),
        "--no-refresh",
        "-",
        stdin="multi\nline prompt\n",
        env=MODELS,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    sent = fake_api.message_requests[0].body["messages"][0]["content"][0]["text"]
    assert sent == "multi\nline prompt\n"


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["-w", "{missing}", "hi"], None, "yak: no such folder: {missing}\n"),
        (
            ["-w", "{folder}/README.md", "hi"],
            None,
            "yak: {folder}/README.md is a file, not a folder\n",
        ),
        (["-w", "{folder}", "   "], None, "the prompt is empty"),
        (["-w", "{folder}", "-"], "\n\n", "the prompt is empty"),
    ],
)
def test_usage_errors_exit_2(folder, tmp_path, fake_api, args, stdin, message):
    """A -w that is not a folder or an empty prompt: exit 2, one line, no request."""
    names = {"folder": folder, "missing": tmp_path / "nope"}
    args = [a.format(**names) for a in args]
    message = message.format(**names)
    result = yak("ask", *args, stdin=stdin, env=MODELS, text=True)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.splitlines()) == 1
    assert fake_api.requests == []


@pytest.mark.parametrize("source", ["argument", "stdin"])
def test_a_prompt_over_the_limit_is_one_line_exit_2_and_nothing_is_stored_or_sent(
    core, loop, folder, fake_api, source
):
    """A prompt one character over ``CHAT_MESSAGE_CHARS`` (as an argument or piped in): exit 2,
    one sentence with its size and the limit, no request, no conversation stored; a prompt of
    exactly the limit is sent whole."""
    over = "x" * (CHAT_MESSAGE_CHARS + 1)
    if source == "argument":
        result = yak("ask", "-w", str(folder), "--no-refresh", over, env=MODELS, text=True)
    else:
        result = yak(
            "ask", "-w", str(folder), "--no-refresh", "-", stdin=over, env=MODELS, text=True
        )

    assert result.returncode == 2
    assert result.stderr == (
        f"yak: The prompt has {CHAT_MESSAGE_CHARS + 1:,} characters; the limit is "
        f"{CHAT_MESSAGE_CHARS:,} (about {CHAT_MESSAGE_CHARS // 4:,} tokens): nothing was sent or "
        "stored. Send a shorter prompt, or save the text in a file of the workspace and ask the "
        "agent to read it.\n"
    )
    assert fake_api.requests == []
    assert loop.run_until_complete(core.workspaces.find(str(folder))) is None

    fake_api.script(text("Read it all."))
    at_limit = yak(
        "ask",
        "-w",
        str(folder),
        "--no-refresh",
        "-",
        stdin="y" * CHAT_MESSAGE_CHARS,
        env=MODELS,
        text=True,
    )
    assert at_limit.returncode == 0, at_limit.stderr
    sent = fake_api.message_requests[0].body["messages"][0]["content"][0]["text"]
    assert sent == "y" * CHAT_MESSAGE_CHARS


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX byte paths and arguments")
def test_bytes_that_are_not_utf8_are_one_line_exit_2(folder, tmp_path, fake_api):
    """A prompt argument or a folder name holding a byte that is not UTF-8 (0xff) is one line,
    exit 2, no request — never a traceback."""
    bad_prompt = yak(
        "ask", "-w", str(folder), "--no-refresh", "bad \udcff byte", env=MODELS, text=True
    )
    bad_folder = tmp_path / "w\udcff"
    bad_folder.mkdir()
    bad_path = yak("ask", "-w", str(bad_folder), "--no-refresh", "hi", env=MODELS, text=True)

    assert (bad_prompt.returncode, bad_prompt.stderr) == (
        2,
        "yak: the prompt is not UTF-8 text (invalid byte at offset 4); nothing was sent\n",
    )
    assert bad_path.returncode == 2
    assert bad_path.stderr.startswith("yak: The folder's path is not UTF-8 text (byte 0xff")
    assert len(bad_path.stderr.splitlines()) == 1
    assert fake_api.requests == []


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_ctrl_c_stops_the_turn_and_keeps_what_was_said(core, loop, folder, fake_api):
    """Ctrl-C mid-reply: exit 130 with one line, and the partial reply is stored marked
    [stopped] (the refresh does not run)."""
    import threading

    gate = threading.Event()  # never set: the reply stalls after two words
    fake_api.script(text("Partial words then a long pause", gate=gate, pause_after=2))
    # PYTHONFAULTHANDLER: a process still running a minute after Ctrl-C is stopped with SIGABRT,
    # which prints every thread's stack, so the failure says where it hung.
    env = dict(os.environ, YAK_MEMORY_MODEL=MEMORY_MODEL, PYTHONFAULTHANDLER="1")
    process = subprocess.Popen(
        yak_command("ask", "-w", folder, "hi"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = process.stdout.read(len("Partial words "))  # both deltas before the pause
        rest, err = _ctrl_c(process)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert first + rest == "Partial words \n"
    assert err == "yak: interrupted\n"
    _, stored = the_session(core, loop, folder)
    assert [b["text"] for b in stored[-1].content] == ["Partial words ", "[stopped]"]
    assert len(fake_api.message_requests) == 1


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_ctrl_c_during_the_refresh_skips_it_and_exits_0_with_the_answer_kept(
    core, loop, folder, fake_api
):
    """The answer is printed and stored, then the refresh says it runs and that Ctrl-C skips
    it; Ctrl-C while the memory model hangs skips the refresh: exit 0 (not 130), the answer on
    stdout and in the conversation, the document unchanged, the conversation left for the
    next refresh."""

    loop.run_until_complete(workspace_with_document(core, folder, "Kept exactly.\n"))
    fake_api.script(text("The answer."), hang())
    env = dict(os.environ, YAK_MEMORY_MODEL=MEMORY_MODEL, PYTHONFAULTHANDLER="1")
    process = subprocess.Popen(
        yak_command("ask", "-w", folder, "A question?"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        announced = process.stderr.readline()
        out, err = _ctrl_c(process)
    finally:
        if process.poll() is None:
            process.kill()
    assert announced == "Refreshing the memory… (Ctrl-C skips it)\n"
    assert process.returncode == 0, err
    assert out == "The answer.\n"
    assert err == (
        "Memory refresh skipped; the answer is kept, and the next refresh folds this "
        "conversation in.\n"
    )
    session, messages = the_session(core, loop, folder)
    assert [m.text for m in messages] == ["A question?", "The answer."]
    assert document_of(core, loop, folder) == "Kept exactly.\n"
    workspace = loop.run_until_complete(core.workspaces.find(str(folder)))
    assert len(core.chat.conversations.unfolded_messages(workspace.id)) == 2


# --- continuing a conversation: --continue and --session ------------------------------------
def test_continue_sends_the_conversation_so_far_and_stores_into_the_same_session(
    core, loop, folder, fake_api
):
    """``ask --continue`` runs in the workspace's most recent session: its request carries the
    first question and answer before the new question, and both turns are stored in that one
    session (still titled from the first prompt)."""
    fake_api.script(text("Blue."), text("Because you said so."))
    first = yak("ask", "-w", str(folder), "--no-refresh", "Pick a colour", env=MODELS, text=True)
    assert first.returncode == 0, first.stderr
    second = yak(
        "ask",
        "-w",
        str(folder),
        "--no-refresh",
        "--continue",
        "Why that one?",
        env=MODELS,
        text=True,
    )

    assert second.returncode == 0, second.stderr
    assert (second.stdout, second.stderr) == ("Because you said so.\n", "")
    _, request = fake_api.message_requests
    assert conversation(request.body) == [
        ("user", "Pick a colour"),
        ("assistant", "Blue."),
        ("user", "Why that one?"),
    ]
    session, messages = the_session(core, loop, folder)  # one session only
    assert session.title == "Pick a colour"
    assert [m.text for m in messages] == [
        "Pick a colour",
        "Blue.",
        "Why that one?",
        "Because you said so.",
    ]


def test_session_continues_the_named_conversation_not_the_latest(core, loop, folder, fake_api):
    """``ask --session PREFIX`` (a unique prefix, any case) continues that conversation of the
    workspace even when another one is more recent: only its messages are sent, and the turn
    is stored in it; the other conversation is untouched."""
    workspace = loop.run_until_complete(workspace_with_document(core, folder))
    older = say(core, workspace.id, "About apples", "Apples are red.", title="Apples")
    newer = say(core, workspace.id, "About bananas", "Bananas are yellow.", title="Bananas")
    prefix = next(
        older[:n] for n in range(6, len(older) + 1) if not newer.startswith(older[:n])
    ).lower()
    fake_api.script(text("Some are green."))

    result = yak(
        "ask",
        "-w",
        str(folder),
        "--no-refresh",
        "--session",
        prefix,
        "Other colours?",
        env=MODELS,
        text=True,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Some are green.\n"
    [request] = fake_api.message_requests
    assert conversation(request.body) == [
        ("user", "About apples"),
        ("assistant", "Apples are red."),
        ("user", "Other colours?"),
    ]
    assert stored_texts(core, loop, older)[2:] == ["Other colours?", "Some are green."]
    assert stored_texts(core, loop, newer) == ["About bananas", "Bananas are yellow."]


def ask_in_process(capsys, *argv):
    """``yak ask ARGV`` through ``yak.cli.main`` in this process: (exit code, stdout, stderr)."""
    code = main(["ask", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_nothing_to_continue_is_one_line_and_registers_nothing(
    core, loop, folder, fake_api, capsys
):
    """``--continue`` in a folder with no conversation: exit 2, one line saying so, no request,
    and the folder is not registered as a workspace."""
    code, out, err = ask_in_process(capsys, "-w", folder, "--continue", "hi")
    assert (code, out) == (2, "")
    assert err == (
        f"yak: no conversation to continue in {folder}; run yak ask without --continue to "
        "start one\n"
    )
    assert fake_api.requests == []
    assert loop.run_until_complete(core.workspaces.find(str(folder))) is None


def test_a_session_the_workspace_does_not_have_is_one_line_exit_2(
    core, loop, folder, tmp_path, fake_api, capsys
):
    """``--session`` with an unknown id, another workspace's conversation, a prefix shorter
    than 6 characters or one that several conversations share: exit 2, one line each, no
    request, and no conversation gains a message; ``--continue`` with ``--session`` is a
    usage error too."""
    workspace = loop.run_until_complete(workspace_with_document(core, folder))
    other_folder = tmp_path / "other"
    other_folder.mkdir()
    other = loop.run_until_complete(workspace_with_document(core, other_folder))
    theirs = say(core, other.id, "Their question", "Their answer.")
    mine = [say(core, workspace.id, f"Question {n}", f"Answer {n}.") for n in (1, 2)]
    shared = mine[0][:6]
    assert mine[1].startswith(shared)  # made in the same moment: ids share their time part
    cases = [
        ("01ARZ3NDEKTSV4RRFFQ69G5FAV", f"no conversation '01ARZ3NDEKTSV4RRFFQ69G5FAV' in {folder}"),
        (theirs, f"no conversation '{theirs}' in {folder}"),
        ("01AB", "give at least 6 characters of a conversation id; '01AB' is too short"),
        (shared, f"'{shared}' starts the ids of 2 conversations in {folder}; give more"),
    ]
    for wanted, message in cases:
        code, out, err = ask_in_process(capsys, "-w", folder, "--session", wanted, "hi")
        assert (code, out) == (2, ""), wanted
        assert err.startswith(f"yak: {message}") and err.count("\n") == 1, err

    code, _, err = ask_in_process(capsys, "-w", folder, "--continue", "--session", mine[0], "hi")
    assert code == 2 and "not allowed with argument" in err and err.count("\n") == 1

    assert fake_api.requests == []
    assert stored_texts(core, loop, theirs) == ["Their question", "Their answer."]
    assert [len(stored_texts(core, loop, s)) for s in mine] == [2, 2]


def test_instruction_files_go_in_their_own_block_and_are_named_on_stderr(folder, fake_api):
    """An AGENTS.md line reaches the request in the instructions block, apart from the memory,
    and ``yak ask`` names the file on one stderr line; stdout is only the reply."""
    (folder / "AGENTS.md").write_text("Always run make lint\n")
    fake_api.script(text("ok"))

    result = yak("ask", "-w", str(folder), "--no-refresh", "hi", env=MODELS, text=True)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    assert result.stderr == "Instructions: AGENTS.md\n"
    [request] = fake_api.message_requests
    assert session_block(request.body).startswith(
        '<workspace-instructions>\n<instruction-file path="AGENTS.md">\nAlways run make lint\n'
    )


def test_a_claude_md_linked_to_agents_md_is_read_once_and_a_cut_file_is_said(folder, fake_api):
    """``CLAUDE.md`` a symlink to ``AGENTS.md``: one file in the request and on the stderr line.
    An AGENTS.md over 12,000 characters is cut for the chat, and the user is told so as the
    model is."""
    (folder / "AGENTS.md").write_text("Always run make lint\n" + "x" * 13_000 + "\n")
    (folder / "CLAUDE.md").symlink_to("AGENTS.md")
    fake_api.script(text("ok"))

    result = yak("ask", "-w", str(folder), "--no-refresh", "hi", env=MODELS, text=True)

    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        "Instructions: AGENTS.md (cut: the first 12,000 of 13,022 characters)\n"
    )
    [request] = fake_api.message_requests
    block = session_block(request.body)
    assert block.count("<instruction-file ") == 1 and "Always run make lint" in block
    assert "[AGENTS.md was cut: the first 12000 of 13022 characters are shown.]" in block


# A command whose work ignores the cancel (as a cleanup stuck on the network would): after the
# grace period Ctrl-C still ends it, with exit 130 and its one line.
_STUCK_COMMAND = """
import asyncio, sys
from pathlib import Path
from yak.cli import context

context.INTERRUPT_GRACE_S = 1.0

async def work(core):
    print("ready", flush=True)
    while True:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            pass  # stuck: the cancel is not honoured

ctx = context.Context(data_dir=Path(sys.argv[1]))
try:
    ctx.run(work)
except KeyboardInterrupt:
    sys.exit(context.output.error("interrupted", 130, as_json=False))
"""


def test_ctrl_c_ends_a_command_whose_cleanup_does_not(tmp_path):
    """Ctrl-C cancels the work; when the work does not end (a cleanup waiting on a connection),
    the process still ends a moment later with exit 130 and "yak: interrupted", never hangs."""
    import signal

    (tmp_path / "data").mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", _STUCK_COMMAND, str(tmp_path / "data")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert (process.returncode, err) == (130, "yak: interrupted\n")


def _ctrl_c(process: subprocess.Popen) -> tuple[str, str]:
    """Send Ctrl-C (SIGINT) to a running ``yak ask`` and return its stdout and stderr; one
    that still runs a minute later fails the test with its threads' stacks (it was started
    with ``PYTHONFAULTHANDLER``, so SIGABRT prints them)."""
    import signal

    process.send_signal(signal.SIGINT)
    try:
        return process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        _, stacks = process.communicate(timeout=30)
        raise AssertionError(f"yak ask still ran a minute after Ctrl-C:\n{stacks}") from None
