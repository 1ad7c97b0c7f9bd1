"""``yak memory stale``, ``blame``'s ages and ``show``/``history --as-of`` as a user runs them
("Age and staleness", "As of a date" in docs/memory.md): the command line in this process on
a stored workspace whose revisions and messages are moved into the past in the SQLite file
(``tests/support/aging.py``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.aging import age_revision
from tests.support.builders import project_folder, seed_document, workspace_with_document
from tests.support.cli import run_cli
from tests.test_evidence import PG, UV, refreshed_with_evidence
from tests.test_mcp import call, mcp_session, refused

HAND_LINE = "- Lint with ruff before every commit."
OLD_REFRESH = "- The staging server is staging.example.org."
NEW_REFRESH = "- Releases are cut on Fridays."


@pytest.fixture
def aged(core, loop, tmp_path, data_dir):
    """A person's line (v1), a refresh's line (v2), both written 120 days ago, and a refresh's
    line written yesterday (v3). Returns the workspace."""

    async def build():
        folder = project_folder(tmp_path, "proj")
        workspace = await workspace_with_document(core, folder, HAND_LINE + "\n")
        await seed_document(core, workspace.id, f"{HAND_LINE}\n{OLD_REFRESH}\n")
        await seed_document(core, workspace.id, f"{HAND_LINE}\n{OLD_REFRESH}\n{NEW_REFRESH}\n")
        return workspace

    workspace = loop.run_until_complete(build())
    for version, days in ((1, 120), (2, 120), (3, 1)):
        age_revision(data_dir, version, days)
    return workspace


def stale_json(capsys, workspace, *more: str) -> dict:
    code, out, err = run_cli(capsys, "memory", "stale", "--json", "-w", workspace.path, *more)
    assert code == 0, err
    return json.loads(out)


def test_stale_lists_an_aged_refresh_line_and_not_a_persons_line(aged, capsys):
    """The refresh's line of 120 days is stale (``aged``); the person's line as old is not, nor
    the refresh's line of yesterday."""
    payload = stale_json(capsys, aged)
    assert payload["after_days"] == 90
    assert [(s["line"], s["text"], s["reasons"]) for s in payload["lines"]] == [
        (2, OLD_REFRESH, ["aged"])
    ]


def test_keeping_a_stale_line_confirms_it_and_takes_it_off_the_list(aged, core, loop, capsys):
    """``stale --keep 2``: the list is empty, the document unchanged, and the confirmation is
    recorded: ``blame --json`` says the line was last confirmed now, and the injected block
    would not mark it."""
    before = datetime.now(UTC) - timedelta(seconds=1)
    content = loop.run_until_complete(core.memory.read(aged.id)).content
    payload = stale_json(capsys, aged, "--keep", "2")
    assert payload["kept"] == [2] and payload["lines"] == []
    assert stale_json(capsys, aged)["lines"] == []
    assert loop.run_until_complete(core.memory.read(aged.id)).content == content

    code, out, _ = run_cli(capsys, "memory", "blame", "--json", "-w", aged.path)
    confirmed = datetime.fromisoformat(json.loads(out)[1]["last_confirmed"])
    assert code == 0 and confirmed >= before.replace(microsecond=0)


def test_removing_a_stale_line_is_a_hand_removal_with_its_tombstone(aged, core, loop, capsys):
    """``stale --remove 2``: a new version without the line, and the line tombstoned so a
    refresh cannot bring it back silently."""
    payload = stale_json(capsys, aged, "--remove", "2")
    assert payload["removed"] == [2] and payload["version"] == 4 and payload["lines"] == []
    document = loop.run_until_complete(core.memory.read(aged.id))
    assert document.content == f"{HAND_LINE}\n{NEW_REFRESH}\n"
    tombstones = loop.run_until_complete(core.memory.tombstones(aged.id))
    assert [t.text for t in tombstones] == [OLD_REFRESH]


