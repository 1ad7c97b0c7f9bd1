"""Memory switched off reaches an open conversation at once ("Memory off" in docs/memory.md):
``yak ask``, ``yak memory disable`` and ``yak ask --continue`` each in its own process against
the fake Messages API; the requests are read as the fake server received them."""

from __future__ import annotations

from tests.support.builders import project_folder, workspace_with_document
from tests.support.cli import yak
from tests.support.fake_api import text
from tests.test_cli_ask import session_block
from tests.test_cli_ask import yak as ask_yak

THREE = (
    "Project structure\n- yak is a Qt desktop app\n\n"
    "Conventions\n- tests run with pytest\n\n"
    "Decisions\n- SQLite is the default database\n"
)


def test_disable_reaches_a_conversation_started_with_memory_on_at_its_next_request(
    core, loop, tmp_path, fake_api, data_dir
):
    """ask, then disable, then ask --continue: the continued request holds no memory block
    (nor the document); after enable the continued conversation stays without it and a new
    conversation gets it."""
    folder = project_folder(tmp_path, "project")
    loop.run_until_complete(workspace_with_document(core, folder, THREE))
    fake_api.script(text("One."), text("Two."), text("Three."), text("Four."))
    assert ask_yak("ask", "-w", str(folder), "--no-refresh", "Hello").returncode == 0
    assert yak("memory", "disable", "-w", folder, data_dir=data_dir).returncode == 0
    continued = ask_yak("ask", "-w", str(folder), "--no-refresh", "--continue", "And?")
    assert continued.returncode == 0, continued.stderr
    assert yak("memory", "enable", "-w", folder, data_dir=data_dir).returncode == 0
    again = ask_yak("ask", "-w", str(folder), "--no-refresh", "--continue", "More?")
    assert again.returncode == 0, again.stderr
    assert ask_yak("ask", "-w", str(folder), "--no-refresh", "New topic").returncode == 0

    on, off, still_off, new = [session_block(r.body) for r in fake_api.message_requests]
    assert on.startswith("<workspace-memory>\n" + THREE)
    for block in (off, still_off):
        assert "<workspace-memory>" not in block and "SQLite is the default" not in block
        assert block == on[on.index("Environment:") :]  # the rest is the same, date included
    assert new.startswith("<workspace-memory>\n" + THREE)
