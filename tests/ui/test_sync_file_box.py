"""Settings › Memory's "Keep AGENTS.md in sync" box and the window's line when a kept file
cannot be written, on a real database: the file's bytes, the stored setting, the widget texts."""

from __future__ import annotations

from memory_support import run, show
from PySide6.QtCore import Qt

from tests.support import until

OUTSIDE = "# Rules\n\nAlways run make lint\n"
BOX_TEXT = "Keep AGENTS.md in sync"


def block(document):
    return f"<!-- yak:memory -->\n{document}<!-- /yak:memory -->\n"


def test_ticking_the_box_writes_agents_md_and_keeps_it_in_sync(env, page, qtbot, qloop):
    """The box reads "Keep AGENTS.md in sync …", unticked; ticking it writes the block into the
    workspace's AGENTS.md now (the user's lines kept) and stores the setting, so a save from
    another process rewrites the block too; unticking stops it and leaves the file."""
    workspace = env.workspace("proj", "- one\n")
    agents = env.folder("proj") / "AGENTS.md"
    agents.write_text(OUTSIDE)
    box = page.editor.options.sync_file_box

    async def body():
        await show(page, workspace.id)
        assert (box.text(), box.isChecked(), box.isEnabled()) == (BOX_TEXT, False, True)
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        assert agents.read_text() == OUTSIDE + "\n" + block("- one\n")
        assert page.editor.message_label.text() == (
            f"{agents} is kept in sync after every change (written now)."
        )
        assert env.get(workspace.id).synced_file == str(agents)
        assert box.isChecked()

        env.write_from_another_process(workspace.id, "- one\n- two\n")
        assert agents.read_text() == OUTSIDE + "\n" + block("- one\n- two\n")

        qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        assert env.get(workspace.id).synced_file is None
        assert page.editor.message_label.text() == (
            f"{agents} is no longer kept in sync; the file stays as it is."
        )
        env.write_from_another_process(workspace.id, "- three\n")
        assert agents.read_text() == OUTSIDE + "\n" + block("- one\n- two\n")

    run(qloop, body())


def test_a_file_that_cannot_be_written_is_said_and_nothing_is_kept(env, page, qtbot, qloop):
    """An AGENTS.md whose markers are broken: ticking says why in red, the box goes back to
    unticked, nothing is stored and the file is untouched."""
    workspace = env.workspace("proj", "- one\n")
    agents = env.folder("proj") / "AGENTS.md"
    broken = "<!-- /yak:memory -->\n<!-- yak:memory -->\n"
    agents.write_text(broken)
    box = page.editor.options.sync_file_box

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        assert page.editor.message_label.text().startswith(
            "the file's <!-- yak:memory --> … <!-- /yak:memory --> markers are not one block"
        )
        assert page.editor.message_label.property("error") is True
        assert not box.isChecked()
        assert env.get(workspace.id).synced_file is None
        assert agents.read_text() == broken

    run(qloop, body())


def test_the_window_says_when_a_kept_file_could_not_be_synced(env, ui, qloop):
    """A save in the window's workspace whose kept AGENTS.md had its markers broken since:
    the revision is stored and the status bar says the file could not be kept in sync."""
    window, controller = ui
    workspace = env.workspace("proj", "- one\n")
    agents = env.folder("proj") / "AGENTS.md"

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        await env.core.kept_file.keep_in_sync(workspace.id, str(agents))
        agents.write_text(agents.read_text() + "<!-- yak:memory -->\n")
        await env.core.memory.save(workspace.id, "- two\n", expected_version=1)
        await until(
            lambda: "could not be kept in sync" in window.statusBar().currentMessage(),
            what="the status line",
        )
        assert (
            window.statusBar()
            .currentMessage()
            .startswith(
                f"Memory version 2 is saved, but {agents} could not be kept in sync: the file's"
            )
        )
        assert env.stored(workspace.id).content == "- two\n"
        await controller.tasks.drain()  # the panel's reload of version 2 ends within the test

    run(qloop, body())


def test_the_window_says_a_kept_block_edited_by_hand_was_left(env, ui, qloop):
    """A save in the window's workspace whose kept AGENTS.md block was edited by hand since:
    the revision is stored, the file keeps the hand edit byte for byte, and the status bar
    says so."""
    window, controller = ui
    workspace = env.workspace("proj", "- one\n")
    agents = env.folder("proj") / "AGENTS.md"

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        await env.core.kept_file.keep_in_sync(workspace.id, str(agents))
        edited = agents.read_bytes().replace(b"- one\n", b"- one (and Ann's note)\n")
        agents.write_bytes(edited)
        await env.core.memory.save(workspace.id, "- two\n", expected_version=1)
        await until(
            lambda: "could not be kept in sync" in window.statusBar().currentMessage(),
            what="the status line",
        )
        said = window.statusBar().currentMessage()
        assert said.endswith(
            f"{agents}'s memory block holds text Yak did not write there (an edit by hand?), "
            "so nothing was written; move what you want to keep into the memory, then sync "
            "with --force to replace the block"
        )
        assert agents.read_bytes() == edited
        assert env.stored(workspace.id).content == "- two\n"
        await controller.tasks.drain()

    run(qloop, body())
