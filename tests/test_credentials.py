"""The API key through the settings service (``core.settings``) and the core's key store:
environment first, then the OS keyring; a missing keyring is handled."""

from __future__ import annotations

import pytest

from yak.errors import UsageError, YakError


async def test_environment_wins_over_the_keyring(core, monkeypatch, memory_keyring):
    """ANTHROPIC_API_KEY is used when set; the keyring otherwise; blank env counts as unset."""
    memory_keyring.passwords[("yak", "anthropic")] = "sk-keyring"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert core.settings.api_key_now() == "sk-env"
    assert await core.settings.key_source() == "environment"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "   ")
    assert core.settings.api_key_now() == "sk-keyring"
    assert await core.settings.key_source() == "keyring"


async def test_set_and_delete_in_the_keyring(core, monkeypatch, memory_keyring):
    """A saved key is stored under service yak / user anthropic (surrounding blanks removed)
    and found; delete removes it; deleting twice is fine."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert await core.settings.check_key() is False
    await core.settings.set_api_key("  sk-new  ")
    assert memory_keyring.passwords == {("yak", "anthropic"): "sk-new"}
    assert core.settings.key_available is True
    await core.settings.delete_api_key()
    assert memory_keyring.passwords == {}
    await core.settings.delete_api_key()
    assert core.settings.key_available is False


async def test_blank_or_multiline_keys_are_refused(core, memory_keyring):
    """Nothing is stored for a key a user pasted wrongly."""
    with pytest.raises(UsageError, match="empty"):
        await core.settings.set_api_key("   ")
    with pytest.raises(UsageError, match="line breaks"):
        await core.settings.set_api_key("sk-a\nsk-b")
    assert memory_keyring.passwords == {}


async def test_no_keyring_backend(core, monkeypatch):
    """Without a usable keyring (the test default): reading gives no key, deleting is a no-op,
    writing raises one sentence that names the alternative (and not the key)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert core.settings.api_key_now() is None
    assert await core.settings.check_key() is False
    await core.settings.delete_api_key()
    with pytest.raises(YakError) as info:
        await core.settings.set_api_key("sk-x")
    assert "set the ANTHROPIC_API_KEY environment variable instead" in str(info.value)
    assert "sk-x" not in str(info.value)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert await core.settings.check_key() is True
