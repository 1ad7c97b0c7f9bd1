"""The scope notice above the chat, driven by the app controller on a real database: a
subfolder of a workspace with a memory (use the parent's, copy it here, dismiss) and a renamed
folder whose memory was left behind (use it, not this one). Widget texts and stored bytes."""

from __future__ import annotations

import shutil

from memory_support import lines, run
from PySide6.QtCore import Qt

from tests.support import until
from tests.support.builders import git_worktree
from yak.domain import RevisionSource


def click(qtbot, button):
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_a_subfolder_shows_the_enclosing_memory_and_can_use_it(env, ui, qloop, qtbot):
    """Opening ``proj/backend`` (no memory of its own) shows the notice naming ``proj`` and its
    50 lines; "Use the parent's memory" makes the window work in ``proj``: its title, its
    document in the panel, and the notice gone."""
    window, controller = ui
    env.workspace("proj", lines(50))
    backend = env.folder("proj/backend")
    notice = window.scope_notice

    async def body():
        await controller.open_workspace(str(backend))
        assert notice.isVisible()
        assert notice.text_label.text() == (
            f"backend has no memory of its own. The enclosing workspace proj "
            f"({env.folder('proj')}) has a memory of 50 lines."
        )
        assert [b.text() for b in (notice.use_button, notice.second_button)] == [
            "Use the parent's memory",
            "Copy it here",
        ]
        assert notice.dismiss_button.isVisible()

        click(qtbot, notice.use_button)
        await until(lambda: window.workspace.name == "proj", what="the parent opened")
        await controller.tasks.drain()
        assert window.windowTitle().startswith("proj — ")
        assert window.memory_panel.document_view.toPlainText() == lines(50)
        assert not notice.isVisible()

    run(qloop, body())


def test_copy_it_here_gives_the_subfolder_its_own_document(env, ui, qloop, qtbot):
    """Copy it here stores the parent's bytes as the subfolder's version 1, a ``copy``
    revision flagged with where it came from; the panel shows it and the parent is untouched."""
    window, controller = ui
    parent = env.workspace("proj", lines(50))
    backend = env.folder("proj/backend")

    async def body():
        opened = await controller.open_workspace(str(backend))
        click(qtbot, window.scope_notice.second_button)
        await until(lambda: env.stored(opened.id).version == 1, what="the copy")
        await controller.tasks.drain()
        assert env.stored(opened.id).content == lines(50)
        (revision,) = env.history(opened.id)
        assert revision.source is RevisionSource.COPY
        assert revision.flags == (f"copied_from:{env.folder('proj')}",)
        await until(
            lambda: window.memory_panel.document_view.toPlainText() == lines(50),
            what="the panel showing the copy",
        )
        assert window.workspace.id == opened.id
        assert not window.scope_notice.isVisible()
        assert env.stored(parent.id).version == 1

        # Opened again, the subfolder has its own memory: nothing is offered.
        await controller.open_workspace(str(backend))
        assert not window.scope_notice.isVisible()
        await controller.tasks.drain()

    run(qloop, body())


def test_dismiss_hides_the_offer_for_this_window(env, ui, qloop, qtbot):
    """Dismiss hides the notice, writes nothing, and opening the subfolder again in the same
    window does not offer it again."""
    window, controller = ui
    env.workspace("proj", lines(50))
    backend = env.folder("proj/backend")

    async def body():
        opened = await controller.open_workspace(str(backend))
        click(qtbot, window.scope_notice.dismiss_button)
        assert not window.scope_notice.isVisible()
        await controller.open_workspace(str(env.folder("proj")))
        await controller.open_workspace(str(backend))
        assert not window.scope_notice.isVisible()
        assert env.stored(opened.id).content == ""
        await controller.tasks.drain()

    run(qloop, body())


