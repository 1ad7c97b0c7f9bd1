"""The Settings memory page's history, import, export and delete, driven like a user would,
against a real database.

Each test asserts what the user sees (the history's tables and diff, the editor's text and
messages) and what is stored or written, byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from memory_support import answer, lines, run, show
from PySide6.QtCore import Qt

from tests.support import until
from yak.domain import RefreshOutcome, RefreshStatus, RevisionSource, TokenUsage

RED = "#b00020"
GREEN_BG, RED_BG, GREY = "#dafbe1", "#ffebe9", "#eaeef2"  # diff lines: added, removed, hunk


def test_history_restore_makes_the_old_text_current_as_a_new_revision(env, page, qtbot, qloop):
    """History lists the revisions with their source; the diff compares the selected one with
    the current text; Restore makes it current as a new ``restore`` revision."""
    workspace = env.workspace("proj", "- first\n")
    env.write_from_another_process(workspace.id, "- second\n")

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.history_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        dialog = page.controller.history_dialog
        assert dialog is not None and dialog.isVisible()
        table = dialog.revisions_table
        assert table.rowCount() == 2
        assert [table.item(r, 0).text() for r in range(2)] == ["2", "1"]
        assert table.item(0, 1).text() == "Hand edit"
        assert table.item(1, 2).text() == "1"  # lines
        assert [table.item(r, 4).text() for r in range(2)] == ["+1 −1", "+1 −0"]  # change

        dialog.select_revision(1)
        # Coloured lines with a spaced marker: the document's own dash stays readable.
        assert dialog.diff_view.rows() == [
            ("@@ -1 +1 @@", GREY),
            ("− - first", RED_BG),
            ("+ - second", GREEN_BG),
        ]
        assert "Version 1 (hand edit" in dialog.diff_label.text()
        qtbot.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()

        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == ("- first\n", 3)
        newest = env.history(workspace.id)[0]
        assert newest.source == RevisionSource.RESTORE
        assert page.editor.text == "- first\n"
        assert "Restored as version 3" in page.editor.message_label.text()
        assert dialog.revisions_table.rowCount() == 3
        assert dialog.revisions_table.item(0, 1).text() == "Restore"

    run(qloop, body())


def test_history_after_a_restore_names_the_versions_and_compares_with_the_one_before(
    env, page, qtbot, qloop
):
    """After version 2 was restored as version 4, History says version 2 has the same text as
    the current version 4 (not "is the current text"); "Against the version before it" shows
    what a revision changed."""
    workspace = env.workspace("proj", "- first\n")
    env.write_from_another_process(workspace.id, "- first\n- second\n")
    env.write_from_another_process(workspace.id, "- third\n")
    version_2 = next(r for r in env.history(workspace.id) if r.version == 2)
    env.other.run(env.other.core.memory.restore(workspace.id, version_2.id, expected_version=None))

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.history_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        dialog = page.controller.history_dialog
        dialog.select_revision(4)
        assert dialog.diff_label.text() == "Version 4 is the current version."
        dialog.select_revision(2)
        assert dialog.diff_label.text() == "Version 2 has the same text as the current version 4."
        assert not dialog.restore_button.isEnabled()

        dialog.compare_combo.setCurrentIndex(
            dialog.compare_combo.findText("Against the version before it")
        )
        assert dialog.diff_label.text() == (
            "Version 2 (hand edit, + green) against version 1 before it (− red)."
        )
        assert [text for text, _colour in dialog.diff_view.rows()] == [
            "@@ -1 +1,2 @@",
            "  - first",
            "+ - second",
        ]
        dialog.select_revision(1)
        assert dialog.diff_label.text() == (
            "Version 1 (hand edit, + green) against an empty document before it (− red)."
        )
        dialog.close()

    run(qloop, body())


@pytest.mark.parametrize(
    ("name_filter", "title"),
    [
        ("Plain text (*.txt)", ""),
        ("Markdown (*.md)", "# Yak memory: proj\n\n"),
    ],
)
def test_export_writes_the_bytes_the_editor_shows(
    env, page, qtbot, qloop, tmp_path, name_filter, title
):
    """Export… (save dialog with a format) writes exactly the editor's text as UTF-8 (under a
    title line for Markdown)."""
    text = "- café ☕ naïve\n- second line\n\n- after a blank line\n"
    workspace = env.workspace("proj", text)
    target = tmp_path / "out" / "memory-export"
    target.parent.mkdir()

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.export_button, Qt.MouseButton.LeftButton)
        dialog = page.file_dialog
        assert dialog is not None and dialog.isVisible()
        dialog.selectNameFilter(name_filter)
        dialog.filterSelected.emit(name_filter)
        dialog.selectFile(str(target))
        dialog.accept()
        await page.controller.tasks.drain()
        written = list(target.parent.iterdir())
        assert len(written) == 1
        assert written[0].read_bytes() == (title + page.editor.text).encode("utf-8")
        assert "Exported" in page.editor.message_label.text()

    run(qloop, body())


def test_delete_asks_then_empties_the_document_and_history_can_restore_it(env, page, qtbot, qloop):
    """Delete… asks for confirmation (Cancel deletes nothing), then empties the document as a
    ``clear`` revision that History can restore."""
    workspace = env.workspace("proj", "- keep me\n")

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.delete_button, Qt.MouseButton.LeftButton)
        await answer("Cancel", containing="Delete the memory")
        await page.controller.tasks.drain()
        assert env.stored(workspace.id).content == "- keep me\n"

        qtbot.mouseClick(page.editor.delete_button, Qt.MouseButton.LeftButton)
        await answer("Delete", containing="Delete the memory")
        await page.controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == ("", 2)
        assert env.history(workspace.id)[0].source == RevisionSource.CLEAR
        assert page.editor.text == ""
        assert "deleted" in page.editor.message_label.text()

    run(qloop, body())


def test_import_replaces_the_document_and_refuses_non_text(env, page, qtbot, qloop, tmp_path):
    """Import… reads a UTF-16 file with CRLF as the new version; bytes that are not text are
    refused with a message and the document is unchanged byte for byte."""
    workspace = env.workspace("proj", "- old\n")
    good = tmp_path / "notes.txt"
    good.write_bytes("- imported ☕\r\n- second\r\n".encode("utf-16"))
    bad = tmp_path / "binary.txt"
    bad.write_bytes(bytes(range(256)) * 4)

    async def pick(path) -> None:
        qtbot.mouseClick(page.editor.import_button, Qt.MouseButton.LeftButton)
        dialog = page.file_dialog
        dialog.selectFile(str(path))
        dialog.accept()
        await page.controller.tasks.drain()

    async def body():
        await show(page, workspace.id)
        await pick(bad)
        assert RED in page.editor.message_label.styleSheet()
        assert page.editor.message_label.text()
        stored = env.stored(workspace.id)
        assert (stored.content.encode(), stored.version) == (b"- old\n", 1)

        await pick(good)
        preview = page.controller.preview_dialog
        preview.replace_button.click()
        await page.controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert stored.content == "- imported ☕\n- second\n"
        assert page.editor.text == stored.content
        assert env.history(workspace.id)[0].source == RevisionSource.IMPORT

    run(qloop, body())


def test_import_shows_the_diff_and_asks_before_replacing(env, page, qtbot, qloop, tmp_path):
    """Import… of a file first shows what it would change: the summary (+1 −1 against version
    1), the diff with the removed and added lines, Cancel as the default button. Cancel (or
    Esc) keeps the document byte for byte and says so; Replace the memory stores the file's
    text as version 2. A file with the same text asks nothing."""
    workspace = env.workspace("proj", "- keep\n- old rule\n")
    new = tmp_path / "brief.txt"
    new.write_text("- keep\n- new rule\n")
    same = tmp_path / "same.txt"
    same.write_text("- keep\n- old rule\n")

    async def pick(path) -> None:
        qtbot.mouseClick(page.editor.import_button, Qt.MouseButton.LeftButton)
        page.file_dialog.selectFile(str(path))
        page.file_dialog.accept()
        await page.controller.tasks.drain()

    async def body():
        await show(page, workspace.id)
        await pick(new)
        preview = page.controller.preview_dialog
        assert preview.isVisible() and preview.windowTitle() == "Import brief.txt"
        assert preview.summary_label.text() == (
            "Importing brief.txt replaces version 1 of the memory: +1 −1 lines. "
            "History keeps the version replaced."
        )
        assert [text for text, _colour in preview.diff_view.rows()] == [
            "@@ -1,2 +1,2 @@",
            "  - keep",
            "− - old rule",
            "+ - new rule",
        ]
        assert preview.cancel_button.isDefault() and not preview.replace_button.isDefault()
        preview.cancel_button.click()
        await page.controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert (stored.content.encode(), stored.version) == (b"- keep\n- old rule\n", 1)
        assert page.editor.message_label.text() == "Not imported: the memory stays version 1."

        await pick(new)
        page.controller.preview_dialog.replace_button.click()
        await page.controller.tasks.drain()
        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == ("- keep\n- new rule\n", 2)
        assert page.editor.message_label.text() == f"Imported {new} as version 2."

        same.write_text("- keep\n- new rule\n")
        await pick(same)
        assert page.controller.preview_dialog is None
        assert page.editor.message_label.text() == (
            f"{same} has the same text as the memory; nothing changed."
        )
        assert env.stored(workspace.id).version == 2

    run(qloop, body())


def test_history_lists_refresh_attempts_and_opens_a_refused_reply(env, page, qtbot, qloop):
    """The Refresh attempts tab lists each attempt with its outcome and reason; a refused one's
    reply opens in the editor as unsaved edits (nothing stored until Save)."""
    workspace = env.workspace("proj", lines(150))
    reply = lines(12, prefix="collapsed")
    env.record_attempt(
        RefreshOutcome(
            status=RefreshStatus.REFUSED_FLOOR,
            workspace_id=workspace.id,
            version=1,
            lines=150,
            reason="the reply kept 12 of 150 lines (8%)",
            reply=reply,
            model="claude-haiku-4-5",
            usage=TokenUsage(1200, 80),
            duration_s=1.5,
        ),
        base_version=1,
    )

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.history_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        dialog = page.controller.history_dialog
        table = dialog.attempts_table
        assert table.rowCount() == 1
        assert [table.item(0, c).text() for c in (1, 2, 3, 4, 5)] == [
            "Refused: too short",  # a label, not the stored code
            "the reply kept 12 of 150 lines (8%)",
            "claude-haiku-4-5",
            "1,200 / 80",
            "1.5 s",
        ]
        assert dialog.reply_view.toPlainText() == reply
        qtbot.mouseClick(dialog.open_reply_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        assert page.editor.text == reply
        assert page.editor.is_dirty()
        assert env.stored(workspace.id).content == lines(150)

    run(qloop, body())


def test_history_diff_is_coloured_and_shows_the_text_as_written(env, page, qtbot, qloop):
    """The revision diff colours added lines green and removed ones red with grey hunk headers;
    unchanged neighbours are uncoloured; markup-like text shows literally."""
    old = "".join(f"- note {i}\n" for i in range(1, 9))
    new = old.replace("- note 5\n", "- note 5 <b>bold?</b> & more\n").replace("- note 8\n", "")
    workspace = env.workspace("proj", old)
    env.write_from_another_process(workspace.id, new)

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.history_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        dialog = page.controller.history_dialog
        dialog.select_revision(1)
        assert dialog.diff_view.rows() == [
            ("@@ -2,7 +2,6 @@", GREY),
            ("  - note 2", None),
            ("  - note 3", None),
            ("  - note 4", None),
            ("− - note 5", RED_BG),
            ("+ - note 5 <b>bold?</b> & more", GREEN_BG),
            ("  - note 6", None),
            ("  - note 7", None),
            ("− - note 8", RED_BG),
        ]
        assert dialog.diff_view.isReadOnly()
        dialog.select_revision(2)  # the current text: shown as is, uncoloured
        assert dialog.diff_view.toPlainText() == new
        assert {colour for _line, colour in dialog.diff_view.rows()} == {None}

    run(qloop, body())


def test_history_attempt_columns_show_the_model_whole(env, page, qtbot, qloop):
    """With a long reason, the Refresh attempts table still shows the model, tokens and duration
    whole inside the dialog; the reason takes the room left and its tooltip has all of it."""
    workspace = env.workspace("proj", lines(150))
    reason = (
        "the reply kept 12 of 150 lines (8%), under the floor of 50%; the document is "
        "unchanged and the reply is kept with this attempt so it can be opened "
    ) * 2
    env.record_attempt(
        RefreshOutcome(
            status=RefreshStatus.REFUSED_FLOOR,
            workspace_id=workspace.id,
            version=1,
            lines=150,
            reason=reason,
            reply=lines(12),
            model="claude-haiku-4-5-20251001",
            usage=TokenUsage(12000, 800),
            duration_s=3.25,
        ),
        base_version=1,
    )

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.history_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        dialog = page.controller.history_dialog
        dialog.tabs.setCurrentIndex(1)
        table = dialog.attempts_table
        await until(lambda: table.isVisible(), what="the attempts tab")
        header = table.horizontalHeader()
        for column in (3, 4, 5):  # Model, Tokens, Duration: wide enough for their text
            assert table.columnWidth(column) >= table.sizeHintForColumn(column)
            assert table.columnWidth(column) >= header.sectionSizeHint(column)
        right_edge = sum(table.columnWidth(c) for c in range(table.columnCount()))
        assert right_edge <= table.viewport().width()
        assert table.columnWidth(2) < table.sizeHintForColumn(2)  # the reason is elided…
        assert table.item(0, 2).toolTip() == reason  # …and whole in its tooltip

    run(qloop, body())


def test_refresh_attempts_that_waited_show_what_became_of_their_proposal(env, page, qtbot, qloop):
    """Refresh attempts that waited for review, decided since: History › Refresh attempts says
    accepted → version N, rejected, superseded by which proposal, never "Awaiting review"
    (the outcome read from the database, "The inbox" in docs/memory.md)."""
    workspace = env.workspace("proj", "- first\n")
    core = env.core
    review = core.review

    async def propose(text: str) -> str:
        base = await core.memory.read(workspace.id)
        outcome = RefreshOutcome(
            workspace_id=workspace.id,
            status=RefreshStatus.NEEDS_REVIEW,
            reason="a hand line would change",
            version=base.version,
            lines=1,
        )
        proposal = await review.propose(
            workspace.id,
            text,
            base_version=base.version,
            reasons=("a hand line would change",),
            model=None,
            session_ids=(),
            watermarks={},
        )
        await core.memory.record_attempt(
            replace(outcome, proposal_id=proposal.id), base_version=base.version
        )
        return proposal.id

    async def body():
        first = await propose("- second\n")
        second = await propose("- third\n")  # supersedes the first
        await review.accept(workspace.id, second)
        third = await propose("- fourth\n")
        await review.reject(workspace.id, third)
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.history_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        dialog = page.controller.history_dialog
        table = dialog.attempts_table
        assert [table.item(r, 1).text() for r in range(table.rowCount())] == [
            "Rejected",
            "Accepted → version 2",
            f"Superseded by proposal {second[:12]}",
        ]
        assert first != second

    run(qloop, body())


def test_export_to_a_json_name_writes_json_that_import_takes_back(
    env, page, qtbot, qloop, tmp_path
):
    """Export… to ``mem.json`` with the file type left at Plain text writes Yak's JSON export
    (the name decides, as ``yak memory export -o mem.json`` does), and Import… of that file
    brings the text back. Export first proposes a folder outside the project; both dialogs
    then open where they were last used."""
    text = "- build with make\n- café ☕\n"
    workspace = env.workspace("proj", text)
    exports = tmp_path / "exports"
    exports.mkdir()
    target = exports / "mem.json"

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.export_button, Qt.MouseButton.LeftButton)
        dialog = page.file_dialog
        assert dialog.selectedNameFilter() == "Plain text (*.txt)"
        first_folder = dialog.directory().absolutePath()
        assert not first_folder.startswith(workspace.path)
        dialog.selectFile(str(target))
        dialog.accept()
        await page.controller.tasks.drain()
        exported = json.loads(target.read_bytes())
        assert exported["content"] == text
        assert "(json)" in page.editor.message_label.text()

        await env.core.memory.save(workspace.id, "- something else\n", expected_version=None)
        await until(lambda: page.editor.text == "- something else\n", what="the new text")
        qtbot.mouseClick(page.editor.import_button, Qt.MouseButton.LeftButton)
        dialog = page.file_dialog
        dialog.selectFile(str(target))
        dialog.accept()
        await page.controller.tasks.drain()
        page.controller.preview_dialog.replace_button.click()
        await page.controller.tasks.drain()
        assert env.stored(workspace.id).content == text
        assert page.editor.message_label.text().startswith(f"Imported {target} as version")

        for button in (page.editor.export_button, page.editor.import_button):
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
            assert page.file_dialog.directory().absolutePath() == str(exports)
            page.file_dialog.reject()

    run(qloop, body())


@pytest.mark.parametrize(
    ("name", "chosen", "fmt"),
    [
        ("mem.json", "text", "json"),
        ("mem.MD", "text", "markdown"),
        ("mem.markdown", "json", "markdown"),
        ("mem.txt", "markdown", "text"),
        ("mem.notes", "markdown", "markdown"),
        ("mem", "json", "json"),
    ],
)
def test_the_export_format_follows_the_name_then_the_file_type(name, chosen, fmt):
    from yak.ui.settings.memory_page import export_format

    assert export_format(f"/tmp/x/{name}", chosen) == fmt
