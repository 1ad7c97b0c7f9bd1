"""WorkspaceService: the async facade over MemoryStore, its events and the external-change watcher.

Plain asyncio (the service is Qt-free). Writes by "another process" go through a second
database handle, as the CLI's would.
"""

from __future__ import annotations

import asyncio

import pytest

from yak.db import open_database
from yak.domain import RefreshOutcome, RefreshStatus
from yak.errors import CeilingExceeded, ConflictError, UsageError, WorkspaceNotFound, YakError
from yak.events import EventBus, MemoryUpdated
from yak.memory.store import MemoryStore
from yak.workspace.service import WorkspaceService


@pytest.fixture
def setup(db, data_dir, tmp_path):
    bus = EventBus()
    events: list[MemoryUpdated] = []
    bus.subscribe(MemoryUpdated, events.append)
    service = WorkspaceService(store=MemoryStore(db), db=db, bus=bus)
    folder = tmp_path / "proj"
    folder.mkdir()
    yield service, events, folder
    service.close()


def write_elsewhere(data_dir, workspace_id: str, text: str) -> int:
    other = open_database(data_dir)
    try:
        store = MemoryStore(other)
        return store.write(workspace_id, text,
                           expected_version=store.read(workspace_id).version).version
    finally:
        other.close()


def test_save_publishes_one_event_per_new_version(setup):
    """A save that changes the text publishes MemoryUpdated("hand") with the new version; saving
    the same text again writes nothing and publishes nothing."""
    service, events, folder = setup

    async def body():
        workspace = await service.open(str(folder))
        document = await service.save(workspace.id, "- a\r\n", expected_version=0)
        assert (document.content, document.version) == ("- a\n", 1)
        assert events == [MemoryUpdated(workspace.id, 1, "hand")]
        again = await service.save(workspace.id, "- a\n", expected_version=1)
        assert again.version == 1
        assert len(events) == 1

    asyncio.run(body())


def test_refused_writes_change_nothing_and_publish_nothing(setup):
    """Over the ceiling and stale saves raise the store's errors; the document is unchanged
    byte for byte and no event is published."""
    service, events, folder = setup

    async def body():
        workspace = await service.open(str(folder))
        await service.save(workspace.id, "- keep\n", expected_version=0)
        events.clear()
        with pytest.raises(CeilingExceeded, match="201 lines; the limit is 200"):
            await service.save(workspace.id, "x\n" * 201, expected_version=1)
        with pytest.raises(ConflictError):
            await service.save(workspace.id, "- stale\n", expected_version=0)
        assert (await service.read(workspace.id)).content.encode() == b"- keep\n"
        assert events == []

    asyncio.run(body())


def test_opening_a_missing_folder_is_a_sentence(setup, tmp_path):
    service, _events, _folder = setup

    async def body():
        with pytest.raises(WorkspaceNotFound) as info:
            await service.open(str(tmp_path / "nope"))
        assert "nope" in str(info.value)
        with pytest.raises(UsageError, match="Choose a folder"):
            await service.open("  ")

    asyncio.run(body())


def test_watcher_step_reports_writes_by_another_process_once(setup, data_dir):
    """A write through another database handle is noticed by the watcher's step and published
    as MemoryUpdated("external") once — for the workspace on screen and for one the UI never
    read (a memory the CLI created, which the Settings list must show); the service's own writes
    are not reported again, and an untouched workspace is not reported (the negative)."""
    service, events, folder = setup
    other_folder = folder.parent / "other"
    other_folder.mkdir()
    quiet_folder = folder.parent / "quiet"
    quiet_folder.mkdir()

    async def body():
        workspace = await service.open(str(folder))
        unwatched = await service.open(str(other_folder))
        quiet = await service.open(str(quiet_folder))
        await service.save(quiet.id, "- stays as it is\n", expected_version=0)
        await service.read(workspace.id)
        assert await service.check_external_changes() == []
        events.clear()

        version = write_elsewhere(data_dir, workspace.id, "- from the CLI\n")
        other_version = write_elsewhere(data_dir, unwatched.id, "- a memory the CLI created\n")
        assert sorted(await service.check_external_changes()) == sorted(
            [workspace.id, unwatched.id])
        assert sorted(events, key=lambda e: e.workspace_id) == sorted(
            [MemoryUpdated(workspace.id, version, "external"),
             MemoryUpdated(unwatched.id, other_version, "external")],
            key=lambda e: e.workspace_id)
        assert await service.check_external_changes() == []

        events.clear()
        await service.save(workspace.id, "- mine\n", expected_version=version)
        assert await service.check_external_changes() == []
        assert events == [MemoryUpdated(workspace.id, version + 1, "hand")]

    asyncio.run(body())


