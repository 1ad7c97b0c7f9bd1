"""The Settings memory list: orphaned workspaces and re-attach, filtering, a list of 10,000
workspaces served by the table model (no widget per row), and a list that stays current while
it is open (new memories, refresh outcomes, relative times)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from memory_support import answer, lines, run
from PySide6.QtCore import Qt

from tests.support import until
from yak.domain import MemorySummary, RefreshOutcome, RefreshStatus, Workspace
from yak.paths import workspace_id_for
from yak.ui.settings.memory_list import ORPHANED, MemoryListModel, workspace_label
from yak.ui.settings.memory_page import MemoryPage


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
            Qt.ItemDataRole.ToolTipRole
        )

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

        moved = env.find(str(new_home))
        assert moved is not None and moved.id == workspace_id_for(str(new_home.resolve()))
        assert env.stored(moved.id).content == "- remembered fact\n"
        assert [r.content for r in env.history(moved.id)] == ["- remembered fact\n"]
        assert page.model.row_of(gone.id) is None
        assert cell(page.model, moved.id, 0) == workspace_label(str(new_home.resolve()))
        assert cell(page.model, moved.id, 0).startswith(f"{new_home.name} — ")
        assert cell(page.model, moved.id, 3) == ""
        assert page.editor.workspace.id == moved.id
        assert "Re-attached" in page.editor.message_label.text()

    run(qloop, body())


def test_re_attach_to_a_folder_with_its_own_memory_says_why_and_changes_nothing(
    env, page, qtbot, qloop
):
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
        text = await answer("OK", containing="has a memory history of its own")
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
        result.append(
            MemorySummary(
                workspace=workspace,
                version=1,
                lines=i % 200,
                chars=i,
                updated_at=base + timedelta(minutes=i),
                flags=(),
                orphaned=i % 1000 == 0,
            )
        )
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
    assert page.model.index(9_999, 0).data() == "p09999 — /home/dev/projects"
    assert page.model.index(0, 3).data() == ORPHANED

    page.filter_edit.setText("p0999")
    assert page.model.rowCount() == 10  # p09990 … p09999
    assert page.count_label.text() == "10 of 10,000 workspaces"
    page.filter_edit.clear()
    page.model.sort(1, Qt.SortOrder.DescendingOrder)
    assert page.model.index(0, 1).data() == "199"


def test_a_memory_created_by_another_program_appears_in_the_open_list(env, page, qloop):
    """With Settings open, a memory that ``yak memory set`` gives a new folder appears in the
    list as soon as the watcher notices it; the row being edited stays selected and the list
    stays scrolled where the user left it."""
    many = [env.workspace(f"proj{i:02d}", f"- fact {i}\n") for i in range(40)]
    edited = many[5]

    async def body():
        page.controller.reload()
        page.controller.show_workspace(edited.id)
        await page.controller.tasks.drain()
        await env.core.watcher.check_external_changes()  # the watcher's first step: learn versions
        scrollbar = page.table.verticalScrollBar()
        assert scrollbar.maximum() > 0
        scrollbar.setValue(scrollbar.maximum() // 2)
        position = scrollbar.value()
        assert page.count_label.text() == "40 workspaces"

        created = env.workspace("from-cli", "- written by yak memory set\n")  # the CLI
        assert await env.core.watcher.check_external_changes() == [created.id]
        await page.controller.tasks.drain()

        assert page.count_label.text() == "41 workspaces"
        assert cell(page.model, created.id, 0) == workspace_label(
            str(env.folder("from-cli").resolve())
        )
        assert cell(page.model, created.id, 1) == "1"
        assert page.selected_workspace_id() == edited.id
        assert page.editor.workspace.id == edited.id
        assert scrollbar.value() == position

    run(qloop, body())


def test_the_status_column_shows_the_last_refresh_and_follows_new_ones(env, page, qloop):
    """Status shows each workspace's last refresh outcome (its reason as the tooltip), "up to
    date" after an applied one or a later hand edit, and nothing when none was attempted; a
    finished refresh updates it while the list is open, without moving the selection."""
    refused = env.workspace("refused", lines(150))
    failed = env.workspace("failed", "- a\n")
    applied = env.workspace("applied", "- b\n")
    edited_after = env.workspace("edited-after", "- c\n")
    never = env.workspace("never", "- d\n")

    def attempt(workspace, status, reason):
        env.record_attempt(
            RefreshOutcome(
                status=status, workspace_id=workspace.id, version=1, lines=1, reason=reason
            ),
            base_version=1,
        )

    attempt(refused, RefreshStatus.REFUSED_FLOOR, "the reply kept 12 of 150 lines (8%)")
    attempt(failed, RefreshStatus.FAILED, "Anthropic is overloaded (529); try again later.")
    attempt(applied, RefreshStatus.APPLIED, "folded 2 messages from 1 conversation")
    attempt(edited_after, RefreshStatus.REFUSED_EMPTY, "the reply was empty")
    env.write_from_another_process(edited_after.id, "- c, edited by hand\n")

    async def body():
        page.controller.reload()
        page.controller.show_workspace(never.id)
        await page.controller.tasks.drain()
        model = page.model
        assert {
            w.name: cell(model, w.id, 3) for w in (refused, failed, applied, edited_after, never)
        } == {
            "refused": "refused: too short",  # a label, not a code
            "failed": "failed",
            "applied": "up to date",
            "edited-after": "up to date",
            "never": "",
        }
        tooltip = model.index(model.row_of(refused.id), 3).data(Qt.ItemDataRole.ToolTipRole)
        assert tooltip == "the reply kept 12 of 150 lines (8%)"

        # A retry succeeds while the list is open (nothing new to fold: no model call): the
        # row follows, the selection stays.
        outcome = await env.core.refresh.refresh_now(failed.id)
        assert outcome.status == RefreshStatus.UP_TO_DATE
        await until(lambda: cell(model, failed.id, 3) == "up to date", what="the new status")
        await page.controller.tasks.drain()
        assert cell(model, failed.id, 3) == "up to date"
        assert cell(model, refused.id, 3) == "refused: too short"
        assert page.selected_workspace_id() == never.id

    run(qloop, body())


def test_last_updated_is_re_rendered_while_the_list_is_open(env, qtbot, qloop):
    """ "Last updated" is not frozen at the time Settings opened: every 30 s while the page is
    shown the relative times are rendered again (the timer's slot is called here, not waited
    for); the timer stops while the page is hidden."""
    clock = {"now": datetime(2025, 6, 1, 12, 0, tzinfo=UTC)}
    page = MemoryPage(now=lambda: clock["now"])
    qtbot.addWidget(page)
    rows = summaries(3)
    rows = [replace(s, updated_at=clock["now"]) for s in rows]
    page.set_summaries(rows)
    page.show()
    assert page.times_timer.isActive() and page.times_timer.interval() == 30_000
    assert page.model.index(0, 2).data() == "just now"

    clock["now"] += timedelta(minutes=5)
    assert page.model.index(0, 2).data() == "just now"  # not re-rendered yet
    page._on_times_timer_timeout()
    assert [page.model.index(r, 2).data() for r in range(3)] == ["5 minutes ago"] * 3
    page.hide()
    assert not page.times_timer.isActive()


def test_the_workspace_column_is_the_widest_when_the_page_opens(env, page, qloop):
    """At the width Settings opens with, the Workspace column (the folder's name first) is the
    widest, so workspaces can be told apart; Status fits "refused" and Last updated "2 hours
    ago" (a longer status is elided, its tooltip whole)."""
    page.resize(900, 600)
    page.show()
    table = page.table
    metrics = table.fontMetrics()
    assert table.columnWidth(0) > max(table.columnWidth(c) for c in (1, 2, 3))
    assert table.columnWidth(3) > metrics.horizontalAdvance("refused")
    assert table.columnWidth(2) > metrics.horizontalAdvance("2 hours ago")


def test_the_filter_finds_text_inside_the_documents_too(env, page, qtbot, qloop):
    """Typing a word that only a document contains (not any folder name) lists that workspace,
    beside those whose folder name matches; the count says so; clearing the filter shows all."""
    api = env.workspace("api", "API service\n- db: PostgreSQL 16\n")
    web = env.workspace("web", "Web app\n- uses Postgres via the api\n")
    docs = env.workspace("docs", "Docs site\n- mkdocs\n")
    pg = env.workspace("postgres-tools", "Scripts\n")

    async def body():
        page.controller.reload()
        await page.controller.tasks.drain()
        assert page.model.rowCount() == 4
        page.filter_edit.setText("POSTGRES")
        assert {page.model.summary_at(r).workspace.id for r in range(page.model.rowCount())} == {
            pg.id
        }  # the folder match at once, the documents once the search answers
        await until(lambda: page.model.rowCount() == 3, what="the document matches")
        shown = {page.model.summary_at(r).workspace.id for r in range(page.model.rowCount())}
        assert shown == {api.id, web.id, pg.id} and docs.id not in shown
        assert page.count_label.text() == "3 of 4 workspaces"
        page.filter_edit.clear()
        assert page.model.rowCount() == 4

    run(qloop, body())


def test_the_filter_says_plain_scan_when_the_database_has_no_index(env, page, qtbot, qloop):
    """In a database without the full-text index (a SQLite without FTS5), the filter still
    lists the workspaces whose document contains the text, and the count line says
    "(plain scan)"; the indexed search above says nothing of the kind."""
    from tests.support import drop_search_index

    api = env.workspace("api", "API service\n- db: PostgreSQL 16\n")
    env.workspace("docs", "Docs site\n- mkdocs\n")
    drop_search_index(env.core.data_dir / "yak.db")

    async def body():
        page.controller.reload()
        await page.controller.tasks.drain()
        page.filter_edit.setText("postgres")
        await until(lambda: page.model.rowCount() == 1, what="the document match")
        assert page.model.summary_at(0).workspace.id == api.id
        assert page.count_label.text() == "1 of 2 workspaces (plain scan)"
        page.filter_edit.clear()
        assert page.count_label.text() == "2 workspaces"

    run(qloop, body())


def test_a_workspace_with_a_change_waiting_says_so_until_it_is_decided(env, page, qloop):
    """The Status cell of a workspace with a change waiting for review says "1 change waiting
    for you" (how to review it in the tooltip), though its last refresh applied ("up to date"
    before); a workspace without one still says "up to date"; once the change is rejected
    the cell follows, the list open."""
    waiting = env.workspace("waiting", "- a\n")
    other = env.workspace("other", "- b\n")
    for workspace in (waiting, other):
        env.record_attempt(
            RefreshOutcome(
                status=RefreshStatus.APPLIED,
                workspace_id=workspace.id,
                version=1,
                lines=1,
                reason="folded 2 messages from 1 conversation",
            ),
            base_version=1,
        )
    proposal = env.propose(waiting.id, "- a\n- a2\n")

    async def body():
        page.controller.reload()
        await page.controller.tasks.drain()
        model = page.model
        assert cell(model, waiting.id, 3) == "1 change waiting for you"
        tooltip = model.index(model.row_of(waiting.id), 3).data(Qt.ItemDataRole.ToolTipRole)
        assert tooltip == "Review them in the memory panel (Review…) or with yak memory review."
        assert cell(model, other.id, 3) == "up to date"

        await env.core.review.reject(waiting.id, proposal.id)
        await until(lambda: cell(model, waiting.id, 3) == "up to date", what="the new status")
        assert cell(model, other.id, 3) == "up to date"

    run(qloop, body())
