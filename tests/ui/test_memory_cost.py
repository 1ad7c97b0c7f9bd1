"""What the memory costs, shown in the window ("Cost" in docs/memory.md): the memory panel's
size in tokens beside its lines, and Settings › Memory's refreshes of the edited workspace over
the last 7 and 30 days, read from the stored attempts."""

from __future__ import annotations

from memory_support import lines, run, show

from yak.domain import RefreshOutcome, RefreshStatus, TokenUsage


def test_the_panel_shows_the_documents_size_in_tokens_beside_its_lines(env, ui, qloop):
    """150 lines, 1,542 characters: about 386 tokens (characters / 4), marked as an
    estimate; a folder without memory shows no figure."""
    window, controller = ui
    env.workspace("proj", lines(150))
    env.folder("empty")

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        panel = window.memory_panel
        assert panel.lines_label.text() == "150 / 200 lines"
        assert len(lines(150)) == 1_542
        assert panel.tokens_label.text() == "· ≈386 tokens"
        assert "estimate" in panel.tokens_label.toolTip()
        assert panel.tokens_label.isVisible()

        await controller.open_workspace(str(env.folder("empty")))
        assert panel.lines_label.text() == "0 / 200 lines"
        assert panel.tokens_label.text() == ""

    run(qloop, body())


def test_settings_memory_shows_the_refreshes_of_the_edited_workspace(env, page, qloop):
    """Two stored attempts of one workspace (one applied with a model call, one that found
    nothing to fold) read as its 7- and 30-day figures under the list; another workspace
    says it had no refreshes."""
    proj = env.workspace("proj", lines(3))
    quiet = env.workspace("quiet", lines(2))
    usage = TokenUsage(
        input_tokens=1_200,
        output_tokens=40,
        cache_creation_input_tokens=3_000,
        cache_read_input_tokens=4_000,
    )
    env.record_attempt(
        RefreshOutcome(RefreshStatus.APPLIED, "folded", proj.id, 2, 4, usage=usage),
        base_version=1,
    )
    env.record_attempt(
        RefreshOutcome(RefreshStatus.UP_TO_DATE, "nothing new", proj.id, 2, 4), base_version=2
    )

    async def body():
        await show(page, proj.id)
        await page.controller.tasks.drain()
        expected = (
            "2 refreshes, 1 model call · 8.2k tokens in (48% from cache), 40 out · "
            "1 applied, 1 up to date"
        )
        assert page.upkeep_label.text().splitlines() == [
            "Refreshes of proj",
            f"Last 7 days: {expected}",
            f"Last 30 days: {expected}",
        ]
        assert page.upkeep_label.isVisible()

        await show(page, quiet.id)
        assert page.upkeep_label.text().splitlines() == [
            "Refreshes of quiet",
            "Last 7 days: no refreshes",
            "Last 30 days: no refreshes",
        ]

    run(qloop, body())
