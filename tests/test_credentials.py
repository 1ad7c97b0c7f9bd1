"""The API key through the settings service (``core.settings``) and the core's key store:
environment first, then the OS keyring; a missing keyring is handled."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

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
    assert "set the ANTHROPIC_API_KEY environment variable" in str(info.value)
    assert "for this session only" in str(info.value)
    assert "sk-x" not in str(info.value)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert await core.settings.check_key() is True


@pytest.fixture
def plaintext_keyring():
    """keyrings.alt's PlaintextKeyring as the only keyring (its file lives under the test's
    XDG data folder); the previous backend is restored afterwards."""
    import keyring
    from keyrings.alt.file import PlaintextKeyring

    previous = keyring.get_keyring()
    backend = PlaintextKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)
        with contextlib.suppress(FileNotFoundError):
            os.remove(backend.file_path)


async def test_a_plaintext_keyring_is_refused_with_where_the_key_would_have_gone(
    core, monkeypatch, plaintext_keyring
):
    """With only a file keyring (keyrings.alt's PlaintextKeyring, which distributions install),
    saving the key is refused with a sentence naming the file and the alternatives; the file
    never receives the key."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(YakError) as info:
        await core.settings.set_api_key("sk-ant-secret-1")
    message = str(info.value)
    assert message.startswith("Yak did not save the key: ")
    assert plaintext_keyring.file_path in message
    assert "for this session only" in message and "ANTHROPIC_API_KEY" in message
    assert "sk-ant-secret-1" not in message
    path = Path(plaintext_keyring.file_path)
    assert not path.exists() or b"sk-ant-secret-1" not in path.read_bytes()
    assert core.settings.api_key_now() is None


async def test_a_key_already_in_a_plaintext_keyring_is_not_used(
    core, monkeypatch, plaintext_keyring
):
    """A key an older program left in a plaintext keyring file is not read (Yak says there is
    no key rather than use a secret kept in the clear)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    plaintext_keyring.set_password("yak", "anthropic", "sk-ant-plain")
    assert core.settings.api_key_now() is None
    assert await core.settings.key_source() is None


async def test_a_session_key_is_used_for_this_core_only_and_written_nowhere(
    core, make_core, monkeypatch, data_dir
):
    """With no keyring at all, a key given for this session only is used (source "session")
    by this core, is unknown to another process's core, and no file of the data folder holds
    it; forgetting it leaves no key."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    await core.settings.use_session_key("  sk-ant-session  ")
    assert core.settings.api_key_now() == "sk-ant-session"
    assert await core.settings.key_source() == "session"
    assert core.settings.key_available is True
    other = make_core()
    assert other.settings.api_key_now() is None
    core.settings.save(core.settings.current())
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert b"sk-ant-session" not in path.read_bytes(), path
    await core.settings.delete_api_key()
    assert core.settings.api_key_now() is None
    with pytest.raises(UsageError):
        await core.settings.use_session_key("sk a")


LOAD_BOTH = """
import json, sys, threading, time
seen = {}

class Spy:  # notes which thread loads a module for the first time, and when
    def find_spec(self, name, path=None, target=None):
        now = time.monotonic()
        first, _last = seen.get(threading.current_thread().name, (now, now))
        seen[threading.current_thread().name] = (first, now)

from yak.llm import credentials, sdk
sys.meta_path.insert(0, Spy())
start = threading.Barrier(2)
def load_sdk():
    start.wait()
    sdk.load()
def load_keyring():
    start.wait()
    credentials.keyring_backends()
threads = [threading.Thread(target=load_sdk, name="sdk"),
           threading.Thread(target=load_keyring, name="keyring")]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps(seen))
"""


def test_the_sdk_and_the_keyring_never_load_at_the_same_time(tmp_path):
    """The warm-up's SDK import and the key check's keyring import started at the same moment
    in a fresh interpreter (as at the app's start): one loads all its modules before the other
    loads any, so neither can meet the other's half-initialized module (an intermittent
    "circular import" at start before ``yak.llm.sdk.import_lock``; without it the two spans
    overlap)."""
    import json
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_BOTH],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    spans = json.loads(done.stdout)
    sdk_first, sdk_last = spans["sdk"]
    keyring_first, keyring_last = spans["keyring"]
    assert sdk_last < keyring_first or keyring_last < sdk_first, spans
