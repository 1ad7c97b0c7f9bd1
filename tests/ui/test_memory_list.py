"""The Settings memory list: orphaned workspaces and re-attach, filtering, and a list of 10,000
workspaces served by the table model (no widget per row)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta

import pytest
from memory_support import answer, run
from PySide6.QtCore import Qt

from yak.domain import MemorySummary, Workspace
from yak.paths import workspace_id_for
from yak.ui.settings.memory_controller import MemoryPageController
from yak.ui.settings.memory_page import ORPHANED, MemoryListModel, MemoryPage


@pytest.fixture
def page(env, qtbot):
    memory_page = MemoryPage()
    qtbot.addWidget(memory_page)
    memory_page.controller = MemoryPageController(memory_page, env.service, env.bridge)
    memory_page.show()
    return memory_page


def cell(model: MemoryListModel, workspace_id: str, column: int) -> str:
    return model.index(model.row_of(workspace_id), column).data()


def test_an_orphaned_workspace_is_marked_and_can_be_re_attached(env, page, qtbot, qloop):
    """A memory whose folder is gone shows the *orphaned* marker (a live one does not);
    Re-attach… moves it to another folder, where it is found with its text and history."""
    gone = env.workspace("old-name", "- remembered fact\n")
    alive = env.workspace("alive", "- other fact\n")
    shutil.rmtree(env.folder("old-name"))
    new_home = env.folder("new-name")

    async def body():
        page.controller.reload()
        await page.controller.tasks.drain()
        model = page.model
        assert cell(model, gone.id, 3) == ORPHANED
        assert cell(model, alive.id, 3) == ""
        assert "no longer exists" in model.index(model.row_of(gone.id), 0).data(
            Qt.ItemDataRole.ToolTipRole)

        page.select_workspace(alive.id)
        await page.controller.tasks.drain()
        assert not page.reattach_button.isEnabled()
        page.select_workspace(gone.id)
        await page.controller.tasks.drain()
        assert page.reattach_button.isEnabled()
        assert page.editor.text == "- remembered fact\n"  # an orphan can still be read

        qtbot.mouseClick(page.reattach_button, Qt.MouseButton.LeftButton)
        dialog = page.file_dialog
        assert dialog is not None and dialog.isVisible()
        dialog.selectFile(str(new_home))
        dialog.accept()
        await page.controller.tasks.drain()

        moved = env.store.find_workspace(str(new_home))
        assert moved is not None and moved.id == workspace_id_for(str(new_home.resolve()))
        assert env.stored(moved.id).content == "- remembered fact\n"
        assert [r.content for r in env.store.history(moved.id)] == ["- remembered fact\n"]
        assert page.model.row_of(gone.id) is None
        assert cell(page.model, moved.id, 0) == str(new_home.resolve())
        assert cell(page.model, moved.id, 3) == ""
        assert page.editor.workspace.id == moved.id
        assert "Re-attached" in page.editor.message_label.text()

    run(qloop, body())


def test_re_attach_to_a_folder_with_its_own_memory_says_why_and_changes_nothing(
        env, page, qtbot, qloop):
    """Re-attaching onto a folder that already has a memory is refused with a sentence."""
    gone = env.workspace("old-name", "- remembered fact\n")
    taken = env.workspace("taken", "- its own memory\n")
    shutil.rmtree(env.folder("old-name"))

    async def body():
        page.controller.reload()
        await page.controller.tasks.drain()
        page.select_workspace(gone.id)
        await page.controller.tasks.drain()
        qtbot.mouseClick(page.reattach_button, Qt.MouseButton.LeftButton)
        page.file_dialog.selectFile(str(env.folder("taken")))
        page.file_dialog.accept()
        text = await answer("OK", containing="already has its own memory")
        assert "taken" in text
        await page.controller.tasks.drain()
        assert env.stored(taken.id).content == "- its own memory\n"
        assert env.stored(gone.id).content == "- remembered fact\n"

    run(qloop, body())


def summaries(count: int) -> list[MemorySummary]:
    base = datetime(2025, 1, 1, tzinfo=UTC)
    result = []
    for i in range(count):
        path = f"/home/dev/projects/p{i:05d}"
        workspace = Workspace(id=workspace_id_for(path), path=path, created_at=base)
        result.append(MemorySummary(workspace=workspace, version=1, lines=i % 200, chars=i,
                                    updated_at=base + timedelta(minutes=i), flags=(),
                                    orphaned=i % 1000 == 0))
    return result


def test_ten_thousand_workspaces_fill_the_table_model_and_filter(qtbot):
    """10,000 workspaces are rows of one table model (not 10,000 widgets); the filter narrows
    them and sorting by lines orders them."""
    page = MemoryPage()
    qtbot.addWidget(page)
    page.set_summaries(summaries(10_000))
    assert page.model.rowCount() == 10_000
    assert page.count_label.text() == "10,000 workspaces"
    assert page.table.findChildren(type(page.reattach_button)) == []
    assert page.model.index(9_999, 0).data() == "/home/dev/projects/p09999"
    assert page.model.index(0, 3).data() == ORPHANED

    page.filter_edit.setText("p0999")
    assert page.model.rowCount() == 10  # p09990 … p09999
    assert page.count_label.text() == "10 of 10,000 workspaces"
    page.filter_edit.clear()
    page.model.sort(1, Qt.SortOrder.DescendingOrder)
    assert page.model.index(0, 1).data() == "199"
