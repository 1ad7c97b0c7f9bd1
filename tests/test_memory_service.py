"""The memory service (``core.memory``): its writes and the ``MemoryChanged`` events they publish,
the watcher that notices writes by another process, file import and export; and the workspace
registry (``core.workspaces``) that turns a path into a workspace for every front end.

Writes by "another process" go through a second core on the same database, as the CLI's would.
"""

from __future__ import annotations

import shutil

import pytest

from tests.support import add_turns, project_folder, record, until, workspace_with_document
from tests.support.fake_api import text
from yak.domain import QueueState, RefreshStatus
from yak.errors import CeilingExceeded, ConflictError, UsageError, WorkspaceNotFound
from yak.events import MemoryChanged, ProposalsChanged, WorkspaceChanged
from yak.memory.prompts.rewrite import request_text

# Run against SQLite, and against PostgreSQL when a test server is configured.
pytestmark = pytest.mark.databases


@pytest.fixture
def folder(tmp_path):
    return project_folder(tmp_path, "proj")


@pytest.fixture
def events(core):
    """Every ``MemoryChanged`` the core publishes during the test."""
    return record(core.bus, MemoryChanged)


async def write_elsewhere(cli, workspace_id: str, text: str) -> int:
    """A hand save by another process (a second core); returns the new version."""
    return (await cli.memory.save(workspace_id, text, expected_version=None)).version


# --- writes and their events ----------------------------------------------------------------
async def test_save_publishes_one_event_per_new_version(core, events, folder):
    """A save that changes the text publishes MemoryChanged("hand") with the new version; saving
    the same text again writes nothing and publishes nothing."""
    workspace = await core.workspaces.open(str(folder))
    document = await core.memory.save(workspace.id, "- a\r\n", expected_version=0)
    assert (document.content, document.version) == ("- a\n", 1)
    assert events == [MemoryChanged(workspace.id, 1, "hand", None)]
    again = await core.memory.save(workspace.id, "- a\n", expected_version=1)
    assert again.version == 1
    assert len(events) == 1


async def test_writing_the_stored_text_publishes_nothing_even_unread(core, make_core, folder):
    """A save of the text already stored, or a clear of an empty memory, by a core that never
    read the workspace (no base version given) writes nothing and publishes nothing."""
    workspace = await core.workspaces.open(str(folder))
    await core.memory.save(workspace.id, "- a\n", expected_version=0)
    cli = make_core()
    events = record(cli.bus, MemoryChanged)
    assert (await cli.memory.save(workspace.id, "- a\n", expected_version=None)).version == 1
    assert events == []
    other = await cli.workspaces.open(str(project_folder(folder.parent, "empty")))
    fresh = make_core()
    fresh_events = record(fresh.bus, MemoryChanged)
    assert (await fresh.memory.clear(other.id)).version == 0
    assert fresh_events == []
    assert (await fresh.memory.save(workspace.id, "- b\n", expected_version=None)).version == 2
    assert fresh_events == [MemoryChanged(workspace.id, 2, "hand", None)]


async def test_every_kind_of_write_publishes_its_source_and_its_initiator(
    core, events, folder, tmp_path
):
    """Import, restore, clear and an applied rewrite each publish their revision source; the
    ``initiator`` a view passes rides on the event (so it can skip its own change), background
    work publishes ``None``."""
    workspace = await core.workspaces.open(str(folder))
    view = object()
    await core.memory.save(workspace.id, "- a\n", expected_version=0, initiator=view)
    await core.memory.import_bytes(workspace.id, b"- b\n", initiator=view)
    await core.memory.restore(workspace.id, "1", initiator=view)
    await core.memory.apply_rewrite(
        workspace.id, "- c\n", base_version=3, model="m", session_ids=(), watermarks={}
    )
    await core.memory.clear(workspace.id)
    assert events == [
        MemoryChanged(workspace.id, 1, "hand", view),
        MemoryChanged(workspace.id, 2, "import", view),
        MemoryChanged(workspace.id, 3, "restore", view),
        MemoryChanged(workspace.id, 4, "refresh", None),
        MemoryChanged(workspace.id, 5, "clear", None),
    ]


async def test_refused_writes_change_nothing_and_publish_nothing(core, events, folder):
    """Over the ceiling and stale saves raise the service's errors; the document is unchanged
    byte for byte and no event is published."""
    workspace = await core.workspaces.open(str(folder))
    await core.memory.save(workspace.id, "- keep\n", expected_version=0)
    events.clear()
    with pytest.raises(CeilingExceeded, match=r"201 lines \(limit 200\)"):
        await core.memory.save(workspace.id, "x\n" * 201, expected_version=1)
    with pytest.raises(ConflictError):
        await core.memory.save(workspace.id, "- stale\n", expected_version=0)
    with pytest.raises(UsageError, match="The input is empty"):
        await core.memory.save(workspace.id, " \n", expected_version=1, require_text=True)
    assert (await core.memory.read(workspace.id)).content.encode() == b"- keep\n"
    assert events == []


