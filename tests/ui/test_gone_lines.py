"""The memory panel counts the lines that name something gone from the workspace, and the
review of them keeps, edits or removes each ("Checked at use" in docs/memory.md): through the
core on a real database, a conversation on the fake Messages API, and the widgets' text."""

from __future__ import annotations

from dataclasses import replace

import pytest
from memory_support import run
from PySide6.QtWidgets import QPushButton

from tests.support.fake_api import text
from yak.agent.types import ApprovalDecision
from yak.presenters import GAVE_UP_TEXT
from yak.references import ReferenceCheck
from yak.ui.gone_lines import GoneLinesController
from yak.ui.memory_panel import MemoryPanel

BOOTSTRAP = "- Bootstrap a new machine with scripts/bootstrap.sh first."
README = "- The overview is in README.md."
LINT = "- Run `make lint` before pushing."
DOCUMENT = f"Setup:\n{BOOTSTRAP}\n{README}\n{LINT}\n"


async def deny(_request):
    return ApprovalDecision.DENY


@pytest.fixture
def gone(env, qtbot, fake_api):
    """A shown memory panel with the controller of its gone lines, on a workspace whose folder
    has every file its memory names (the Makefile without a lint target)."""
    folder = env.folder("proj")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "bootstrap.sh").write_text("echo", encoding="utf-8")
    (folder / "README.md").write_text("hi", encoding="utf-8")
    (folder / "Makefile").write_text("test:\n\tpytest\n", encoding="utf-8")
    workspace = env.workspace("proj", DOCUMENT)
    env.core.settings.save(replace(env.core.settings.current(), chat_model="claude-chat-gone"))
    panel = MemoryPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.show_workspace(workspace)
    edits: list[str] = []
    controller = GoneLinesController(env.core, env.bridge, panel, edit=edits.append)
    yield panel, controller, workspace, folder, edits
    controller.tasks.close()
    controller.dialog.close()


def buttons(dialog, name: str) -> list:
    """The buttons named ``name`` shown in the dialog's rows, top to bottom."""
    return dialog.rows.findChildren(QPushButton, name)


async def converse(env, workspace) -> None:
    session = (await env.core.chat.create_session(workspace.id)).id
    finished = await env.core.chat.send(workspace, session, "hi", approver=deny)
    assert finished.status == "completed", finished.error


def test_the_next_conversation_counts_a_deleted_file_and_a_restored_one_clears_it(
    env, gone, fake_api
):
    """Opened: one line (make lint) names what is gone; the file deleted, the next
    conversation's check makes it two; restored, the conversation after makes it one again."""
    panel, controller, workspace, folder, _edits = gone

    async def body():
        controller.check(workspace.id)
        await controller.tasks.drain()
        assert panel.gone_label.text() == "1 line names something that is gone"
        assert panel.gone_button.isVisibleTo(panel)

        (folder / "scripts" / "bootstrap.sh").unlink()
        fake_api.script(text("OK."))
        await converse(env, workspace)
        assert panel.gone_label.text() == "2 lines name things that are gone"
        assert [g.line for g in panel.references.gone] == [BOOTSTRAP, LINT]

        (folder / "scripts" / "bootstrap.sh").write_text("echo", encoding="utf-8")
        fake_api.script(text("OK."))
        await converse(env, workspace)
        assert panel.gone_label.text() == "1 line names something that is gone"

    run(env.loop, body())


def test_review_keeps_edits_and_removes_with_a_tombstone(env, gone, fake_api, qtbot):
    """Review… lists both lines; Keep puts one aside (the panel counts one), Edit… opens the
    editor on the workspace, Remove saves the document without the line as a hand edit, and a
    tombstone remembers it; nothing else changes."""
    panel, controller, workspace, folder, edits = gone
    (folder / "scripts" / "bootstrap.sh").unlink()

    async def body():
        controller.check(workspace.id)
        await controller.tasks.drain()
        panel.gone_button.click()
        dialog = controller.dialog
        assert dialog.isVisible() and dialog.row_texts() == [BOOTSTRAP, LINT]

        buttons(dialog, "goneKeep")[0].click()
        assert dialog.row_texts() == [LINT]
        assert panel.gone_label.text() == "1 line names something that is gone"

        buttons(dialog, "goneEdit")[0].click()
        assert edits == [workspace.id] and not dialog.isVisible()

        panel.gone_button.click()
        assert dialog.row_texts() == [LINT]
        buttons(dialog, "goneRemove")[0].click()
        await controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert stored.content == f"Setup:\n{BOOTSTRAP}\n{README}\n"
        tombstones = await env.core.memory.tombstones(workspace.id)
        assert [t.text for t in tombstones] == [LINT]
        assert env.history(workspace.id)[0].source == "hand"

    run(env.loop, body())


def test_a_check_that_gave_up_says_so_without_a_review(env, gone):
    """A workspace that did not answer in time: the panel says the references were not
    checked, and offers nothing to review."""
    panel, _controller, workspace, _folder, _edits = gone
    panel.show_references(workspace.id, ReferenceCheck(gave_up=True))
    assert panel.gone_label.text() == GAVE_UP_TEXT
    assert not panel.gone_button.isVisibleTo(panel)
    panel.show_references(workspace.id, ReferenceCheck())
    assert not panel.gone_label.isVisibleTo(panel)
