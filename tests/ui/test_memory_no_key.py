"""Memory refreshes without an API key: automatic ones pause (no call, no failed attempt, no
watermark moved) and the panel says so calmly with a way to add a key; a forced one still
reports the failure, as advice; adding a key resumes the paused workspaces.

The queue's timers are fired by hand (``ManualScheduler``); the forced refresh runs the real
``MemoryRefresher`` and ``Provider`` against the fake Messages API on 127.0.0.1."""

from __future__ import annotations

import asyncio

import pytest
from tests.support.fake_api import text
from memory_support import FakeClock, ManualScheduler, lines, run, until
from PySide6.QtCore import Qt

from yak.db.conversations import ConversationStore
from yak.domain import RefreshOutcome, RefreshStatus
from yak.events import RefreshStateChanged
from yak.llm.provider import Provider
from yak.memory.refresh import MemoryRefresher
from yak.ui.controller import AppController
from yak.ui.main_window import MainWindow
from yak.ui.settings.memory_controller import MemoryPageController
from yak.ui.settings.memory_page import MemoryPage
from yak.ui.settings.page import SettingsPage
from yak.workspace.auto_refresh import AutoRefresh
from yak.workspace.service import WorkspaceService
from yak.workspace.state import PAUSED_TEXT

RED = "#b00020"
NO_KEY = "No Anthropic API key is set. Set ANTHROPIC_API_KEY or add a key in Settings > Provider."


class Key:
    """Whether an API key is available, as the test says."""

    def __init__(self, available: bool) -> None:
        self.available = available
        self.checks = 0

    def __call__(self) -> bool:
        self.checks += 1
        return self.available


def armed(scheduler: ManualScheduler) -> list:
    """The queue timers neither fired nor cancelled."""
    return [t for t in scheduler.timers if not t[2]]


def add_conversation(env, workspace_id: str) -> ConversationStore:
    """One user and one assistant message in a new session of the workspace (unfolded)."""
    conversations = ConversationStore(env.db)
    session = conversations.create_session(workspace_id, "Build setup")
    conversations.add_message(
        session.id, "user", [{"type": "text", "text": "We build with make, not cmake."}]
    )
    conversations.add_message(
        session.id, "assistant", [{"type": "text", "text": "Noted: make is the build tool."}]
    )
    return conversations


class Ui:
    """A main window and controller on a service with an AutoRefresh gate."""

    def __init__(self, env, qtbot, refresh, key: Key) -> None:
        self.clock, self.scheduler = FakeClock(), ManualScheduler()
        self.auto = AutoRefresh(
            refresh,
            has_api_key=key,
            bus=env.bus,
            debounce_s=10,
            clock=self.clock,
            scheduler=self.scheduler,
        )
        self.service = WorkspaceService(
            store=env.store, db=env.db, bus=env.bus, auto_refresh=self.auto
        )
        self.window = MainWindow()
        qtbot.addWidget(self.window)
        self.controller = AppController(window=self.window, service=self.service, bridge=env.bridge)
        self.provider_page = SettingsPage()  # stands in for Settings › Provider
        self.controller.settings_dialog.add_page("Provider", self.provider_page)
        self.panel = self.window.memory_panel
        self.panel.clock = self.clock
        self.window.show()

    def close(self) -> None:
        self.controller.settings_dialog.hide()
        self.service.close()


