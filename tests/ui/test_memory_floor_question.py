"""A hand Save that would collapse the memory (the floor rule) or empty it asks first.

A human may shrink the document on purpose (``docs/memory.md``, "The memory document"),
but one click on View for a floor-refused reply followed by Save must not silently replace the
document. Each test compares the stored bytes before and after.
"""

from __future__ import annotations

import pytest
from memory_support import answer, lines, message_boxes, run
from PySide6.QtCore import Qt

from yak.memory.judging.guards import shrink_question
from yak.ui.settings.memory_page import MemoryPage

REPLY = "- ok, done\n"  # what a model said instead of the document: 11 characters, 1 line
QUESTION = (
    "This replaces 36 lines (351 characters) with 1 line (11 characters; it keeps under half of "
    "the document). Save anyway?"
)


async def view_reply(page: MemoryPage, workspace_id: str, reply: str) -> None:
    """What View on a refused refresh does: open the page with the reply as unsaved edits."""
    page.controller.reload()
    page.controller.show_workspace(workspace_id, proposal=reply)
    await page.controller.tasks.drain()
    assert page.editor.text == reply and page.editor.is_dirty()


def test_save_of_a_floor_refused_reply_asks_and_cancel_keeps_the_document(env, page, qtbot, qloop):
    """View a floor-refused reply, Save: the question names both sizes with Cancel as the
    default; Cancel stores nothing (byte for byte) and keeps the edits; Save anyway stores it."""
    workspace = env.workspace("proj", lines(36))
    before = env.stored(workspace.id)

    async def body():
        await view_reply(page, workspace.id, REPLY)
        qtbot.mouseClick(page.editor.save_button, Qt.MouseButton.LeftButton)
        box = page.editor.question_box
        assert box is not None and box.isVisible()
        assert box.text() == QUESTION
        assert box.defaultButton().text() == "Cancel"
        text = await answer("Cancel", containing="Save anyway?")
        await page.controller.tasks.drain()
        after = env.stored(workspace.id)
        assert after.content.encode() == before.content.encode()
        assert after.version == before.version
        assert "36 lines (351 characters) with 1 line (11 characters" in text
        assert page.editor.text == REPLY and page.editor.is_dirty()
        assert page.editor.message_label.text() == "Nothing was saved."

        qtbot.mouseClick(page.editor.save_button, Qt.MouseButton.LeftButton)
        await answer("Save anyway", containing="Save anyway?")
        await page.controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert stored.content == REPLY
        assert stored.version == before.version + 1
        assert page.editor.message_label.text() == f"Saved as version {stored.version}."
        assert not page.editor.is_dirty()

    run(qloop, body())


def test_ctrl_s_on_an_emptied_editor_asks_too(env, page, qtbot, qloop):
    """Clearing the editor and saving asks the same way; Cancel stores nothing."""
    workspace = env.workspace("proj", lines(36))
    before = env.stored(workspace.id)

    async def body():
        await view_reply(page, workspace.id, "")
        page.editor.text_edit.setFocus()
        qtbot.keyClick(page.editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
        text = await answer("Cancel", containing="Save anyway?")
        assert "replaces 36 lines with nothing" in text
        await page.controller.tasks.drain()
        assert env.stored(workspace.id).content.encode() == before.content.encode()
        assert env.stored(workspace.id).version == before.version

    run(qloop, body())


def test_small_edit_saves_without_a_question(env, page, qtbot, qloop):
    """A normal edit (one line dropped of 36) saves at once: no question box at all."""
    workspace = env.workspace("proj", lines(36))

    async def body():
        await view_reply(page, workspace.id, lines(35))
        qtbot.mouseClick(page.editor.save_button, Qt.MouseButton.LeftButton)
        assert page.editor.question_box is None
        assert not [b for b in message_boxes() if "Save anyway?" in b.text()]
        await page.controller.tasks.drain()
        assert env.stored(workspace.id).content == lines(35)

    run(qloop, body())


def test_a_pasted_long_line_saves_without_being_called_shorter(env, page, qtbot, qloop):
    """36 lines replaced by one pasted line of 2,000 characters: more text, so no "much
    shorter" question; it is stored as typed."""
    workspace = env.workspace("proj", lines(36))
    pasted = "- " + "one very long pasted line " * 76 + "end\n"

    async def body():
        page.controller.reload()
        page.controller.show_workspace(workspace.id)
        await page.controller.tasks.drain()
        page.editor.text_edit.setPlainText(pasted)
        qtbot.mouseClick(page.editor.save_button, Qt.MouseButton.LeftButton)
        assert page.editor.question_box is None
        assert not [b for b in message_boxes() if "Save anyway?" in b.text()]
        await page.controller.tasks.drain()
        assert env.stored(workspace.id).content == pasted

    run(qloop, body())


def test_save_in_the_unsaved_edits_guard_asks_and_cancel_does_not_switch(env, page, qloop):
    """Switching workspace, Save in the unsaved-edits guard, then Cancel at the floor question:
    nothing is stored and the editor stays on the workspace with the edits."""
    alpha = env.workspace("alpha", lines(36))
    beta = env.workspace("beta", "- beta fact\n")
    before = env.stored(alpha.id)

    async def body():
        await view_reply(page, alpha.id, REPLY)
        page.select_workspace(beta.id)
        await answer("Save", containing="unsaved edits")
        await answer("Cancel", containing="Save anyway?")
        await page.controller.tasks.drain()
        assert env.stored(alpha.id).content.encode() == before.content.encode()
        assert page.editor.workspace.id == alpha.id
        assert page.editor.text == REPLY

    run(qloop, body())


@pytest.mark.parametrize(
    ("previous", "new", "asked"),
    [
        (lines(36), REPLY, True),
        (lines(36), "", True),
        (lines(36), lines(20), False),  # keeps over half
        (lines(36), lines(17), True),  # keeps under half of the text
        (lines(36), "x" * 5000, False),  # one long pasted line: longer, not shorter
        (lines(36), " ".join(lines(36).splitlines()) + "\n", False),  # lines joined: same text
        (lines(36), "y" * 170, True),  # one line, under half of the characters
        ("", REPLY, False),  # nothing to collapse
        ("- short\n", "", True),  # emptying always asks
        ("- base fact\n- saved once\n", "- my edit\n", False),  # rewording a tiny document
    ],
)
def test_shrink_question_follows_the_floor_rule(previous, new, asked):
    """The helper asks exactly when the save keeps under half of the characters (or under the
    floor's minimum, or empties the document); fewer lines alone ask nothing."""
    assert (shrink_question(previous, new) is not None) is asked
