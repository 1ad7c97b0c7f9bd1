"""A memory line's age and the stale lines in the window ("Age and staleness" in
docs/memory.md): the panel's hover gives first said and last confirmed, the panel counts the
stale lines, and its review dialog keeps (confirms) or removes them. The document is written by
another process; its revisions are moved into the past in the SQLite file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory_support import run
from PySide6.QtCore import QDate, Qt

from tests.support.aging import age_revision
from tests.support.builders import seed_document

HAND = "- Lint with ruff before every commit."
OLD = "- The staging server is staging.example.org."
FRESH = "- Releases are cut on Fridays."


def _aged_workspace(env):
    """A person's line and a refresh's line, both 120 days old, and a refresh's line of
    yesterday."""
    workspace = env.workspace("proj", HAND + "\n")
    env.other.run(seed_document(env.other.core, workspace.id, f"{HAND}\n{OLD}\n"))
    env.other.run(seed_document(env.other.core, workspace.id, f"{HAND}\n{OLD}\n{FRESH}\n"))
    for version, days in ((1, 120), (2, 120), (3, 1)):
        age_revision(env.data_dir, version, days)
    return workspace


def _day(days: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).astimezone().date().isoformat()


def test_the_panel_counts_the_stale_lines_and_hovering_gives_their_age(env, ui, qloop):
    """One stale line (the refresh's old one, not the person's as old); the hover of the
    person's line ends with its first said and last confirmed dates."""
    window, controller = ui
    _aged_workspace(env)

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        await controller.tasks.drain()
        panel = window.memory_panel
        assert panel.stale_label.text() == "1 line not said or confirmed for a while"
        assert panel.stale_button.isVisible()
        assert panel.origin_at_line(0).endswith(
            f" · first said {_day(120)} · last confirmed {_day(120)}"
        )

    run(qloop, body())


def test_keeping_a_stale_line_in_the_dialog_confirms_it(env, ui, qtbot, qloop):
    """Review… lists the one line; Keep confirms it: the panel no longer counts it, the
    document is unchanged, and its hover says it was confirmed today."""
    window, controller = ui
    workspace = _aged_workspace(env)
    before = env.stored(workspace.id).content

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        await controller.tasks.drain()
        panel = window.memory_panel
        qtbot.mouseClick(panel.stale_button, Qt.MouseButton.LeftButton)
        dialog = controller.stale_review.dialog
        assert dialog is not None and dialog.lines_list.count() == 1
        assert dialog.lines_list.item(0).text().endswith(f"· aged · {OLD}")
        qtbot.mouseClick(dialog.keep_button, Qt.MouseButton.LeftButton)
        await controller.tasks.drain()
        assert not dialog.isVisible()
        assert not panel.stale_button.isVisible() and panel.stale_label.text() == ""
        assert panel.origin_at_line(1).split("\n")[0].endswith(f"last confirmed {_day(0)}")

    run(qloop, body())
    assert env.stored(workspace.id).content == before


def test_removing_a_stale_line_in_the_dialog_is_a_hand_removal(env, ui, qtbot, qloop):
    """Remove writes the document without the line, as a hand edit (the line tombstoned)."""
    window, controller = ui
    workspace = _aged_workspace(env)

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        await controller.tasks.drain()
        qtbot.mouseClick(window.memory_panel.stale_button, Qt.MouseButton.LeftButton)
        qtbot.mouseClick(controller.stale_review.dialog.remove_button, Qt.MouseButton.LeftButton)
        await controller.tasks.drain()

    run(qloop, body())
    assert env.stored(workspace.id).content == f"{HAND}\n{FRESH}\n"
    tombstones = env.other.run(env.other.core.memory.tombstones(workspace.id))
    assert [t.text for t in tombstones] == [OLD]


def test_the_history_window_goes_to_a_date(env, page, qtbot, qloop):
    """History's Go to date selects the version that was current at the end of that day:
    two days ago, version 2 (written 120 days ago); 200 days ago, none, said under the table."""
    from memory_support import show

    workspace = _aged_workspace(env)

    async def body():
        await show(page, workspace.id)
        qtbot.mouseClick(page.editor.history_button, Qt.MouseButton.LeftButton)
        await page.controller.tasks.drain()
        dialog = page.controller.history_dialog
        dialog.as_of_edit.setDate(QDate.fromString(_day(2), "yyyy-MM-dd"))
        qtbot.mouseClick(dialog.as_of_button, Qt.MouseButton.LeftButton)
        assert dialog.selected_revision().version == 2
        dialog.as_of_edit.setDate(QDate.fromString(_day(200), "yyyy-MM-dd"))
        qtbot.mouseClick(dialog.as_of_button, Qt.MouseButton.LeftButton)
        assert dialog.selected_revision() is None
        assert dialog.diff_label.text() == f"The memory was not written yet on {_day(200)}."

    run(qloop, body())
