"""Memory refreshes without an API key: automatic ones pause (no call, no failed attempt, no
watermark moved) and the panel says so calmly with a way to add a key; a forced one still
reports the failure, as advice; adding a key resumes the paused workspaces.

The core's refresh queue has its timers fired by hand; refreshes run the real refresher and the
real ``anthropic`` client against the fake Messages API on 127.0.0.1. Whether a key exists is
what ``ANTHROPIC_API_KEY`` says (the tests' OS keyring stores nothing)."""

from __future__ import annotations

from memory_support import lines, run
from PySide6.QtCore import Qt

from tests.support import until
from tests.support.fake_api import text
from yak.domain import RefreshOutcome, RefreshStatus
from yak.events import RefreshStateChanged
from yak.presenters import PAUSED_TEXT, UNFOLDED_TEXT
from yak.ui.controller import AppController
from yak.ui.main_window import MainWindow
from yak.ui.settings.memory_controller import MemoryPageController
from yak.ui.settings.memory_page import MemoryPage

RED = "#b00020"
NO_KEY = "No Anthropic API key is set. Set ANTHROPIC_API_KEY or add a key in Settings › Provider."
KEY_ENV = "ANTHROPIC_API_KEY"


def add_conversation(env, workspace_id: str) -> None:
    """One user and one assistant message in a new session of the workspace (unfolded)."""
    env.say(
        workspace_id,
        "We build with make, not cmake.",
        "Noted: make is the build tool.",
        title="Build setup",
    )


class Ui:
    """The main window and its controller on the core; the panel counts down on the queue's
    clock."""

    def __init__(self, env, qtbot) -> None:
        self.window = MainWindow()
        qtbot.addWidget(self.window)
        self.controller = AppController(window=self.window, core=env.core, bridge=env.bridge)
        self.panel = self.window.memory_panel
        self.panel.clock = env.timers.clock
        self.window.show()


def test_without_a_key_automatic_refreshes_pause_and_a_new_key_resumes_them(
    env, qtbot, qloop, fake_api, monkeypatch
):
    """At start without a key, a workspace with unfolded messages is not refreshed: no call, no
    attempt recorded, no timer armed, the watermark and the document unchanged byte for byte.
    The panel says "refresh paused: no API key …" in the normal text colour with Add key…, which
    opens Settings › Provider. Once a key is added the workspace is enqueued and runs once."""
    monkeypatch.delenv(KEY_ENV)
    workspace = env.workspace("proj", lines(3))
    quiet = env.workspace("quiet", "- nothing new here\n")
    add_conversation(env, workspace.id)
    before = env.stored(workspace.id)
    refresh = env.core.refresh
    ui = Ui(env, qtbot)
    panel = ui.panel
    settings = ui.controller.memory_controller

    def listed_status(workspace_id: str) -> str:
        model = ui.controller.memory_page.model
        return model.index(model.row_of(workspace_id), 3).data()

    async def body():
        await ui.controller.open_workspace(str(env.folder("proj")))
        ui.controller.open_settings()  # the Settings list is open meanwhile
        await settings.tasks.drain()
        # What the app does at start: check the key, enqueue the unfolded ones.
        assert await refresh.enqueue_unfolded() == [workspace.id]
        assert refresh.key_available is False
        await ui.controller.tasks.drain()
        await until(lambda: listed_status(workspace.id) == "paused", what="the paused row")
        await settings.tasks.drain()
        assert listed_status(workspace.id) == "paused"
        assert listed_status(quiet.id) == ""

        assert panel.status_label.text() == PAUSED_TEXT
        assert RED not in panel.status_label.styleSheet()
        assert panel.status_label.styleSheet() == ""
        assert panel.action_button.isVisible() and panel.action_button.text() == "Add key…"
        assert env.timers.armed() == []  # nothing will run
        assert fake_api.message_requests == []
        assert env.attempts(workspace.id) == []
        assert len(env.unfolded(workspace.id)) == 2
        after = env.stored(workspace.id)
        assert (after.content.encode(), after.version) == (before.content.encode(), before.version)
        # A workspace with nothing unfolded is not paused (the negative beside the positive).
        assert refresh.state(quiet.id).state == "idle"
        assert refresh.paused(workspace.id)

        ui.controller.settings_dialog.hide()
        qtbot.mouseClick(panel.action_button, Qt.MouseButton.LeftButton)
        dialog = ui.controller.settings_dialog
        assert dialog.isVisible()
        assert dialog.stack.currentWidget() is ui.controller.provider_page
        ui.controller.open_settings()

        monkeypatch.setenv(KEY_ENV, "test-key")  # a key is added
        assert await refresh.check_key() is True
        assert panel.status_label.text() == "pending in 10 s"
        assert not panel.action_button.isVisible()
        await until(lambda: listed_status(workspace.id) == UNFOLDED_TEXT, what="the pause to end")
        await settings.tasks.drain()
        # No longer paused; never attempted, and its conversation still waits to be folded in.
        assert listed_status(workspace.id) == UNFOLDED_TEXT
        fake_api.script(text(lines(3) + "- the build tool is make, not cmake\n"))
        env.timers.advance(10)
        await refresh.queue.wait_idle()
        assert len(fake_api.message_requests) == 1
        assert not refresh.paused(workspace.id)
        await ui.controller.aclose()

    run(qloop, body())