def test_watcher_task_publishes_without_being_called(setup, data_dir):
    """The started watcher polls by itself (a short interval here) and publishes the change."""
    service, events, folder = setup
    service._poll_interval_s = 0.01

    async def body():
        workspace = await service.open(str(folder))
        await service.read(workspace.id)
        service.start_watching()
        write_elsewhere(data_dir, workspace.id, "- later\n")
        for _ in range(2000):  # a hang guard, not a timing assertion
            if events:
                break
            await asyncio.sleep(0.005)
        service.stop_watching()
        assert events == [MemoryUpdated(workspace.id, 1, "external")]

    asyncio.run(body())


def test_export_refuses_to_overwrite_without_force(setup, tmp_path):
    """Export writes the exact bytes; an existing file is refused without force (unchanged) and
    overwritten with it."""
    service, _events, folder = setup
    target = tmp_path / "memory.txt"
    target.write_bytes(b"precious")

    async def body():
        workspace = await service.open(str(folder))
        await service.save(workspace.id, "- é\n", expected_version=0)
        with pytest.raises(UsageError, match="already exists"):
            await service.export_file(workspace.id, target, "text")
        assert target.read_bytes() == b"precious"
        written = await service.export_file(workspace.id, target, "text", force=True)
        assert target.read_bytes() == "- é\n".encode() and written == len("- é\n".encode())

    asyncio.run(body())


def test_import_of_a_missing_file_or_non_text_is_refused(setup, tmp_path):
    service, events, folder = setup
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 8)

    async def body():
        workspace = await service.open(str(folder))
        await service.save(workspace.id, "- keep\n", expected_version=0)
        events.clear()
        with pytest.raises(UsageError, match="No such file"):
            await service.import_file(workspace.id, tmp_path / "missing.txt")
        with pytest.raises(UsageError):
            await service.import_file(workspace.id, garbage)
        assert (await service.read(workspace.id)).content.encode() == b"- keep\n"
        assert events == []
        good = tmp_path / "good.txt"
        good.write_bytes(b"\xef\xbb\xbf- imported\r\n")
        document = await service.import_file(workspace.id, good, expected_version=1)
        assert document.content == "- imported\n"
        assert events == [MemoryUpdated(workspace.id, 2, "import")]

    asyncio.run(body())


def test_refresh_state_and_forced_refresh(setup, db):
    """Without a queue or refresher, a forced refresh says it is unavailable; with a refresher
    it runs and the state carries the last attempt."""
    service, _events, folder = setup

    class Refresher:
        def __init__(self) -> None:
            self.calls = []

        async def refresh(self, workspace_id, *, rebuild=False):
            self.calls.append((workspace_id, rebuild))
            outcome = RefreshOutcome(status=RefreshStatus.REFUSED_FLOOR, workspace_id=workspace_id,
                                     version=0, lines=0, reason="too short")
            MemoryStore(db).record_attempt(outcome, base_version=0)
            return outcome

    async def body():
        workspace = await service.open(str(folder))
        assert not service.refresh_available
        with pytest.raises(YakError, match="not available"):
            await service.refresh_now(workspace.id)
        refresher = Refresher()
        with_refresher = WorkspaceService(store=MemoryStore(db), db=db, bus=EventBus(),
                                          refresher=refresher)
        outcome = await with_refresher.refresh_now(workspace.id, rebuild=True)
        assert outcome.status is RefreshStatus.REFUSED_FLOOR
        assert refresher.calls == [(workspace.id, True)]
        state = await with_refresher.refresh_state(workspace.id)
        assert state.state == "idle"
        assert state.last_attempt is not None and state.last_attempt.reason == "too short"
        with_refresher.close()

    asyncio.run(body())


@pytest.mark.parametrize("fmt, name", [("text", "m.txt"), ("markdown", "m.md"), ("json", "m.json")])
def test_an_export_imports_back_as_the_same_document(setup, tmp_path, fmt, name):
    """Settings › Export then Import… in another folder gives the same stored bytes, whatever
    the format: the Markdown title and the JSON wrapping are not imported as memory."""
    service, _events, folder = setup
    other = tmp_path / "other"
    other.mkdir()
    target = tmp_path / name
    text = "Project\n- é and ruff\n\nDecisions\n- pin 3.12\n"

    async def body():
        source = await service.open(str(folder))
        await service.save(source.id, text, expected_version=0)
        await service.export_file(source.id, target, fmt)
        destination = await service.open(str(other))
        await service.import_file(destination.id, target, expected_version=0)
        assert (await service.read(destination.id)).content.encode() == text.encode()

    asyncio.run(body())
