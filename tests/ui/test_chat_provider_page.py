"""Settings > Provider: what it shows, what Apply stores (and what it never stores), the key in
the keyring, and Test connection."""

from __future__ import annotations

import json

import pytest
from chat_support import run, until
from PySide6.QtWidgets import QLineEdit

from yak.chat.service import ChatService
from yak.config import load_settings
from yak.db import open_database
from yak.events import EventBus
from yak.llm.provider import Provider
from yak.ui.settings.provider_page import ProviderPage


class KeyServiceStub:
    """Stands in for the chat service where only the page's own logic is under test."""

    def __init__(self, *, key: str | None = None) -> None:
        self.key = key

    def has_api_key(self) -> bool:
        return bool(self.key)

    async def set_api_key(self, key: str) -> None:
        self.key = key

    async def delete_api_key(self) -> None:
        self.key = None

    async def test_connection(self) -> str:
        return "Connected."


def test_apply_is_possible_only_after_a_change_and_writes_only_what_changed(qtbot, data_dir):
    """A fresh page has nothing to apply; editing the model enables Apply; applying writes the
    settings file and the page is clean again."""
    page = ProviderPage(data_dir=data_dir, service=KeyServiceStub(key="k"), env={})
    qtbot.addWidget(page)
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
    assert stored["debounce_s"] == 30.0
    assert "api_key" not in stored and "k" not in stored.values()
    assert applied and applied[-1].chat_model == "claude-opus-4-1"

    page.load()  # what is stored comes back
    assert page.chat_model_edit.text() == "claude-opus-4-1"
    assert page.debounce_spin.value() == 30


def test_the_debounce_spin_box_is_bounded_to_2_to_120_seconds(qtbot, data_dir):
    page = ProviderPage(data_dir=data_dir, service=KeyServiceStub(), env={})
    qtbot.addWidget(page)
    page.debounce_spin.setValue(500)
    assert page.debounce_spin.value() == 120
    page.debounce_spin.setValue(0.5)
    assert page.debounce_spin.value() == 2


def test_a_key_from_the_environment_is_said_and_cannot_be_edited(qtbot, data_dir):
    page = ProviderPage(
        data_dir=data_dir,
        service=KeyServiceStub(key="env"),
        env={"ANTHROPIC_API_KEY": "sk-env", "YAK_MODEL": "env-model"},
    )
    qtbot.addWidget(page)
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


def test_the_key_field_is_masked_until_shown(qtbot, data_dir):
    page = ProviderPage(data_dir=data_dir, service=KeyServiceStub(), env={})
    qtbot.addWidget(page)
    assert page.key_edit.isEnabled()
    page.show()
    assert page.key_edit.echoMode() is QLineEdit.EchoMode.Password
    assert page.show_key_button.isVisible() and page.show_key_button.text() == "Show"
    page.show_key_button.click()
    assert page.key_edit.echoMode() is QLineEdit.EchoMode.Normal
    assert page.show_key_button.text() == "Hide"
    page.show_key_button.click()
    assert page.key_edit.echoMode() is QLineEdit.EchoMode.Password


@pytest.fixture
def service(data_dir):
    """The real chat service (its key methods use the OS keyring; tests install a memory one)."""
    db = open_database(data_dir)
    yield ChatService(
        db=db,
        bus=EventBus(),
        settings=lambda: load_settings(data_dir),
        provider_factory=lambda: Provider(max_retries=0),
    )
    db.close()


def test_a_typed_key_goes_to_the_keyring_never_to_the_settings_or_the_database(
    qloop, qtbot, data_dir, service, memory_keyring
):
    page = ProviderPage(data_dir=data_dir, service=service, env={})
    qtbot.addWidget(page)
    assert "No key yet" in page.key_note.text()
    assert page.remove_key_button.isHidden()

    async def body() -> None:
        qtbot.keyClicks(page.key_edit, "sk-ant-secret-123")
        assert page.is_changed()
        assert not page.test_button.isEnabled()  # test what is applied, so apply first
        page.apply_button.click()
        await until(lambda: page.key_edit.text() == "", what="the key to be saved")
        assert "saved in the system keyring" in page.status_label.text()
        assert "Stored in the system keyring" in page.key_note.text()
        assert not page.is_changed()
        assert page.test_button.isEnabled()

    run(qloop, body())
    assert memory_keyring.passwords[("yak", "anthropic")] == "sk-ant-secret-123"
    assert service.has_api_key()
    for stored in data_dir.iterdir():
        assert b"sk-ant-secret" not in stored.read_bytes(), stored.name

    async def remove() -> None:
        assert not page.remove_key_button.isHidden()
        page.remove_key_button.click()
        await until(lambda: "removed" in page.status_label.text(), what="the removal")

    run(qloop, remove())
    assert ("yak", "anthropic") not in memory_keyring.passwords
    assert not service.has_api_key()
    assert "No key yet" in page.key_note.text()


def test_a_key_the_keyring_cannot_store_gives_one_sentence(qloop, qtbot, data_dir, service):
    """Without a usable keyring (the tests' default backend stores nothing) the page says to
    use ANTHROPIC_API_KEY instead, and the typed key stays unapplied."""
    page = ProviderPage(data_dir=data_dir, service=service, env={})
    qtbot.addWidget(page)

    async def body() -> None:
        qtbot.keyClicks(page.key_edit, "sk-ant-x")
        page.apply_button.click()
        await until(
            lambda: "ANTHROPIC_API_KEY" in page.status_label.text(), what="the failure sentence"
        )

    run(qloop, body())
    assert "\n" not in page.status_label.text()
    assert page.is_changed()  # the key was not stored; Apply can be tried again
    assert not service.has_api_key()


def test_test_connection_reaches_the_server_and_says_so(qloop, qtbot, data_dir, service, fake_api):
    from tests.support.fake_api import error, text

    fake_api.script(text("ok"), error(401))
    page = ProviderPage(data_dir=data_dir, service=service, env={})
    qtbot.addWidget(page)
    results: list[str] = []
    page.test_finished.connect(results.append)

    async def body(count: int) -> None:
        page.test_button.click()
        assert not page.test_button.isEnabled()  # one test at a time
        await until(lambda: len(results) == count, what="the test to finish")

    run(qloop, body(1))
    assert page.status_label.text() == results[0]
    assert results[0].startswith(f"Connected to {fake_api.url}")
    run(qloop, body(2))
    assert page.status_label.text() == results[1]
    assert "key" in results[1].lower() and "\n" not in results[1]
    assert page.test_button.isEnabled()


def test_revert_and_the_close_guard_discard_or_apply_unapplied_edits(qloop, qtbot, data_dir):
    """Revert restores the stored values; closing Settings with edits asks Apply / Discard /
    Cancel, and only Apply writes them."""
    from PySide6.QtWidgets import QMessageBox

    page = ProviderPage(data_dir=data_dir, service=KeyServiceStub(), env={})
    qtbot.addWidget(page)
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
