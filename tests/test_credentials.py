"""The API key: environment first, then the OS keyring; a missing keyring is handled."""

from __future__ import annotations

import pytest

from yak.errors import UsageError, YakError
from yak.llm import credentials


def test_environment_wins_over_the_keyring(monkeypatch, memory_keyring):
    """ANTHROPIC_API_KEY is used when set; the keyring otherwise; blank env counts as unset."""
    memory_keyring.passwords[("yak", "anthropic")] = "sk-keyring"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert credentials.api_key() == "sk-env"
    assert credentials.key_source() == "environment"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "   ")
    assert credentials.api_key() == "sk-keyring"
    assert credentials.key_source() == "keyring"


def test_set_and_delete_in_the_keyring(monkeypatch, memory_keyring):
    """set_api_key stores under service yak / user anthropic; delete removes; deleting twice is
    fine."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert not credentials.has_api_key()
    credentials.set_api_key("  sk-new  ")
    assert memory_keyring.passwords == {("yak", "anthropic"): "sk-new"}
    assert credentials.has_api_key()
    credentials.delete_api_key()
    assert memory_keyring.passwords == {}
    credentials.delete_api_key()
    assert not credentials.has_api_key()


def test_blank_or_multiline_keys_are_refused(memory_keyring):
    """Nothing is stored for a key a user pasted wrongly."""
    with pytest.raises(UsageError, match="empty"):
        credentials.set_api_key("   ")
    with pytest.raises(UsageError, match="line breaks"):
        credentials.set_api_key("sk-a\nsk-b")
    assert memory_keyring.passwords == {}


def test_no_keyring_backend(monkeypatch):
    """Without a usable keyring (the test default): reading gives None, deleting is a no-op,
    writing raises one sentence that names the alternative."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert credentials.keyring_api_key() is None
    assert not credentials.has_api_key()
    credentials.delete_api_key()
    with pytest.raises(YakError) as info:
        credentials.set_api_key("sk-x")
    assert "set the ANTHROPIC_API_KEY environment variable instead" in str(info.value)
    assert "sk-x" not in str(info.value)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert credentials.has_api_key()