def test_without_a_key_automatic_refreshes_pause_and_a_new_key_resumes_them(env, qtbot, qloop):
    """At start without a key, a workspace with unfolded messages is not refreshed: no call, no
    attempt recorded, no timer armed, the watermark and the document unchanged byte for byte.
    The panel says "refresh paused: no API key …" in the normal text colour with Add key…, which
    opens Settings › Provider. Once a key is added the workspace is enqueued and runs once."""
    workspace = env.workspace("proj", lines(3))
    quiet = env.workspace("quiet", "- nothing new here\n")
    conversations = add_conversation(env, workspace.id)
    before = env.stored(workspace.id)
    calls: list[str] = []

    async def refresh(workspace_id: str, rebuild: bool) -> RefreshOutcome:
        calls.append(workspace_id)
        return RefreshOutcome(
            status=RefreshStatus.UP_TO_DATE,
            reason="",
            version=1,
            lines=3,
            workspace_id=workspace_id,
        )

    key = Key(available=False)
    ui = Ui(env, qtbot, refresh, key)
    panel = ui.panel
    settings = ui.controller.memory_controller

    def listed_status(workspace_id: str) -> str:
        model = ui.controller.memory_page.model
        return model.index(model.row_of(workspace_id), 3).data()

    async def body():
        await ui.controller.open_workspace(str(env.folder("proj")))
        ui.controller.open_settings()  # the Settings list is open meanwhile
        await settings.tasks.drain()
        # What the app does at start (yak.app): check the key, enqueue the unfolded ones.
        assert await ui.auto.check_key() is False
        for workspace_id in await asyncio.to_thread(conversations.workspaces_with_unfolded):
            ui.auto.enqueue(workspace_id)
        await ui.controller.tasks.drain()
        await settings.tasks.drain()
        assert listed_status(workspace.id) == "paused"
        assert listed_status(quiet.id) == ""

        assert panel.status_label.text() == PAUSED_TEXT
        assert RED not in panel.status_label.styleSheet()
        assert panel.status_label.styleSheet() == ""
        assert panel.action_button.isVisible() and panel.action_button.text() == "Add key…"
        assert armed(ui.scheduler) == []  # nothing will run
        assert calls == []
        assert env.store.attempts(workspace.id) == []
        assert len(conversations.unfolded_messages(workspace.id)) == 2
        after = env.stored(workspace.id)
        assert (after.content.encode(), after.version) == (before.content.encode(), before.version)
        # A workspace with nothing unfolded is not paused (the negative beside the positive).
        assert ui.auto.state(quiet.id).state == "idle"
        assert ui.auto.paused(workspace.id)

        ui.controller.settings_dialog.hide()
        qtbot.mouseClick(panel.action_button, Qt.MouseButton.LeftButton)
        dialog = ui.controller.settings_dialog
        assert dialog.isVisible()
        assert dialog.stack.currentWidget() is ui.provider_page
        ui.controller.open_settings()

        key.available = True  # Settings › Provider stored one
        assert await ui.auto.check_key() is True
        assert panel.status_label.text() == "pending in 10 s"
        assert not panel.action_button.isVisible()
        await settings.tasks.drain()
        assert listed_status(workspace.id) == ""  # no longer paused; never attempted
        ui.scheduler.fire()
        await ui.auto.queue.wait_idle()
        assert calls == [workspace.id]
        assert not ui.auto.paused(workspace.id)
        ui.close()

    run(qloop, body())


def test_a_key_gone_before_the_run_is_due_pauses_instead_of_failing(env, qtbot, qloop):
    """A refresh enqueued with a key whose key is gone when its timer fires makes no call and
    records nothing; the panel shows the pause, not a failure."""
    workspace = env.workspace("proj", lines(3))
    calls: list[str] = []

    async def refresh(workspace_id: str, rebuild: bool) -> RefreshOutcome:
        calls.append(workspace_id)
        raise AssertionError("no refresh may run without a key")

    key = Key(available=True)
    ui = Ui(env, qtbot, refresh, key)
    states: list[str] = []
    env.bus.subscribe(RefreshStateChanged, lambda e: states.append(e.state))

    async def body():
        await ui.controller.open_workspace(str(env.folder("proj")))
        ui.auto.enqueue(workspace.id)
        assert ui.panel.status_label.text() == "pending in 10 s"
        key.available = False
        ui.scheduler.fire()
        await ui.auto.queue.wait_idle()
        await until(lambda: ui.panel.status_label.text() == PAUSED_TEXT, what="the pause")
        assert states[-1] == "paused"  # after the queue's own "idle"
        assert calls == []
        assert env.store.attempts(workspace.id) == []
        assert ui.auto.queue.failures(workspace.id) == 0  # no backoff for the next trigger
        ui.close()

    run(qloop, body())


