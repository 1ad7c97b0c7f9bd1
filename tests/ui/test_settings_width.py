"""Settings fits a small screen: the dialog with both pages, a workspace open in the memory
editor, needs no more than ``MAX_WIDTH_PX`` of width."""

from __future__ import annotations

from memory_support import run, show

from yak.ui.settings.dialog import SettingsDialog
from yak.ui.settings.memory_controller import MemoryPageController
from yak.ui.settings.memory_page import MemoryPage
from yak.ui.settings.provider_page import ProviderPage

MAX_WIDTH_PX = 900


def test_settings_with_both_pages_fits_in_900_pixels(env, qtbot, qloop):
    """Neither Settings › Memory (list, editor and its buttons) nor Settings › Provider asks
    for more than 900 px: the dialog's minimum width stays under it."""
    workspace = env.workspace("proj", "- fact\n")
    dialog = SettingsDialog()
    qtbot.addWidget(dialog)
    assert dialog.width() <= MAX_WIDTH_PX  # it opens at a size that fits
    memory_page = MemoryPage()
    dialog.add_page("Memory", memory_page)
    memory_page.controller = MemoryPageController(memory_page, env.core, env.bridge)
    dialog.add_page("Provider", ProviderPage(settings=env.core.settings, chat=env.core.chat))
    dialog.show_page("Memory")
    run(qloop, show(memory_page, workspace.id))
    widths = {
        "dialog": dialog.minimumSizeHint().width(),
        "memory": memory_page.minimumSizeHint().width(),
        "editor": memory_page.editor.minimumSizeHint().width(),
    }
    assert max(widths.values()) <= MAX_WIDTH_PX, widths


def test_the_memory_list_shows_whole_names_and_statuses_at_900_pixels(env, qtbot, qloop):
    """At the dialog's 900 px the list is not starved by the editor: a 24-letter folder name
    and the "not folded in yet" status are shown whole (their columns are wide enough for the
    text, as drawn in the list's font)."""
    workspace = env.workspace("customer-billing-service", "- fact\n")
    env.say(workspace.id, "How do we bill?", "Monthly.")
    dialog = SettingsDialog()
    qtbot.addWidget(dialog)
    memory_page = MemoryPage()
    dialog.add_page("Memory", memory_page)
    memory_page.controller = MemoryPageController(memory_page, env.core, env.bridge)
    dialog.add_page("Provider", ProviderPage(settings=env.core.settings, chat=env.core.chat))
    dialog.show_page("Memory")
    dialog.show()
    run(qloop, show(memory_page, workspace.id))
    table = memory_page.table
    model = table.model()
    row = next(r for r in range(model.rowCount()) if "customer" in model.index(r, 0).data())
    status = model.index(row, 3).data()
    assert status == "not folded in yet"
    metrics = table.fontMetrics()
    margin = 2 * table.style().pixelMetric(table.style().PixelMetric.PM_FocusFrameHMargin) + 4
    assert table.columnWidth(0) >= metrics.horizontalAdvance("customer-billing-service") + margin
    assert table.columnWidth(3) >= metrics.horizontalAdvance(status) + margin
    assert dialog.pages_list.width() < 110  # the page titles take no more than they need