def renamed(env):
    """``old/app`` had a 3-line memory and a conversation; the folder then moved to
    ``new/app``. Returns (old workspace, new folder)."""
    old = env.workspace("old/app", "- one\n- two\n- three\n")
    env.say(old.id, "How do we build?", "With make.")
    new = env.root / "new" / "app"
    new.parent.mkdir()
    shutil.move(env.folder("old/app"), new)
    return old, new


def test_a_renamed_folder_is_offered_its_old_memory_and_use_it_moves_it(env, ui, qloop, qtbot):
    """Opening the moved folder shows "This folder looks like …/old/app, which no longer
    exists and has a memory of 3 lines — use it?"; "Use it" moves the document and its
    conversation here: the panel shows it and the orphan is gone."""
    window, controller = ui
    old, new = renamed(env)
    notice = window.scope_notice

    async def body():
        opened = await controller.open_workspace(str(new))
        assert notice.text_label.text() == (
            f"This folder looks like {old.path}, which no longer exists and has a memory of "
            "3 lines — use it?"
        )
        assert [b.text() for b in (notice.use_button, notice.second_button)] == [
            "Use it",
            "Not this one",
        ]
        click(qtbot, notice.use_button)
        await until(lambda: env.stored(opened.id).version == 1, what="the re-attach")
        await controller.tasks.drain()
        await controller.memory_controller.tasks.drain()  # Settings' list reloads too
        assert env.stored(opened.id).content == "- one\n- two\n- three\n"
        assert window.memory_panel.document_view.toPlainText() == "- one\n- two\n- three\n"
        assert env.find(old.path) is None
        assert [s.title for s in await env.core.chat.sessions(opened.id)] == ["Chat"]
        assert not notice.isVisible()

    run(qloop, body())


def test_not_this_one_is_remembered(env, ui, qloop, qtbot):
    """Not this one hides the offer, keeps the orphan's memory where it was, and opening the
    folder again (in this window or any) does not offer it again."""
    window, controller = ui
    old, new = renamed(env)

    async def body():
        opened = await controller.open_workspace(str(new))
        click(qtbot, window.scope_notice.second_button)
        await controller.tasks.drain()
        assert not window.scope_notice.isVisible()
        await controller.open_workspace(str(new))
        assert not window.scope_notice.isVisible()
        assert await env.other.core.workspaces.renamed_from(str(new)) is None
        assert env.stored(old.id).content == "- one\n- two\n- three\n"
        assert env.stored(opened.id).content == ""

    run(qloop, body())


def test_a_worktree_is_offered_its_main_checkouts_memory(env, ui, qloop, qtbot):
    """Opening a git worktree (no memory of its own) whose main checkout has a 2-line memory
    shows "This folder is a git worktree of …/app, whose memory has 2 lines — share it here?";
    "Share its memory" links them: the panel shows the shared document, a hand save from the
    worktree lands in the main checkout's document, and the offer is gone."""
    window, controller = ui
    main_checkout, feature = git_worktree(env.root)
    main = env.workspace("app", "- build: make\n- tests: pytest\n")
    notice = window.scope_notice

    async def body():
        opened = await controller.open_workspace(str(feature))
        assert notice.text_label.text() == (
            f"This folder is a git worktree of {main_checkout}, whose memory has 2 lines — "
            "share it here?"
        )
        assert notice.use_button.text() == "Share its memory"
        assert notice.second_button.isHidden() and notice.dismiss_button.isVisible()
        click(qtbot, notice.use_button)
        await until(
            lambda: (
                window.memory_panel.document_view.toPlainText()
                == "- build: make\n- tests: pytest\n"
            ),
            what="the shared document in the panel",
        )
        await controller.tasks.drain()
        await env.core.memory.save(opened.id, "- build: make\n", expected_version=1)
        assert env.stored(main.id).content == "- build: make\n"
        assert not notice.isVisible()
        await controller.open_workspace(str(feature))
        assert not notice.isVisible()

    run(qloop, body())
