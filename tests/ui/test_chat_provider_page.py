"""Settings › Provider: what it shows, what Apply stores (and what it never stores), the key in
the keyring, and Test connection. The page drives the core's settings and chat services (from
``open_core``); where only the page's own logic is under test, the key store is a stub."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from chat_support import run
from PySide6.QtWidgets import QLineEdit

from tests.support import ModelClients, until
from yak.bootstrap import open_core
from yak.config import load_settings
from yak.core import Core
from yak.presenters import NO_KEY_HERE
from yak.ui.settings.provider_fields import NO_KEYRING_NOTE
from yak.ui.settings.provider_page import ProviderPage


class StubKeyStore:
    """A key store holding the key in memory (``source`` says where it would come from)."""

    def __init__(self, *, key: str | None = None, source: str = "keyring") -> None:
        self.key = key
        self.source = source

    def api_key(self) -> str | None:
        return self.key

    def key_source(self) -> str | None:
        return self.source if self.key else None

    def set_api_key(self, key: str) -> None:
        self.key = key

    def can_store(self) -> bool:
        return True

    def delete_api_key(self) -> None:
        self.key = None


@pytest.fixture
def make_page(qloop, qtbot, data_dir) -> Callable[..., tuple[ProviderPage, Core]]:
    """``make_page(key_store=None, env=None)``: Settings › Provider on a core from ``open_core``
    (the OS keyring when ``key_store`` is ``None``; ``env`` is the environment, empty by
    default), and that core. The cores are closed after the test."""
    cores: list[tuple[Core, ModelClients]] = []

    def make(*, key_store=None, env=None) -> tuple[ProviderPage, Core]:
        clients = ModelClients()
        core = open_core(data_dir, key_store=key_store, env=env or {}, model_client=clients)
        cores.append((core, clients))
        page = ProviderPage(settings=core.settings, chat=core.chat)
        qtbot.addWidget(page)
        return page, core

    yield make
    for core, clients in cores:
        run(qloop, core.aclose())
        run(qloop, clients.aclose())


def key_available(qloop, core: Core) -> bool:
    """Whether the core finds a key now (read off the UI thread, as the app does)."""
    return run(qloop, core.settings.check_key())


def test_apply_is_possible_only_after_a_change_and_writes_only_what_changed(
    make_page, qtbot, data_dir
):
    """A fresh page has nothing to apply; editing the model enables Apply; applying writes the
    settings file and the page is clean again."""
    page, _core = make_page(key_store=StubKeyStore(key="k"))
    changes: list[bool] = []
    page.changed.connect(lambda: changes.append(page.is_changed()))
    assert not page.is_changed()
    assert not page.apply_button.isEnabled()
    assert page.chat_model_edit.text() == load_settings(data_dir, env={}).chat_model

    page.chat_model_edit.clear()
    qtbot.keyClicks(page.chat_model_edit, "claude-opus-4-1")
    page.debounce_spin.setValue(30)
    assert page.is_changed() and changes[-1] is True
    assert page.apply_button.isEnabled()
    applied: list[object] = []
    page.settings_applied.connect(applied.append)
    page.apply_button.click()
    assert not page.is_changed() and changes[-1] is False
    assert not page.apply_button.isEnabled()
    stored = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))
    assert stored["chat_model"] == "claude-opus-4-1"
    assert stored["refresh_idle_s"] == 30.0
    assert "api_key" not in stored and "k" not in stored.values()
    assert applied and applied[-1].chat_model == "claude-opus-4-1"

    page.load()  # what is stored comes back
    assert page.chat_model_edit.text() == "claude-opus-4-1"
    assert page.debounce_spin.value() == 30


def test_the_quiet_time_spin_box_is_bounded_to_2_to_600_seconds(make_page):
    page, _core = make_page(key_store=StubKeyStore())
    page.debounce_spin.setValue(5000)
    assert page.debounce_spin.value() == 600
    page.debounce_spin.setValue(0.5)
    assert page.debounce_spin.value() == 2


def test_a_key_from_the_environment_is_said_and_cannot_be_edited(make_page, qloop, data_dir):
    page, _core = make_page(
        key_store=StubKeyStore(key="sk-env", source="environment"),
        env={"ANTHROPIC_API_KEY": "sk-env", "YAK_MODEL": "env-model"},
    )
    run(qloop, page.read_key_state())  # where the key is, read off the UI thread
    assert not page.key_edit.isEnabled()
    assert "ANTHROPIC_API_KEY" in page.key_note.text()
    assert "sk-env" not in page.key_edit.text()
    assert not page.chat_model_edit.isEnabled()
    assert page.chat_model_edit.text() == "env-model"
    assert "YAK_MODEL" in page.env_note.text()

    page.memory_model_edit.setText("small-model")
    page.memory_model_edit.textEdited.emit("small-model")
    page.apply()
    stored = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))
    assert stored["memory_model"] == "small-model"
    assert stored["chat_model"] != "env-model"  # the environment's value is not copied


def test_the_key_field_is_masked_until_shown(make_page):
    page, _core = make_page(key_store=StubKeyStore())
    assert page.key_edit.isEnabled()
    page.show()
    assert page.key_edit.echoMode() is QLineEdit.EchoMode.Password
    assert page.show_key_button.isVisible() and page.show_key_button.text() == "Show"
    page.show_key_button.click()
    assert page.key_edit.echoMode() is QLineEdit.EchoMode.Normal
    assert page.show_key_button.text() == "Hide"
    page.show_key_button.click()
    assert page.key_edit.echoMode() is QLineEdit.EchoMode.Password


def test_a_typed_key_goes_to_the_keyring_never_to_the_settings_or_the_database(
    make_page, qloop, qtbot, data_dir, memory_keyring
):
    page, core = make_page()  # the OS keyring (an in-memory one here)
    run(qloop, page.read_key_state())
    assert "No key yet" in page.key_note.text()
    assert page.remove_key_button.isHidden()

    async def body() -> None:
        qtbot.keyClicks(page.key_edit, "sk-ant-secret-123")
        assert page.is_changed()
        assert not page.test_button.isEnabled()  # test what is applied, so apply first
        page.apply_button.click()
        # The field empties first; the sentence follows once the key is read back.
        await until(
            lambda: "saved in the system keyring" in page.status_label.text(),
            what="the key to be saved",
        )
        assert page.key_edit.text() == ""
        assert "Stored in the system keyring" in page.key_note.text()
        assert not page.is_changed()
        assert page.test_button.isEnabled()

    run(qloop, body())
    assert memory_keyring.passwords[("yak", "anthropic")] == "sk-ant-secret-123"
    assert key_available(qloop, core)
    for stored in data_dir.iterdir():
        assert b"sk-ant-secret" not in stored.read_bytes(), stored.name

    async def remove() -> None:
        assert not page.remove_key_button.isHidden()
        page.remove_key_button.click()
        await until(lambda: "removed" in page.status_label.text(), what="the removal")

    run(qloop, remove())
    assert ("yak", "anthropic") not in memory_keyring.passwords
    assert not key_available(qloop, core)
    assert "No key yet" in page.key_note.text()


def test_a_key_the_keyring_cannot_store_gives_one_sentence(make_page, qloop, qtbot):
    """Without a usable keyring (the tests' default backend stores nothing) the page says to
    use ANTHROPIC_API_KEY instead, and the typed key stays unapplied."""
    page, core = make_page()

    async def body() -> None:
        qtbot.keyClicks(page.key_edit, "sk-ant-x")
        page.apply_button.click()
        await until(
            lambda: "ANTHROPIC_API_KEY" in page.status_label.text(), what="the failure sentence"
        )

    run(qloop, body())
    assert "\n" not in page.status_label.text()
    assert page.is_changed()  # the key was not stored; Apply can be tried again
    assert not key_available(qloop, core)


def test_with_no_keyring_a_key_can_be_used_for_this_session_only(make_page, qloop, qtbot, data_dir):
    """Without a usable keyring, the refusal points at "this session only"; ticking it and
    applying makes the key usable at once (the page says it is kept in memory only), nothing
    in the data folder holds it, and Forget key drops it."""
    page, core = make_page()  # the tests' default keyring stores nothing
    run(qloop, page.read_key_state())
    assert page.key_note.text() == NO_KEYRING_NOTE  # no promise of a keyring
    assert "system keyring" not in page.key_note.text()

    async def body() -> None:
        qtbot.keyClicks(page.key_edit, "sk-ant-session-9")
        page.apply_button.click()
        await until(lambda: "for this session only" in page.status_label.text(), what="the refusal")
        assert page.is_changed()  # the typed key waits to be applied another way
        page.session_only_check.click()
        page.apply_button.click()
        await until(
            lambda: "used for this session only" in page.status_label.text(),
            what="the session key",
        )
        assert page.key_edit.text() == ""
        assert "never saved" in page.key_note.text()
        assert page.remove_key_button.text() == "Forget key"

    run(qloop, body())
    assert core.settings.api_key_now() == "sk-ant-session-9"
    assert key_available(qloop, core)
    for stored in data_dir.iterdir():
        if stored.is_file():
            assert b"sk-ant-session" not in stored.read_bytes(), stored.name

    async def forget() -> None:
        page.remove_key_button.click()
        await until(lambda: "forgotten" in page.status_label.text(), what="the key forgotten")

    run(qloop, forget())
    assert not key_available(qloop, core)
    assert page.key_note.text() == NO_KEYRING_NOTE


def test_test_connection_tries_the_chat_and_the_memory_model_and_says_so(
    make_page, qloop, fake_api
):
    """Test connection asks the chat model and then the memory model: both answering is one
    line each naming its model; the memory model alone failing (an unknown model) names it
    with the error's sentence under the chat model's success; a wrong key is one sentence."""
    from tests.support.fake_api import error, text

    fake_api.script(
        text("ok"),
        text("ok"),
        text("ok"),
        error(404, message="model: nope"),
        error(401),
        error(401),
    )
    page, core = make_page()
    chat, memory = core.settings.current().chat_model, core.settings.current().memory_model
    results: list[str] = []
    page.test_finished.connect(results.append)

    async def body(count: int) -> None:
        page.test_button.click()
        assert not page.test_button.isEnabled()  # one test at a time
        await until(lambda: len(results) == count, what="the test to finish")

    run(qloop, body(1))
    assert (
        page.status_label.text()
        == results[0]
        == (
            f"Connected to {fake_api.url}: model {chat} answered.\n"
            f"Connected to {fake_api.url}: model {memory} answered."
        )
    )
    run(qloop, body(2))
    assert page.status_label.text() == results[1]
    first, second = results[1].split("\n")
    assert first == f"Connected to {fake_api.url}: model {chat} answered."
    assert second.startswith(f"Memory model {memory}: The model or endpoint was not found (404)")
    run(qloop, body(3))
    assert page.status_label.text() == results[2]
    assert "key" in results[2].lower() and "\n" not in results[2]
    assert page.test_button.isEnabled()
    assert [r.body["model"] for r in fake_api.message_requests] == [chat, memory] * 3


def test_revert_and_the_close_guard_discard_or_apply_unapplied_edits(
    make_page, qloop, qtbot, data_dir
):
    """Revert restores the stored values; closing Settings with edits asks Apply / Discard /
    Cancel, and only Apply writes them."""
    from PySide6.QtWidgets import QMessageBox

    page, _core = make_page(key_store=StubKeyStore())
    stored_model = page.memory_model_edit.text()
    qtbot.keyClicks(page.memory_model_edit, "-typo")
    page.revert_button.click()
    assert page.memory_model_edit.text() == stored_model
    assert not page.has_unsaved_changes()

    def answer(button: QMessageBox.StandardButton) -> list[bool]:
        done: list[bool] = []

        async def body() -> None:
            box = page.resolve_unsaved(lambda: done.append(True))
            await until(box.isVisible, what="the question")
            box.button(button).click()
            await until(lambda: not box.isVisible(), what="the question to close")

        run(qloop, body())
        return done

    qtbot.keyClicks(page.memory_model_edit, "-x")
    assert answer(QMessageBox.StandardButton.Cancel) == []
    assert page.has_unsaved_changes()
    assert answer(QMessageBox.StandardButton.Discard) == [True]
    assert page.memory_model_edit.text() == stored_model
    assert not (data_dir / "settings.json").exists()
    qtbot.keyClicks(page.memory_model_edit, "-x")
    assert answer(QMessageBox.StandardButton.Apply) == [True]
    stored = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))
    assert stored["memory_model"] == stored_model + "-x"


def test_no_sandbox_is_warned_about_and_the_time_limit_is_stored(make_page, data_dir):
    """Choosing "No sandbox" shows the warning under the field before anything is applied;
    applying stores ``command_sandbox: none`` and the request time limit; the sandboxed
    choice hides the warning again."""
    page, core = make_page(key_store=StubKeyStore(key="k"))
    assert page.sandbox_combo.currentData() == "auto"
    assert page.sandbox_warning.isHidden()
    page.sandbox_combo.setCurrentIndex(page.sandbox_combo.findData("none"))
    assert not page.sandbox_warning.isHidden()
    assert page.sandbox_warning.text() == (
        "Warning: Commands run without a sandbox: an approved command can write anywhere you "
        "can and read any file you can."
    )
    page.timeout_spin.setValue(45)
    page.apply_button.click()
    stored = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))
    assert stored["command_sandbox"] == "none" and stored["request_timeout_s"] == 45.0
    assert core.settings.current().command_sandbox == "none"
    page.sandbox_combo.setCurrentIndex(page.sandbox_combo.findData("auto"))
    assert page.sandbox_warning.isHidden()
    page.timeout_spin.setValue(0)
    assert page.timeout_spin.value() == 1


def test_the_memory_context_window_is_automatic_until_set_and_then_stored(make_page, data_dir):
    """The field shows "Automatic" for 0 (Anthropic's known windows); a window typed and
    applied is stored in tokens and used by the next refresh; it comes back on load."""
    page, core = make_page(key_store=StubKeyStore(key="k"))
    assert page.context_window_spin.value() == 0
    assert page.context_window_spin.text() == "Automatic"
    page.context_window_spin.setValue(32_768)
    assert page.is_changed() and page.apply_button.isEnabled()
    page.apply_button.click()
    stored = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))
    assert stored["memory_context_window"] == 32_768
    assert core.settings.current().memory_context_window == 32_768
    page.load()
    assert page.context_window_spin.value() == 32_768
    spin = page.context_window_spin
    assert spin.text() == f"32{spin.locale().groupSeparator()}768 tokens"  # the locale's groups
    page.context_window_spin.setValue(-1)
    assert page.context_window_spin.value() == 0


def test_a_context_window_from_the_environment_cannot_be_edited(make_page):
    """``YAK_MEMORY_CONTEXT_WINDOW`` wins: the field shows it, read-only, and says so."""
    page, _core = make_page(
        key_store=StubKeyStore(key="k"), env={"YAK_MEMORY_CONTEXT_WINDOW": "8192"}
    )
    assert page.context_window_spin.value() == 8_192
    assert not page.context_window_spin.isEnabled()
    assert "YAK_MEMORY_CONTEXT_WINDOW" in page.context_window_spin.toolTip()
    assert "YAK_MEMORY_CONTEXT_WINDOW" in page.env_note.text()


def test_the_memory_reply_form_is_automatic_until_chosen_and_then_stored(make_page, data_dir):
    """The combo box shows Automatic by default; choosing Edits enables Apply, applying stores
    ``memory_form: edits`` for the next refresh, and it comes back on load."""
    page, core = make_page(key_store=StubKeyStore(key="k"))
    combo = page.memory_form_combo
    assert combo.currentText() == "Automatic — a tool call where the endpoint supports it"
    assert [combo.itemText(i) for i in range(combo.count())][1:] == [
        "Tool call",
        "Edits",
        "Whole document",
    ]
    assert not page.is_changed()
    combo.setCurrentIndex(combo.findText("Edits"))
    assert page.is_changed() and page.apply_button.isEnabled()
    page.apply_button.click()
    stored = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))
    assert stored["memory_form"] == "edits"
    assert core.settings.current().memory_form == "edits"
    assert not page.apply_button.isEnabled()
    page.load()
    assert combo.currentText() == "Edits"


def test_a_memory_reply_form_from_the_environment_cannot_be_edited(make_page):
    """``YAK_MEMORY_FORM`` wins: the combo box shows it, read-only, and says so."""
    page, _core = make_page(key_store=StubKeyStore(key="k"), env={"YAK_MEMORY_FORM": "whole"})
    assert page.memory_form_combo.currentText() == "Whole document"
    assert not page.memory_form_combo.isEnabled()
    assert "YAK_MEMORY_FORM" in page.memory_form_combo.toolTip()
    assert "YAK_MEMORY_FORM" in page.env_note.text()


def test_the_page_says_what_the_automatic_form_found_for_the_endpoint_and_memory_model(
    make_page, qloop, fake_api, tmp_path
):
    """Under the combo box: nothing found before the first refresh; after a refresh answered
    with the tool, that; another memory model applied is not found out yet, and once it
    answers the forced call in text, edits are used for it."""
    from tests.support import project_folder, say
    from tests.support.fake_api import text, tool_use
    from yak.memory.forms.tool import TOOL_NAME

    page, core = make_page()
    workspace = run(qloop, core.workspaces.open(str(project_folder(tmp_path, "proj"))))
    run(qloop, page.read_memory_form())
    assert page.memory_form_note.text() == "Not found out yet: the first refresh tries the tool."

    say(core, workspace.id, "Thanks, that's all for today!", "You're welcome.")
    fake_api.script(tool_use(TOOL_NAME, {"facts": [], "forget": []}))
    outcome = run(qloop, core.refresh.refresh_now(workspace.id))
    assert "form:tool" in outcome.flags
    run(qloop, page.read_memory_form())
    assert page.memory_form_note.text() == "This endpoint answered with the tool."

    page.memory_model_edit.setText("small-model")
    page.memory_model_edit.textEdited.emit("small-model")

    async def apply() -> None:
        page.apply_button.click()  # the page reads again for the new model by itself
        await until(
            lambda: page.memory_form_note.text().startswith("Not found out yet"),
            what="the label for the new model",
        )

    run(qloop, apply())

    say(core, workspace.id, "Bye!", "Bye.")
    fake_api.script(text("<edits>\n</edits>"))
    outcome = run(qloop, core.refresh.refresh_now(workspace.id))
    assert "tool_text_reply" in outcome.flags
    run(qloop, page.read_memory_form())
    assert page.memory_form_note.text() == "This endpoint answers in text: edits are used."


def test_test_connection_without_a_key_points_at_the_key_field_on_this_page(
    make_page, qloop, fake_api, monkeypatch
):
    """Without a key, Test connection sends nothing and says where the key goes on this page,
    not "add a key in Settings › Provider" (where the user already is)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # the fake server's base URL stays
    page, _core = make_page(key_store=StubKeyStore())
    results: list[str] = []
    page.test_finished.connect(results.append)

    async def body() -> None:
        page.test_button.click()
        await until(lambda: results, what="the test to finish")

    run(qloop, body())
    assert page.status_label.text() == results[0] == NO_KEY_HERE
    assert "Settings › Provider" not in results[0]
    assert fake_api.message_requests == []