@pytest.fixture
def refresher_ui(env, qtbot, fake_api, monkeypatch):
    """The real refresher and provider behind the gate, against the fake API; no key yet."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    conversations = ConversationStore(env.db)

    def settings():
        from yak.config import load_settings

        return load_settings(env.data_dir)

    refresher = MemoryRefresher(
        store=env.store,
        conversations=conversations,
        provider_factory=lambda: Provider(),
        settings=settings,
        bus=env.bus,
    )
    key = Key(available=False)
    ui = Ui(env, qtbot, lambda w, rebuild: refresher.refresh(w, rebuild=rebuild), key)
    yield ui, key
    ui.close()


def test_forced_refresh_without_a_key_reports_the_failure_as_advice(
    env, refresher_ui, qtbot, qloop, fake_api, monkeypatch
):
    """Refresh without a key still runs and is recorded as failed with the missing-key sentence
    (every refresh attempt is recorded), but the panel and the editor show it as advice with Add
    key…, not in red; the document and the watermark are unchanged and nothing reached the API.
    With a key, the same button applies the rewrite."""
    ui, key = refresher_ui
    workspace = env.workspace("proj", lines(3))
    conversations = add_conversation(env, workspace.id)
    before = env.stored(workspace.id)
    panel = ui.panel

    async def body():
        await ui.controller.open_workspace(str(env.folder("proj")))
        qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
        await ui.controller.tasks.drain()

        assert panel.status_label.text() == f"failed: {NO_KEY}"
        assert panel.status_label.styleSheet() == ""  # advice, not the alarm colour
        assert panel.action_button.text() == "Add key…" and panel.action_button.isVisible()
        assert ui.window.statusBar().currentMessage() == f"failed: {NO_KEY}"
        attempts = env.store.attempts(workspace.id)
        assert [(a.status, a.reason) for a in attempts] == [(RefreshStatus.FAILED, NO_KEY)]
        after = env.stored(workspace.id)
        assert (after.content.encode(), after.version) == (before.content.encode(), before.version)
        assert len(conversations.unfolded_messages(workspace.id)) == 2
        assert fake_api.message_requests == []

        # The Settings editor's Refresh says the same, not in red.
        page = MemoryPage()
        qtbot.addWidget(page)
        page_controller = MemoryPageController(page, ui.service, env.bridge)
        page_controller.show_workspace(workspace.id)
        await page_controller.tasks.drain()
        page.editor.refresh_button.click()
        await page_controller.tasks.drain()
        assert page.editor.message_label.text() == f"failed: {NO_KEY}"
        assert RED not in page.editor.message_label.styleSheet()

        # With a key the same Refresh calls the model and applies the rewrite.
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        key.available = True
        await ui.auto.check_key()
        rewritten = lines(3) + "- the build tool is make, not cmake\n"
        fake_api.script(text(rewritten))
        qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
        await ui.controller.tasks.drain()
        assert env.stored(workspace.id).content == rewritten
        assert panel.status_label.text() == "up to date"
        assert not panel.action_button.isVisible()
        assert len(fake_api.message_requests) == 1

    run(qloop, body())


def test_a_forced_refresh_that_reads_the_messages_ends_the_pause(env, qtbot, qloop):
    """A workspace paused for want of a key whose forced refresh then succeeds (the key came
    from elsewhere) no longer shows the pause; one that fails for want of a key keeps it."""
    workspace = env.workspace("proj", lines(3))
    outcomes = {"status": RefreshStatus.FAILED, "flags": ("provider:no_key",)}

    async def refresh(workspace_id: str, rebuild: bool) -> RefreshOutcome:
        outcome = RefreshOutcome(
            status=outcomes["status"],
            workspace_id=workspace_id,
            version=1,
            lines=3,
            reason=NO_KEY,
            flags=outcomes["flags"],
        )
        await asyncio.to_thread(env.store.record_attempt, outcome, base_version=1)
        return outcome

    ui = Ui(env, qtbot, refresh, Key(available=False))

    async def body():
        await ui.controller.open_workspace(str(env.folder("proj")))
        await ui.auto.check_key()
        ui.auto.enqueue(workspace.id)
        assert ui.panel.status_label.text() == PAUSED_TEXT

        qtbot.mouseClick(ui.panel.refresh_button, Qt.MouseButton.LeftButton)
        await ui.controller.tasks.drain()
        assert ui.auto.paused(workspace.id)
        assert ui.panel.status_label.text() == f"failed: {NO_KEY}"

        outcomes.update(status=RefreshStatus.APPLIED, flags=())
        qtbot.mouseClick(ui.panel.refresh_button, Qt.MouseButton.LeftButton)
        await ui.controller.tasks.drain()
        assert not ui.auto.paused(workspace.id)
        assert ui.panel.status_label.text() == "up to date"
        assert not ui.panel.action_button.isVisible()
        ui.close()

    run(qloop, body())
