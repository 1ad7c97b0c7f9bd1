"""The Settings memory page's inline editor, driven like a user would, against a real database.

Each test asserts what the user sees (the counter, the banner, the messages, the editor's text)
and what is stored, byte for byte.
"""

from __future__ import annotations

import pytest
from memory_support import answer, lines, run, show, type_at_end
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QTextCursor

from tests.support import record
from yak.domain import RevisionSource
from yak.events import MemoryChanged
from yak.ui.settings.dialog import SettingsDialog
from yak.ui.settings.memory_controller import MemoryPageController
from yak.ui.settings.memory_page import MemoryPage

RED = "#b00020"
GREEN_BG, RED_BG, GREY = "#dafbe1", "#ffebe9", "#eaeef2"  # diff lines: added, removed, hunk


def test_counter_follows_typing_and_turns_red_over_the_ceiling(env, page, qtbot, qloop):
    """The counter says N / 200 lines as the user types, and turns red past 200 lines or
    25,000 characters; under the ceiling it is not red (the negative beside the positive)."""
    workspace = env.workspace("proj", lines(150))

    async def body():
        await show(page, workspace.id)
        editor = page.editor
        assert editor.counter_label.text().startswith("150 / 200 lines")
        type_at_end(page, qtbot, "- one more")
        assert editor.counter_label.text().startswith("151 / 200 lines")
        assert editor.counter_label.property("over") is False
        assert RED not in editor.counter_label.styleSheet()
        assert editor.dirty_label.text() == "unsaved changes"

        editor.text_edit.setPlainText(lines(212))
        assert editor.counter_label.text().startswith("212 / 200 lines")
        assert editor.counter_label.property("over") is True
        assert RED in editor.counter_label.styleSheet()

        editor.text_edit.setPlainText("x" * 25_001)
        assert editor.counter_label.text() == "1 / 200 lines · 25,001 / 25,000 characters"
        assert editor.counter_label.property("over") is True

    run(qloop, body())