def test_a_key_gone_before_the_run_is_due_pauses_instead_of_failing(
    env, qtbot, qloop, fake_api, monkeypatch
):
    """A refresh enqueued with a key whose key is gone when its timer fires makes no call and
    records nothing; the panel shows the pause, not a failure."""
    workspace = env.workspace("proj", lines(3))
    add_conversation(env, workspace.id)
    refresh = env.core.refresh
    ui = Ui(env, qtbot)
    states: list[str] = []
    env.core.bus.subscribe(RefreshStateChanged, lambda e: states.append(e.state))

    async def body():
        await ui.controller.open_workspace(str(env.folder("proj")))
        assert await refresh.check_key() is True
        refresh.enqueue(workspace.id)  # a turn completed
        assert ui.panel.status_label.text() == "pending in 10 s"
        monkeypatch.delenv(KEY_ENV)
        env.timers.advance(10)
        await refresh.queue.wait_idle()
        await until(lambda: ui.panel.status_label.text() == PAUSED_TEXT, what="the pause")
        assert states[-1] == "paused"  # after the queue's own "idle"
        assert fake_api.message_requests == []
        assert env.attempts(workspace.id) == []
        assert refresh.queue.failures(workspace.id) == 0  # no backoff for the next trigger
        await ui.controller.aclose()

    run(qloop, body())


def test_forced_refresh_without_a_key_reports_the_failure_as_advice(
    env, qtbot, qloop, fake_api, monkeypatch
):
    """Refresh without a key still runs and is recorded as failed with the missing-key sentence
    (every refresh attempt is recorded), but the panel and the editor show it as advice with Add
    key…, not in red; the document and the watermark are unchanged and nothing reached the API.
    With a key, the same button applies the rewrite."""
    monkeypatch.delenv(KEY_ENV)
    workspace = env.workspace("proj", lines(3))
    add_conversation(env, workspace.id)
    before = env.stored(workspace.id)
    ui = Ui(env, qtbot)
    panel = ui.panel

    async def body():
        await ui.controller.open_workspace(str(env.folder("proj")))
        qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
        await ui.controller.tasks.drain()

        assert panel.status_label.text() == f"failed: {NO_KEY}"
        assert panel.status_label.styleSheet() == ""  # advice, not the alarm colour
        assert panel.action_button.text() == "Add key…" and panel.action_button.isVisible()
        assert ui.window.statusBar().currentMessage() == f"Refresh failed: {NO_KEY}"
        attempts = env.attempts(workspace.id)
        assert [(a.status, a.reason) for a in attempts] == [(RefreshStatus.FAILED, NO_KEY)]
        after = env.stored(workspace.id)
        assert (after.content.encode(), after.version) == (before.content.encode(), before.version)
        assert len(env.unfolded(workspace.id)) == 2
        assert fake_api.message_requests == []

        # The Settings editor's Refresh says the same, not in red.
        page = MemoryPage()
        qtbot.addWidget(page)
        page_controller = MemoryPageController(page, env.core, env.bridge)
        page_controller.show_workspace(workspace.id)
        await page_controller.tasks.drain()
        page.editor.refresh_button.click()
        await page_controller.tasks.drain()
        assert page.editor.message_label.text() == f"Refresh failed: {NO_KEY}"
        assert RED not in page.editor.message_label.styleSheet()

        # With a key the same Refresh calls the model and applies the rewrite.
        monkeypatch.setenv(KEY_ENV, "test-key")
        await env.core.refresh.check_key()
        rewritten = lines(3) + "- the build tool is make, not cmake\n"
        fake_api.script(text(rewritten))
        qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
        await ui.controller.tasks.drain()
        assert env.stored(workspace.id).content == rewritten
        assert panel.status_label.text() == "refreshed: +1 −0"
        assert panel.action_button.text() == "Diff"
        assert len(fake_api.message_requests) == 1
        await ui.controller.aclose()

    run(qloop, body())