def test_keep_and_remove_refuse_a_line_that_is_not_there(aged, capsys):
    """A line number outside the document: exit 2 and one sentence; nothing recorded."""
    code, out, err = run_cli(capsys, "memory", "stale", "--keep", "9", "-w", aged.path)
    assert code == 2 and out == ""
    assert err == (
        "yak: Line 9 is not a line of the memory document "
        "(3 lines; 'yak memory stale' numbers them).\n"
    )
    assert stale_json(capsys, aged)["lines"][0]["line"] == 2


def test_show_as_of_the_day_before_a_refresh_prints_the_earlier_version(aged, capsys):
    """Version 2 was written 120 days ago and version 3 yesterday: ``--as-of`` two days ago
    prints version 2 byte for byte, ``--as-of`` today the current one, and a day before the
    first write prints nothing."""

    def shown(day: datetime) -> tuple[int, str]:
        code, out, _ = run_cli(
            capsys,
            "memory",
            "show",
            "--as-of",
            day.astimezone().date().isoformat(),
            "-w",
            aged.path,
        )
        return code, out

    now = datetime.now(UTC)
    assert shown(now - timedelta(days=2)) == (0, f"{HAND_LINE}\n{OLD_REFRESH}\n")
    assert shown(now) == (0, f"{HAND_LINE}\n{OLD_REFRESH}\n{NEW_REFRESH}\n")
    assert shown(now - timedelta(days=200)) == (0, "")


@pytest.mark.parametrize("given", ["banana", "2026-13-01", "yesterday"])
def test_a_date_that_is_not_one_is_one_sentence_and_exit_2(aged, capsys, given):
    code, out, err = run_cli(capsys, "memory", "show", "--as-of", given, "-w", aged.path)
    assert (code, out) == (2, "")
    assert err == f"yak: --as-of takes a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM), not {given!r}.\n"


def test_history_as_of_and_since_keep_the_revisions_of_those_dates(aged, capsys):
    """``--as-of`` two days ago: versions 2 and 1; ``--since`` two days ago: version 3."""

    def versions(*option: str) -> list[int]:
        code, out, err = run_cli(capsys, "memory", "history", "--json", "-w", aged.path, *option)
        assert code == 0, err
        return [r["version"] for r in json.loads(out)]

    two_days_ago = (datetime.now(UTC) - timedelta(days=2)).astimezone().date().isoformat()
    assert versions("--as-of", two_days_ago) == [2, 1]
    assert versions("--since", two_days_ago) == [3]


def test_blame_json_gives_first_said_and_entered_for_every_refresh_line(
    core, loop, tmp_path, capsys
):
    """The refresh's line backed by a passage was first said when that message was written,
    before it entered the document; the unbacked one was first said when it entered."""
    workspace, session, backing = loop.run_until_complete(refreshed_with_evidence(core, tmp_path))
    code, out, _ = run_cli(capsys, "memory", "blame", "--json", "-w", workspace.path)
    assert code == 0
    rows = {row["text"]: row for row in json.loads(out)}
    [said] = [
        m.created_at
        for m in core.chat.conversations.messages(session)
        if m.id == backing.message_id
    ]
    uv, pg = rows[UV], rows[PG]
    assert uv["source"] == pg["source"] == "refresh"
    assert uv["first_said"] == said.isoformat(timespec="seconds").replace("+00:00", "Z")
    assert uv["first_said"] <= uv["entered"] == uv["created_at"]
    assert pg["first_said"] == pg["entered"] == pg["last_confirmed"] == pg["created_at"]