# --- writes by another process --------------------------------------------------------------
async def test_watcher_step_reports_writes_by_another_process_once(core, make_core, events, folder):
    """A write through another core is noticed by the watcher's step and published as
    MemoryChanged("external") once — for the workspace on screen and for one the UI never read
    (a memory the CLI created, which the Settings list must show); the service's own writes are
    not reported again, and an untouched workspace is not reported (the negative)."""
    cli = make_core()
    workspace = await core.workspaces.open(str(folder))
    unwatched = await core.workspaces.open(str(project_folder(folder.parent, "other")))
    quiet = await core.workspaces.open(str(project_folder(folder.parent, "quiet")))
    await core.memory.save(quiet.id, "- stays as it is\n", expected_version=0)
    await core.memory.read(workspace.id)
    assert await core.watcher.check_external_changes() == []
    events.clear()

    version = await write_elsewhere(cli, workspace.id, "- from the CLI\n")
    other_version = await write_elsewhere(cli, unwatched.id, "- a memory the CLI created\n")
    assert sorted(await core.watcher.check_external_changes()) == sorted(
        [workspace.id, unwatched.id]
    )
    assert sorted(events, key=lambda e: e.workspace_id) == sorted(
        [
            MemoryChanged(workspace.id, version, "external", None),
            MemoryChanged(unwatched.id, other_version, "external", None),
        ],
        key=lambda e: e.workspace_id,
    )
    assert await core.watcher.check_external_changes() == []

    events.clear()
    await core.memory.save(workspace.id, "- mine\n", expected_version=version)
    assert await core.watcher.check_external_changes() == []
    assert events == [MemoryChanged(workspace.id, version + 1, "hand", None)]


async def test_watcher_task_publishes_without_being_called(make_core, folder):
    """The started watcher polls by itself (a short interval here) and publishes the change
    another process made; stopped, it polls no more."""
    core = make_core(poll_interval_s=0.01)
    events = record(core.bus, MemoryChanged)
    cli = make_core()
    workspace = await core.workspaces.open(str(folder))
    await core.memory.read(workspace.id)
    core.watcher.start_watching()
    await write_elsewhere(cli, workspace.id, "- later\n")
    await until(lambda: events, what="the watcher to publish the CLI's write")
    core.watcher.stop_watching()
    assert events == [MemoryChanged(workspace.id, 1, "external", None)]


async def test_watcher_step_reports_proposals_and_settings_changed_elsewhere(
    core, make_core, folder
):
    """Another process proposes a change, rejects it, switches the memory off and sets the
    review mode: each step publishes what changed (``ProposalsChanged`` with the count waiting,
    ``WorkspaceChanged``) once, and the document is not reported (its version did not move);
    a step with nothing new publishes nothing (the negative)."""
    cli = make_core()
    workspace = await core.workspaces.open(str(folder))
    await core.memory.save(workspace.id, "- fact\n", expected_version=0)
    await core.watcher.check_external_changes()  # the first step learns the stamps
    heard = record(core.bus, MemoryChanged, ProposalsChanged, WorkspaceChanged)

    proposal, _lands = await cli.review.propose_from_agent(
        workspace.id, text="- more", reason="a test", origin="an agent over MCP"
    )
    assert await core.watcher.check_external_changes() == []
    assert heard == [ProposalsChanged(workspace.id, 1)]
    assert await core.watcher.check_external_changes() == []
    assert len(heard) == 1

    await cli.review.reject(workspace.id, proposal.id)
    await cli.workspaces.set_memory_enabled(workspace.id, enabled=False)
    await core.watcher.check_external_changes()
    assert heard[1:] == [ProposalsChanged(workspace.id, 0), WorkspaceChanged(workspace.id)]

    await cli.memory.set_review_mode(workspace.id, "review")
    await core.watcher.check_external_changes()
    assert heard[3:] == [WorkspaceChanged(workspace.id)]
    assert await core.watcher.check_external_changes() == [] and len(heard) == 4


# --- files ----------------------------------------------------------------------------------
async def test_export_refuses_to_overwrite_without_force(core, folder, tmp_path):
    """Export writes the exact bytes; an existing file is refused without force (unchanged) and
    overwritten with it."""
    target = tmp_path / "memory.txt"
    target.write_bytes(b"precious")
    workspace = await core.workspaces.open(str(folder))
    await core.memory.save(workspace.id, "- é\n", expected_version=0)
    with pytest.raises(UsageError, match="already exists"):
        await core.memory.export_file(workspace, target, "text")
    assert target.read_bytes() == b"precious"
    written = await core.memory.export_file(workspace, target, "text", force=True)
    assert target.read_bytes() == "- é\n".encode() and written == len("- é\n".encode())