def test_a_forced_refresh_that_reads_the_messages_ends_the_pause(
    env, qtbot, qloop, fake_api, monkeypatch
):
    """A workspace paused for want of a key whose forced refresh then succeeds (the key came
    from elsewhere) no longer shows the pause; one that fails for want of a key keeps it."""
    monkeypatch.delenv(KEY_ENV)
    workspace = env.workspace("proj", lines(3))
    add_conversation(env, workspace.id)
    refresh = env.core.refresh
    ui = Ui(env, qtbot)

    async def body():
        await ui.controller.open_workspace(str(env.folder("proj")))
        await refresh.enqueue_unfolded()
        await until(lambda: ui.panel.status_label.text() == PAUSED_TEXT, what="the pause")

        qtbot.mouseClick(ui.panel.refresh_button, Qt.MouseButton.LeftButton)
        await ui.controller.tasks.drain()
        assert refresh.paused(workspace.id)
        assert ui.panel.status_label.text() == f"failed: {NO_KEY}"

        monkeypatch.setenv(KEY_ENV, "test-key")  # the key came from elsewhere
        fake_api.script(text(lines(3) + "- the build tool is make, not cmake\n"))
        qtbot.mouseClick(ui.panel.refresh_button, Qt.MouseButton.LeftButton)
        await ui.controller.tasks.drain()
        assert not refresh.paused(workspace.id)
        assert ui.panel.status_label.text() == "refreshed: +1 −0"
        assert ui.panel.action_button.text() == "Diff"
        await ui.controller.aclose()

    run(qloop, body())


def open_with_a_stored_failure(env, qtbot, qloop, reason: str) -> Ui:
    """A workspace whose last refresh failed with ``reason`` (recorded as by an earlier run),
    opened in a new window after the key check; returns the window."""
    workspace = env.workspace("proj", lines(3))
    env.record_attempt(
        RefreshOutcome(
            status=RefreshStatus.FAILED,
            reason=reason,
            workspace_id=workspace.id,
            version=1,
            lines=3,
        ),
        base_version=1,
    )
    ui = Ui(env, qtbot)

    async def body():
        await env.core.refresh.check_key()
        await ui.controller.open_workspace(str(env.folder("proj")))
        await ui.controller.tasks.drain()

    run(qloop, body())
    return ui


def test_a_failure_stored_by_an_earlier_run_offers_add_key_while_no_key_is_set(
    env, qtbot, qloop, monkeypatch
):
    """After a restart, the last refresh failed (as recorded by the earlier run) and there is
    still no key: the panel offers Add key…, not Retry, in the normal colour, since a retry
    would fail the same way. Once a key is set, the same stored failure offers Retry."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    ui = open_with_a_stored_failure(env, qtbot, qloop, NO_KEY)
    panel = ui.panel
    assert panel.status_label.text() == f"failed: {NO_KEY}"
    assert panel.action_button.text() == "Add key…" and panel.action_button.isVisible()
    assert panel.status_label.styleSheet() == ""
    run(qloop, ui.controller.aclose())


def test_a_stored_failure_offers_retry_when_a_key_is_set(env, qtbot, qloop, monkeypatch):
    """The negative of the test above: with a key set, a stored failure is an ordinary failure
    (Retry, in the alarm colour)."""
    monkeypatch.setenv(KEY_ENV, "test-key")
    ui = open_with_a_stored_failure(env, qtbot, qloop, "The provider is overloaded.")
    panel = ui.panel
    assert panel.status_label.text() == "failed: The provider is overloaded."
    assert panel.action_button.text() == "Retry"
    assert RED in panel.status_label.styleSheet()
    run(qloop, ui.controller.aclose())