def test_save_stores_the_edit_as_a_new_version(env, page, qtbot, qloop):
    """Save writes exactly the editor's text as the next version, a hand revision; the change
    is published with the page's controller as its initiator, which skips it (nothing is read
    again: the save's own result updated the page)."""
    workspace = env.workspace("proj", lines(3))
    changes = record(env.core.bus, MemoryChanged)

    async def body():
        await show(page, workspace.id)
        type_at_end(page, qtbot, "- lint with ruff\n")
        reads = []
        real_read = env.core.memory.read

        async def counted_read(workspace_id):
            reads.append(workspace_id)
            return await real_read(workspace_id)

        env.core.memory.read = counted_read
        qtbot.mouseClick(page.editor.save_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert stored.content == lines(3) + "- lint with ruff\n"
        assert stored.version == 2
        assert env.history(workspace.id)[0].source == RevisionSource.HAND
        assert page.editor.message_label.text() == "Saved as version 2."
        assert not page.editor.is_dirty()
        assert page.model.summary_for(workspace.id).lines == 4
        assert [(c.workspace_id, c.version, c.source, c.initiator) for c in changes] == [
            (workspace.id, 2, "hand", page.controller)
        ]
        assert changes[0].updated_at == stored.updated_at
        assert reads == []

    run(qloop, body())


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (lines(212), "The memory document has 212 lines (limit 200)."),
        ("y" * 25_001, "The memory document has 25,001 characters (limit 25,000)."),
    ],
)
def test_save_over_the_ceiling_is_refused_with_a_message_and_nothing_stored(
    env, page, qtbot, qloop, text, reason
):
    """Over 200 lines or 25,000 characters, Save says why and writes nothing: the stored
    document is unchanged byte for byte, and the edits stay in the editor."""
    workspace = env.workspace("proj", lines(150))
    before = env.stored(workspace.id)

    async def body():
        await show(page, workspace.id)
        page.editor.text_edit.setPlainText(text)
        qtbot.mouseClick(page.editor.save_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        message = page.editor.message_label.text()
        assert message.startswith(reason)
        assert "Nothing was saved" in message
        assert RED in page.editor.message_label.styleSheet()
        assert page.editor.message_label.isVisible()
        after = env.stored(workspace.id)
        assert after.content.encode() == before.content.encode()
        assert after.version == before.version
        assert len(env.history(workspace.id)) == 1
        assert page.editor.text == text  # nothing typed is lost

        # Exactly at the ceiling is accepted (the positive beside the negative); editing
        # clears the refusal's message.
        page.editor.text_edit.setPlainText(lines(200))
        assert page.editor.message_label.text() == ""
        page.editor.request_save()
        await page.controller.tasks.drain()
        assert env.stored(workspace.id).content == lines(200)

    run(qloop, body())


def test_change_underneath_unsaved_edits_shows_banner_and_keep_mine_saves_on_top(
    env, page, qtbot, qloop
):
    """Another program writes while the user edits: the editor keeps the user's text and shows
    the banner with the diff; nothing is overwritten. Keep mine then saves the user's text as a
    new version on top of theirs."""
    workspace = env.workspace("proj", "- base fact\n")

    async def body():
        await show(page, workspace.id)
        page.editor.text_edit.setPlainText("- base fact\n- my new fact\n")
        theirs = env.write_from_another_process(workspace.id, "- base fact\n- their fact\n")
        assert theirs.version == 2
        assert page.editor.banner.isHidden()

        changed = await env.core.watcher.check_external_changes()
        assert changed == [workspace.id]
        await page.controller.tasks.drain()

        editor = page.editor
        assert editor.banner_shown
        assert editor.banner.label.text() == (
            "The memory changed to version 2 by another program (such as the yak command) "
            "while you were editing. Keep mine saves your text as version 3; Merge puts your "
            "edits on top of version 2; Take theirs discards your edits."
        )
        assert editor.banner.diff_view.rows() == [
            ("@@ -1,2 +1,2 @@", GREY),
            ("  - base fact", None),
            ("− - their fact", RED_BG),
            ("+ - my new fact", GREEN_BG),
        ]
        assert editor.text == "- base fact\n- my new fact\n"  # mine is still there
        assert env.stored(workspace.id).content == "- base fact\n- their fact\n"  # theirs too

        qtbot.mouseClick(editor.banner.keep_mine_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert stored.content == "- base fact\n- my new fact\n"
        assert stored.version == 3
        assert [r.content for r in env.history(workspace.id)][:2] == [
            "- base fact\n- my new fact\n",
            "- base fact\n- their fact\n",
        ]
        assert not editor.banner_shown
        assert not editor.is_dirty()

    run(qloop, body())


def test_take_theirs_shows_the_stored_text_and_writes_nothing(env, page, qtbot, qloop):
    """Take theirs replaces the editor's text with the stored one; the store is untouched."""
    workspace = env.workspace("proj", "- base fact\n")

    async def body():
        await show(page, workspace.id)
        page.editor.text_edit.setPlainText("- my edit\n")
        env.write_from_another_process(workspace.id, "- their fact\n")
        await env.core.watcher.check_external_changes()
        await page.controller.tasks.drain()
        assert page.editor.banner_shown

        qtbot.mouseClick(page.editor.banner.take_theirs_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        assert page.editor.text == "- their fact\n"
        assert not page.editor.is_dirty()
        assert not page.editor.banner_shown
        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == ("- their fact\n", 2)

    run(qloop, body())


def test_merge_puts_my_edits_on_top_of_theirs_and_saves_only_on_save(env, page, qtbot, qloop):
    """Another writer added a line at the top while I added one at the end: Merge puts both in
    the editor (the banner goes, the header shows their version, a message says Save stores
    it), nothing is written until Save, which stores the merged text as version 3; Ctrl+Z
    right after Merge would have brought my text back."""
    workspace = env.workspace("proj", "- a\n- b\n- c\n")

    async def body():
        await show(page, workspace.id)
        editor = page.editor
        editor.text_edit.setPlainText("- a\n- b\n- c\n- mine\n")
        env.write_from_another_process(workspace.id, "- theirs\n- a\n- b\n- c\n")
        await env.core.watcher.check_external_changes()
        await page.controller.tasks.drain()
        assert editor.banner_shown and editor.banner.merge_button.text() == "Merge"

        qtbot.mouseClick(editor.banner.merge_button, Qt.MouseButton.LeftButton)
        assert not editor.banner_shown
        assert editor.text == "- theirs\n- a\n- b\n- c\n- mine\n"
        assert editor.message_label.text() == (
            "Merged your edits into version 2; Save stores the result (Ctrl+Z brings back your "
            "text as it was)."
        )
        assert "version 2 · " in editor.header_label.text()
        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == ("- theirs\n- a\n- b\n- c\n", 2)

        editor.text_edit.undo()
        assert editor.text == "- a\n- b\n- c\n- mine\n"
        editor.text_edit.redo()
        qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == ("- theirs\n- a\n- b\n- c\n- mine\n", 3)

    run(qloop, body())


def test_merge_that_conflicts_says_so_and_keeps_both_choices(env, page, qtbot, qloop):
    """Both sides changed the same line: Merge says they cannot be merged, the banner stays
    with Keep mine and Take theirs, my text stays in the editor and nothing is written."""
    workspace = env.workspace("proj", "- a\n- port 8000\n")

    async def body():
        await show(page, workspace.id)
        editor = page.editor
        editor.text_edit.setPlainText("- a\n- port 9000\n")
        env.write_from_another_process(workspace.id, "- a\n- port 7000\n")
        await env.core.watcher.check_external_changes()
        await page.controller.tasks.drain()

        qtbot.mouseClick(editor.banner.merge_button, Qt.MouseButton.LeftButton)
        assert editor.message_label.text() == (
            "Your edits and version 2 change the same lines, so they cannot be merged: "
            "choose Keep mine or Take theirs."
        )
        assert editor.banner_shown
        assert editor.banner.keep_mine_button.isVisible()
        assert editor.banner.take_theirs_button.isVisible()
        assert editor.text == "- a\n- port 9000\n"
        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == ("- a\n- port 7000\n", 2)

        qtbot.mouseClick(editor.banner.keep_mine_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        assert env.stored(workspace.id).content == "- a\n- port 9000\n"

    run(qloop, body())


def test_change_without_unsaved_edits_updates_the_editor_without_a_banner(env, page, qloop):
    """With no unsaved edits there is nothing to lose: the editor shows the new text."""
    workspace = env.workspace("proj", "- base fact\n")

    async def body():
        await show(page, workspace.id)
        env.write_from_another_process(workspace.id, "- their fact\n")
        await env.core.watcher.check_external_changes()
        await page.controller.tasks.drain()
        assert page.editor.text == "- their fact\n"
        assert not page.editor.banner_shown
        assert "version 2" in page.editor.message_label.text()

    run(qloop, body())


def test_stale_save_is_refused_and_shows_the_conflict_banner(env, page, qtbot, qloop):
    """A save based on a version that is no longer current writes nothing and shows the banner
    (keep mine / take theirs with the diff) — the other write is never overwritten. The banner
    says it in one coherent message, the previous "Saved as version N." goes away and the
    header names the stored version; Keep mine then saves as the version the banner named."""
    workspace = env.workspace("proj", "- base fact\n")

    async def body():
        await show(page, workspace.id)
        editor = page.editor
        editor.text_edit.setPlainText("- base fact\n- saved once\n")
        qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        assert editor.message_label.text() == "Saved as version 2."
        assert "version 2 · " in editor.header_label.text()

        editor.text_edit.setPlainText("- my edit\n")
        env.write_from_another_process(workspace.id, "- their fact\n")  # the watcher is asleep
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
        await page.controller.tasks.drain()

        assert editor.banner_shown
        assert editor.banner.label.text() == (
            "The memory changed (version 3) while you were editing; nothing was saved. Keep "
            "mine saves your text as version 4; Merge puts your edits on top of version 3; "
            "Take theirs discards your edits."
        )
        assert "Reload" not in editor.banner.label.text()
        assert editor.message_label.text() == ""  # not the stale "Saved as version 2."
        assert "version 3 (your edits are based on version 2)" in editor.header_label.text()
        assert editor.banner.diff_view.rows() == [
            ("@@ -1 +1 @@", GREY),
            ("− - their fact", RED_BG),
            ("+ - my edit", GREEN_BG),
        ]
        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == ("- their fact\n", 3)
        assert editor.text == "- my edit\n"

        qtbot.mouseClick(editor.banner.keep_mine_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == ("- my edit\n", 4)
        assert not editor.banner_shown
        assert editor.message_label.text() == "Saved as version 4."
        assert "version 4 · " in editor.header_label.text()
        assert "based on" not in editor.header_label.text()

    run(qloop, body())


def test_take_theirs_after_a_stale_save_shows_their_version_in_the_header(env, page, qtbot, qloop):
    """Take theirs resolves the conflict banner: the editor, the message and the header show
    the stored version; nothing is written."""
    workspace = env.workspace("proj", "- base fact\n")

    async def body():
        await show(page, workspace.id)
        editor = page.editor
        editor.text_edit.setPlainText("- my edit\n")
        env.write_from_another_process(workspace.id, "- their fact\n")
        editor.request_save()
        await page.controller.tasks.drain()
        assert "version 2 (your edits are based on version 1)" in editor.header_label.text()

        qtbot.mouseClick(editor.banner.take_theirs_button, Qt.MouseButton.LeftButton)
        assert not editor.banner_shown
        assert editor.text == "- their fact\n"
        assert editor.message_label.text() == (
            "Showing the stored version 2; your edits were discarded."
        )
        assert "version 2 · " in editor.header_label.text()
        assert "based on" not in editor.header_label.text()
        assert env.stored(workspace.id).version == 2

    run(qloop, body())


def test_switching_workspace_with_unsaved_edits_asks_save_discard_cancel(env, page, qtbot, qloop):
    """Choosing another workspace with unsaved edits asks first: Cancel keeps the edits and the
    workspace, Discard drops them (nothing stored), Save stores them and then switches."""
    alpha = env.workspace("alpha", "- alpha fact\n")
    beta = env.workspace("beta", "- beta fact\n")

    def select_row_of(workspace_id: str) -> None:
        row = page.model.row_of(workspace_id)
        page.table.setCurrentIndex(page.model.index(row, 0))

    async def body():
        await show(page, alpha.id)
        page.editor.text_edit.setPlainText("- alpha edited\n")

        select_row_of(beta.id)
        text = await answer("Cancel", containing="unsaved edits")
        assert "alpha" in text
        assert page.editor.workspace.id == alpha.id
        assert page.editor.text == "- alpha edited\n"
        assert page.selected_workspace_id() == alpha.id

        select_row_of(beta.id)
        await answer("Discard", containing="unsaved edits")
        await page.controller.tasks.drain()
        assert page.editor.workspace.id == beta.id
        assert page.editor.text == "- beta fact\n"
        assert env.stored(alpha.id).content == "- alpha fact\n"

        page.editor.text_edit.setPlainText("- beta edited\n")
        select_row_of(alpha.id)
        await answer("Save", containing="unsaved edits")
        await page.controller.tasks.drain()
        assert env.stored(beta.id).content == "- beta edited\n"
        assert page.editor.workspace.id == alpha.id
        assert page.editor.text == "- alpha fact\n"

    run(qloop, body())


def test_save_refused_in_the_guard_does_not_switch(env, page, qloop):
    """Save in the guard with text over the ceiling is refused with the message and the editor
    stays on the workspace with the edits: nothing is lost, nothing is stored."""
    alpha = env.workspace("alpha", "- alpha fact\n")
    beta = env.workspace("beta", "- beta fact\n")

    async def body():
        await show(page, alpha.id)
        page.editor.text_edit.setPlainText(lines(201))
        page.select_workspace(beta.id)
        await answer("Save", containing="unsaved edits")
        await page.controller.tasks.drain()
        assert page.editor.workspace.id == alpha.id
        assert page.editor.text == lines(201)
        assert "201 lines (limit 200)" in page.editor.message_label.text()
        assert env.stored(alpha.id).content == "- alpha fact\n"

    run(qloop, body())


def test_closing_settings_with_unsaved_edits_asks_first(env, qtbot, qloop):
    """Closing the Settings dialog with unsaved edits asks; Cancel keeps it open with the edits,
    Discard closes it and stores nothing."""
    workspace = env.workspace("proj", "- fact\n")
    dialog = SettingsDialog()
    qtbot.addWidget(dialog)
    memory_page = MemoryPage()
    dialog.add_page("Memory", memory_page)
    memory_page.controller = MemoryPageController(memory_page, env.core, env.bridge)
    dialog.show_page("Memory")

    async def body():
        await show(memory_page, workspace.id)
        memory_page.editor.text_edit.setPlainText("- edited\n")
        dialog.reject()
        await answer("Cancel", containing="unsaved edits")
        assert dialog.isVisible()
        assert memory_page.editor.text == "- edited\n"

        dialog.close()
        await answer("Discard", containing="unsaved edits")
        assert not dialog.isVisible()
        assert env.stored(workspace.id).content == "- fact\n"

    run(qloop, body())


def test_the_memory_page_is_a_settings_page(env, page, qtbot, qloop):
    """As a Settings page: ``changed`` is emitted when the editor gains or loses unsaved edits,
    ``apply()`` saves them as Save does, and ``load()`` shows the stored document again."""
    workspace = env.workspace("proj", "- fact\n")
    changes: list[bool] = []
    page.changed.connect(lambda: changes.append(page.has_unsaved_changes()))

    async def body():
        await show(page, workspace.id)
        changes.clear()
        type_at_end(page, qtbot, "- more")
        assert changes == [True]  # once, not per key
        page.apply()
        await page.controller.tasks.drain()
        assert env.stored(workspace.id).content == "- fact\n- more"
        assert changes == [True, False]
        type_at_end(page, qtbot, "!")
        page.load()
        assert page.editor.text == "- fact\n- more"
        assert changes == [True, False, True, False]
        assert page.title == "Memory"

    run(qloop, body())


def test_ctrl_s_saves(env, page, qtbot, qloop):
    """Ctrl+S in the editor saves like the Save button."""
    workspace = env.workspace("proj", "- a\n")

    async def body():
        await show(page, workspace.id)
        assert page.editor.save_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Save)
        page.activateWindow()
        page.editor.text_edit.setFocus()
        page.editor.text_edit.setPlainText("- a\n- b\n")
        qtbot.keyClick(page.editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
        await page.controller.tasks.drain()
        assert env.stored(workspace.id).content == "- a\n- b\n"

    run(qloop, body())


def test_memory_off_for_a_workspace_is_stored_and_listed(env, page, qtbot, qloop):
    """Unticking "Use this memory" turns memory off for that workspace only."""
    workspace = env.workspace("proj", "- a\n")
    other = env.workspace("other", "- b\n")

    async def body():
        await show(page, workspace.id)
        assert page.editor.options.memory_enabled_box.isChecked()
        page.editor.options.memory_enabled_box.click()
        await page.controller.tasks.drain()
        assert env.get(workspace.id).memory_enabled is False
        assert env.get(other.id).memory_enabled is True
        row = page.model.row_of(workspace.id)
        assert page.model.index(row, 3).data() == "memory off"
        assert "Memory is off" in page.editor.message_label.text()

    run(qloop, body())


def test_revert_asks_before_dropping_unsaved_lines_and_can_be_undone(env, page, qtbot, qloop):
    """Revert with 250 unsaved lines asks first, naming how many lines it drops: Cancel keeps
    them; Revert shows the stored text, and Ctrl+Z in the editor brings the edits back (as
    unsaved edits). Nothing is stored either way."""
    workspace = env.workspace("proj", lines(3))
    edited = lines(3) + lines(250, prefix="new")

    async def body():
        await show(page, workspace.id)
        editor = page.editor
        editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
        editor.text_edit.insertPlainText(lines(250, prefix="new"))  # pasted
        typed = editor.text
        assert typed == edited

        qtbot.mouseClick(editor.revert_button, Qt.MouseButton.LeftButton)
        text = await answer("Cancel", containing="Revert drops your unsaved edits")
        assert "250 changed lines" in text
        assert editor.text == typed and editor.is_dirty()

        qtbot.mouseClick(editor.revert_button, Qt.MouseButton.LeftButton)
        await answer("Revert", containing="Revert drops your unsaved edits")
        assert editor.text == lines(3)
        assert not editor.is_dirty()
        assert "Ctrl+Z brings your edits back" in editor.message_label.text()

        editor.text_edit.setFocus()
        qtbot.keySequence(editor.text_edit, QKeySequence(QKeySequence.StandardKey.Undo))
        assert editor.text == typed
        assert editor.is_dirty()

    run(qloop, body())
    assert env.stored(workspace.id).content == lines(3)


def test_the_line_under_the_cursor_says_where_it_came_from(env, page, qtbot, qloop):
    """Moving the cursor onto a line shows its origin: a line typed by hand says "typed by you,
    v1", a line a refresh added names the conversation behind it, and a line typed now but not
    saved says so."""
    workspace = env.workspace("proj", lines(3))
    session = env.say(workspace.id, "Set up CI.", "Done.", title="Set up CI")
    refreshed = lines(3) + "- CI runs on every push\n"
    env.other.run(
        env.other.core.memory.apply_rewrite(
            workspace.id,
            refreshed,
            base_version=1,
            model="m",
            session_ids=(session,),
            watermarks={},
        )
    )

    async def body():
        await show(page, workspace.id)
        editor = page.editor
        cursor = editor.text_edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.Start)
        cursor.movePosition(cursor.MoveOperation.Down, n=1)
        editor.text_edit.setTextCursor(cursor)
        said = editor.origin_label.text()
        assert said.startswith("Line 2: typed by you, v1 · ")
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_Down)
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_Down)
        assert editor.origin_label.text().startswith(
            "Line 4: added by refresh v2 from 'Set up CI' · "
        )
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_End)
        qtbot.keyClicks(editor.text_edit, " and tags")
        assert editor.origin_label.text() == "Line 4: typed by you, not saved yet"

    run(qloop, body())


def test_the_review_box_sets_the_workspace_review_mode(env, page, qtbot, qloop):
    """Ticking "Review every rewrite…" stores review mode for the workspace (what `yak memory
    mode` prints); unticking it goes back to auto."""
    workspace = env.workspace("proj", lines(3))

    async def body():
        await show(page, workspace.id)
        box = page.editor.options.review_mode_box
        assert box.isEnabled() and not box.isChecked()
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        assert str(await env.core.memory.review_mode(workspace.id)) == "review"
        assert page.editor.message_label.text() == "Every rewrite now waits for your review."
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        assert str(await env.core.memory.review_mode(workspace.id)) == "auto"

    run(qloop, body())