async def test_import_of_a_missing_file_or_non_text_is_refused(core, events, folder, tmp_path):
    """A missing file or binary data is refused with a sentence: nothing written, nothing
    published; a UTF-8 file with a BOM and CRLF imports as an ``import`` revision."""
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 8)
    workspace = await core.workspaces.open(str(folder))
    await core.memory.save(workspace.id, "- keep\n", expected_version=0)
    events.clear()
    with pytest.raises(UsageError, match="no such file"):
        await core.memory.import_file(workspace.id, tmp_path / "missing.txt")
    with pytest.raises(UsageError):
        await core.memory.import_file(workspace.id, garbage)
    assert (await core.memory.read(workspace.id)).content.encode() == b"- keep\n"
    assert events == []
    good = tmp_path / "good.txt"
    good.write_bytes(b"\xef\xbb\xbf- imported\r\n")
    document = await core.memory.import_file(workspace.id, good, expected_version=1)
    assert document.content == "- imported\n"
    assert events == [MemoryChanged(workspace.id, 2, "import", None)]


@pytest.mark.parametrize("fmt, name", [("text", "m.txt"), ("markdown", "m.md"), ("json", "m.json")])
async def test_an_export_imports_back_as_the_same_document(core, folder, tmp_path, fmt, name):
    """Settings › Export then Import… in another folder gives the same stored bytes, whatever
    the format: the Markdown title and the JSON wrapping are not imported as memory."""
    target = tmp_path / name
    content = "Project\n- é and ruff\n\nDecisions\n- pin 3.12\n"
    source = await core.workspaces.open(str(folder))
    await core.memory.save(source.id, content, expected_version=0)
    await core.memory.export_file(source, target, fmt)
    destination = await core.workspaces.open(str(project_folder(tmp_path, "other")))
    await core.memory.import_file(destination.id, target, expected_version=0)
    assert (await core.memory.read(destination.id)).content.encode() == content.encode()


# --- the refresh state a view reads ---------------------------------------------------------
async def test_forced_refresh_and_the_state_a_view_reads(core, fake_api, folder):
    """A forced refresh runs at once (``rebuild`` passed through) and returns its outcome; the
    workspace's snapshot is then idle and carries that attempt and the document's time."""
    lines = "".join(f"- fact {i}: the project keeps this\n" for i in range(20))
    workspace = await workspace_with_document(core, folder, lines)
    add_turns(core, workspace.id, 1, turn=lambda n: ("Summarize the project.", "Ok."))
    fake_api.script(text("- too short\n"))
    outcome = await core.refresh.refresh_now(workspace.id, rebuild=True)
    assert outcome.status is RefreshStatus.REFUSED_FLOOR
    assert "rebuild" in request_text(fake_api.message_requests[0].body["messages"])
    state = await core.refresh.snapshot(workspace.id)
    assert (state.state, state.due_in) == (QueueState.IDLE, None)
    assert state.last_attempt is not None and state.last_attempt.reason == outcome.reason
    assert state.document_updated_at == (await core.memory.read(workspace.id)).updated_at
    listed = await core.refresh.snapshots()
    attempt = listed[workspace.id].last_attempt
    assert attempt is not None and attempt.status is RefreshStatus.REFUSED_FLOOR


# --- the registry ---------------------------------------------------------------------------
async def test_opening_a_missing_folder_is_a_sentence(core, tmp_path):
    """A missing folder names itself; a blank path asks for a folder."""
    with pytest.raises(WorkspaceNotFound) as info:
        await core.workspaces.open(str(tmp_path / "nope"))
    assert "nope" in str(info.value)
    with pytest.raises(UsageError, match="Choose a folder"):
        await core.workspaces.open("  ")


async def test_a_command_that_writes_registers_the_folder_without_marking_it_opened(core, folder):
    """``for_write`` registers an existing folder (found again by ``find``) without putting it
    in the app's recent list; a missing folder is refused with the shared sentence."""
    workspace = await core.workspaces.for_write(str(folder))
    assert (await core.workspaces.find(str(folder))).id == workspace.id
    assert await core.workspaces.recent() == []
    assert (await core.workspaces.for_write(str(folder) + "/")).id == workspace.id
    with pytest.raises(WorkspaceNotFound, match="no such folder: .*gone"):
        await core.workspaces.for_write(str(folder.parent / "gone"))


async def test_a_command_that_reads_creates_nothing_and_finds_orphans(core, folder, tmp_path):
    """``for_read`` of a folder never stored reads as an unsaved workspace (same id as once
    stored) and stores nothing; a stored workspace whose folder is gone is still found; a path
    that is neither is refused."""
    unsaved, stored = await core.workspaces.for_read(str(folder))
    assert stored is False and await core.workspaces.find(str(folder)) is None
    workspace = await core.workspaces.open(str(folder))
    assert workspace.id == unsaved.id
    await core.memory.save(workspace.id, "- kept\n", expected_version=0)
    shutil.rmtree(folder)
    found, stored = await core.workspaces.for_read(str(folder))
    assert (found.id, stored) == (workspace.id, True)
    with pytest.raises(WorkspaceNotFound, match="no such folder"):
        await core.workspaces.for_read(str(tmp_path / "never"))
    file = tmp_path / "notes.txt"
    file.write_text("x")
    with pytest.raises(WorkspaceNotFound, match="is a file, not a folder"):
        await core.workspaces.for_read(str(file))