async def test_mcp_memory_read_as_of_a_date_gives_the_version_of_then(aged, data_dir):
    """``memory_read(as_of=…)`` over a real stdio session: two days ago, version 2 word for
    word; a date that is not one is a tool error of one sentence."""
    two_days_ago = (datetime.now(UTC) - timedelta(days=2)).astimezone().date().isoformat()
    async with mcp_session(data_dir, aged.path) as session:
        then = await call(session, "memory_read", as_of=two_days_ago)
        now = await call(session, "memory_read")
        message = await refused(session, "memory_read", as_of="last week")
    assert (then["version"], then["content"]) == (2, f"{HAND_LINE}\n{OLD_REFRESH}\n")
    assert now["version"] == 3
    assert message.endswith(
        ": as_of takes a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM), not 'last week'."
    )


GONE_LINE = "- Bootstrap a new machine with scripts/bootstrap.sh first."


@pytest.fixture
def aged_and_gone(core, loop, tmp_path, data_dir):
    """``aged``'s three lines, a refresh's line of yesterday naming ``scripts/bootstrap.sh``
    (not in the folder), and a person's line naming ``README.md`` (in the folder)."""
    folder = project_folder(tmp_path, "proj")
    (folder / "README.md").write_text("hello\n")
    text = f"{HAND_LINE}\n{OLD_REFRESH}\n{NEW_REFRESH}\n"

    async def build():
        workspace = await workspace_with_document(core, folder, HAND_LINE + "\n")
        await seed_document(core, workspace.id, f"{HAND_LINE}\n{OLD_REFRESH}\n")
        await seed_document(core, workspace.id, text)
        await seed_document(core, workspace.id, f"{text}{GONE_LINE}\n")
        current = await core.memory.read(workspace.id)
        await core.memory.save(
            workspace.id,
            f"{text}{GONE_LINE}\n- See README.md first.\n",
            expected_version=current.version,
        )
        return workspace

    workspace = loop.run_until_complete(build())
    for version, days in ((1, 120), (2, 120), (3, 1), (4, 1)):
        age_revision(data_dir, version, days)
    return workspace, folder


def test_stale_lists_an_aged_line_and_a_line_naming_what_is_gone_not_a_hand_line(
    aged_and_gone, capsys
):
    """Issue 32's case: ``stale --json`` lists the aged refresh line and the line naming a
    script the folder lacks (with what is missing), not the person's lines; once the script
    is there again, only the aged line is left."""
    workspace, folder = aged_and_gone
    payload = stale_json(capsys, workspace)
    assert [(s["line"], s["reasons"], s["missing"]) for s in payload["lines"]] == [
        (2, ["aged"], []),
        (4, ["gone"], ["scripts/bootstrap.sh"]),
    ]
    code, out, _ = run_cli(capsys, "memory", "stale", "-w", workspace.path)
    assert code == 0 and "gone (scripts/bootstrap.sh)" in out

    (folder / "scripts").mkdir()
    (folder / "scripts" / "bootstrap.sh").write_text("#!/bin/sh\n")
    assert [s["line"] for s in stale_json(capsys, workspace)["lines"]] == [2]


def test_keeping_a_line_naming_what_is_gone_takes_it_off_the_list(aged_and_gone, capsys):
    """The person keeps line 4 (the script is elsewhere now, say): it is confirmed and no
    longer listed, though the reference is still gone."""
    workspace, _ = aged_and_gone
    payload = stale_json(capsys, workspace, "--keep", "4")
    assert [s["line"] for s in payload["lines"]] == [2]


def test_a_section_title_is_never_stale(core, loop, tmp_path, data_dir, capsys):
    """A refresh's document of 120 days with a section title: its fact is aged, the title is
    not listed (it states nothing to keep or remove)."""

    async def build():
        folder = project_folder(tmp_path, "proj")
        workspace = await workspace_with_document(core, folder)
        await seed_document(core, workspace.id, f"Project\n{OLD_REFRESH}\n")
        return workspace

    workspace = loop.run_until_complete(build())
    age_revision(data_dir, 1, 120)
    payload = stale_json(capsys, workspace)
    assert [(s["line"], s["reasons"]) for s in payload["lines"]] == [(2, ["aged"])]
