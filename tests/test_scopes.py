"""Scopes as a user meets them on the command line: a subfolder of a workspace with a memory,
a renamed folder whose memory was left behind (``show`` names them; ``reattach`` moves one).
Exit codes, stdout JSON and the stored bytes (``yak.cli.main`` in process)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.builders import git_worktree
from tests.support.cli import run_cli as run
from tests.support.cli import seed_memory as seed
from yak.bootstrap import open_core

FIFTY = "".join(f"- fact {n}\n" for n in range(1, 51))


@pytest.fixture
def proj(tmp_path, data_dir):
    """``proj`` with a 50-line memory and its subfolder ``proj/backend`` (none of its own)."""
    root = tmp_path / "proj"
    (root / "backend").mkdir(parents=True)
    seed(data_dir, root, FIFTY)
    return root


def test_show_json_names_the_enclosing_workspace_and_its_lines(proj, capsys):
    """``show -w proj/backend --json`` (never stored): exit 0, an empty document, and
    ``enclosing`` naming ``proj`` with its 50 lines."""
    code, out, err = run(capsys, "memory", "show", "-w", proj / "backend", "--json")
    assert (code, err) == (0, "")
    shown = json.loads(out)
    assert shown["content"] == ""
    assert shown["enclosing"]["path"] == str(proj)
    assert shown["enclosing"]["lines"] == 50
    assert shown["enclosing"]["version"] == 1
    assert shown["renamed_from"] is None


def test_plain_show_keeps_stdout_the_document_and_says_it_on_stderr(proj, capsys):
    """Plain ``show`` of the subfolder prints its (empty) document on stdout and one line on
    stderr naming the enclosing workspace, its line count and the command to read it."""
    code, out, err = run(capsys, "memory", "show", "-w", proj / "backend")
    assert (code, out) == (0, "")
    assert err == (
        f"{proj / 'backend'} has no memory of its own; the enclosing workspace {proj} has "
        f"50 lines: 'yak memory show -w {proj}'\n"
    )


def test_a_subfolder_with_its_own_memory_names_no_enclosing_one(proj, data_dir, capsys):
    """Once ``proj/backend`` has its own document, ``enclosing`` is null and stderr is empty;
    the workspace itself has none above it."""
    seed(data_dir, proj / "backend", "- api: fastapi\n")
    code, out, err = run(capsys, "memory", "show", "-w", proj / "backend", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["enclosing"] is None
    code, out, err = run(capsys, "memory", "show", "-w", proj)
    assert (code, out, err) == (0, FIFTY, "")


def test_an_empty_enclosing_document_is_not_offered(tmp_path, data_dir, capsys):
    """A parent registered with an empty document is no memory to offer: ``enclosing`` null."""
    (tmp_path / "top" / "sub").mkdir(parents=True)
    seed(data_dir, tmp_path / "top", "")
    code, out, _ = run(capsys, "memory", "show", "-w", tmp_path / "top" / "sub", "--json")
    assert code == 0
    assert json.loads(out)["enclosing"] is None


@pytest.fixture
def renamed(tmp_path, data_dir):
    """``old/app`` had a 3-line memory, then the folder was moved to ``new/app``."""
    old = tmp_path / "old" / "app"
    old.mkdir(parents=True)
    seed(data_dir, old, "- one\n- two\n- three\n")
    new = tmp_path / "new" / "app"
    new.parent.mkdir()
    shutil.move(old, new)
    return old, new


def test_show_names_the_orphan_a_renamed_folder_looks_like(renamed, capsys):
    """``show --json`` in the renamed folder names the orphan as ``renamed_from`` (path,
    lines); plain ``show`` says it on stderr with the command that moves it."""
    old, new = renamed
    code, out, err = run(capsys, "memory", "show", "-w", new, "--json")
    assert (code, err) == (0, "")
    candidate = json.loads(out)["renamed_from"]
    assert (candidate["path"], candidate["lines"]) == (str(old), 3)
    code, out, err = run(capsys, "memory", "show", "-w", new)
    assert (code, out) == (0, "")
    assert err == (
        f"{new} looks like {old}, which no longer exists and has a memory of 3 lines: "
        f"'yak memory reattach {old} -w {new}' moves it here.\n"
    )


def test_a_folder_renamed_in_place_is_known_by_the_files_its_memory_names(
    tmp_path, data_dir, capsys
):
    """``shop`` (a memory naming ``billing_service`` and ``deploy.sh``) renamed ``shop-v2`` in
    the same folder: ``show`` there names it with the ``reattach`` command; a new folder beside
    it whose files the memory does not name gets no such line."""
    old = tmp_path / "shop"
    (old / "billing_service").mkdir(parents=True)
    (old / "deploy.sh").write_text("#!/bin/sh\n")
    seed(data_dir, old, "- billing_service/ bills the orders\n- ship with ./deploy.sh\n")
    new = tmp_path / "shop-v2"
    old.rename(new)
    (tmp_path / "blog" / "posts").mkdir(parents=True)

    code, out, err = run(capsys, "memory", "show", "-w", new)
    assert (code, out) == (0, "")
    assert err == (
        f"{new} looks like {old}, which no longer exists and has a memory of 2 lines: "
        f"'yak memory reattach {old} -w {new}' moves it here.\n"
    )
    code, out, _ = run(capsys, "memory", "show", "-w", tmp_path / "blog", "--json")
    assert code == 0 and json.loads(out)["renamed_from"] is None
    code, _, err = run(capsys, "memory", "reattach", old, "-w", new)
    assert (code, err) == (0, "")
    code, out, _ = run(capsys, "memory", "show", "-w", new)
    assert out == "- billing_service/ bills the orders\n- ship with ./deploy.sh\n"


def test_reattach_moves_the_memory_and_its_history_here(renamed, capsys):
    """``reattach OLD -w NEW`` exits 0; ``show`` in the new folder prints the old bytes, the
    history is the old one, and the old path no longer lists."""
    old, new = renamed
    code, out, err = run(capsys, "memory", "reattach", old, "-w", new, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["workspace"] == str(new)
    assert json.loads(out)["lines"] == 3
    code, out, _ = run(capsys, "memory", "show", "-w", new, "--json")
    shown = json.loads(out)
    assert (shown["content"], shown["version"], shown["renamed_from"]) == (
        "- one\n- two\n- three\n",
        1,
        None,
    )
    code, out, _ = run(capsys, "memory", "list", "--json")
    assert [row["workspace"] for row in json.loads(out)] == [str(new)]


def test_declining_is_remembered(renamed, capsys):
    """``reattach OLD --decline`` exits 0 and ``show`` stops naming OLD in that folder; the
    orphan keeps its memory."""
    old, new = renamed
    code, out, err = run(capsys, "memory", "reattach", old, "--decline", "-w", new)
    assert (code, err) == (0, "")
    assert out == f"{old} will no longer be offered to {new}.\n"
    code, out, _ = run(capsys, "memory", "show", "-w", new, "--json")
    assert json.loads(out)["renamed_from"] is None
    code, out, _ = run(capsys, "memory", "show", "-w", old)
    assert out == "- one\n- two\n- three\n"


def test_reattach_refuses_a_folder_that_still_exists_or_was_never_stored(proj, tmp_path, capsys):
    """Re-attaching a workspace whose folder exists, or a path never stored, is exit 2 with
    one line, and nothing moves."""
    code, out, err = run(capsys, "memory", "reattach", proj, "-w", proj / "backend")
    assert (code, out) == (2, "")
    assert "still exists" in err and err.count("\n") == 1
    code, out, err = run(capsys, "memory", "reattach", tmp_path / "nowhere", "-w", proj)
    assert (code, out) == (2, "")
    assert err.startswith("yak: no workspace was stored for ")
    code, out, _ = run(capsys, "memory", "show", "-w", proj)
    assert out == FIFTY


@pytest.fixture
def worktree(tmp_path, data_dir):
    """A repository ``app`` (main checkout, a 2-line memory, a ``web`` subfolder) and its linked
    worktree ``app-feature`` made by ``git worktree add``."""
    main_checkout, feature = git_worktree(tmp_path)
    seed(data_dir, main_checkout, "- build: make\n- tests: pytest\n")
    return main_checkout, feature


def test_a_worktree_is_recognized_from_its_git_file(worktree, tmp_path):
    """``main_checkout`` reads the worktree's ``.git`` file: the worktree (and a folder in it)
    maps to the main checkout (and the same folder there); the main checkout, a plain folder
    and a submodule-like ``.git`` file without ``commondir`` map to nothing."""
    from yak.workspace.git import main_checkout

    main, feature = worktree
    assert main_checkout(str(feature)) == str(main)
    assert main_checkout(str(feature / "web")) == str(main / "web")
    assert main_checkout(str(main)) is None
    assert main_checkout(str(main / "web")) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    assert main_checkout(str(plain)) is None
    (plain / "modules" / "sub").mkdir(parents=True)
    (plain / "sub").mkdir()
    (plain / "sub" / ".git").write_text("gitdir: ../modules/sub\n")
    assert main_checkout(str(plain / "sub")) is None


def test_link_makes_a_worktree_share_the_main_checkouts_document(worktree, capsys):
    """``link -w WORKTREE`` (main checkout found from git's files): ``show`` in the worktree
    prints the main checkout's bytes, a ``set`` there writes the one shared document (version
    2 in both), ``show --json`` names ``linked_to``; ``unlink`` gives the worktree its own
    (empty) document back and leaves the shared one as it is."""
    main, feature = worktree
    code, out, err = run(capsys, "memory", "link", "-w", feature)
    assert (code, err) == (0, "")
    assert out == f"{feature} now shares the memory of {main} (2 lines, version 1).\n"
    code, out, _ = run(capsys, "memory", "link", "-w", feature)
    assert (code, out) == (
        0,
        f"{feature} already shares the memory of {main} (2 lines, version 1).\n",
    )
    code, out, _ = run(capsys, "memory", "show", "-w", feature)
    assert (code, out) == (0, "- build: make\n- tests: pytest\n")

    new = feature / "brief.txt"
    new.write_text("- build: make\n- tests: pytest -x\n")
    code, _, err = run(capsys, "memory", "set", "-w", feature, "--file", new)
    assert (code, err) == (
        0,
        f"{feature} shares the memory of {main}: this changes that shared document.\n",
    )
    code, out, _ = run(capsys, "memory", "show", "-w", main, "--json")
    assert (json.loads(out)["content"], json.loads(out)["version"]) == (new.read_text(), 2)
    code, out, _ = run(capsys, "memory", "show", "-w", feature, "--json")
    shown = json.loads(out)
    assert (shown["version"], shown["linked_to"], shown["enclosing"]) == (2, str(main), None)

    code, out, err = run(capsys, "memory", "unlink", "-w", feature, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {"workspace": str(feature), "unlinked_from": str(main)}
    code, out, _ = run(capsys, "memory", "show", "-w", feature)
    assert out == ""
    code, out, _ = run(capsys, "memory", "show", "-w", main)
    assert out == new.read_text()


def test_show_in_a_worktree_names_the_main_checkouts_memory_and_how_to_share_it(worktree, capsys):
    """Before linking, ``show`` in the worktree keeps stdout empty and says on stderr that the
    main checkout has a memory and which command shares it; ``--json`` has ``worktree_main``.
    Once linked, a per-folder setting says it is the worktree's alone."""
    main, feature = worktree
    code, out, err = run(capsys, "memory", "show", "-w", feature)
    assert (code, out) == (0, "")
    assert err == (
        f"{feature} is a git worktree of {main}, which has a memory of 2 lines: "
        f"'yak memory link -w {feature}' shares it here.\n"
    )
    code, out, _ = run(capsys, "memory", "show", "-w", feature, "--json")
    assert json.loads(out)["worktree_main"]["path"] == str(main)
    assert run(capsys, "memory", "link", "-w", feature)[0] == 0
    code, out, err = run(capsys, "memory", "mode", "review", "-w", feature)
    assert (code, err) == (
        0,
        f"{feature} shares the memory of {main}: this setting is for {feature} only.\n",
    )
    code, out, _ = run(capsys, "memory", "show", "-w", main, "--json")
    assert (json.loads(out)["mode"], json.loads(out)["worktree_main"]) == ("auto", None)


def test_link_refusals_are_one_line_and_exit_2(worktree, tmp_path, data_dir, capsys):
    """A folder in no worktree without ``--to``, a folder with a memory of its own, and
    ``unlink`` of a folder that shares nothing: exit 2, one line, nothing changed."""
    main, feature = worktree
    plain = tmp_path / "plain"
    plain.mkdir()
    code, out, err = run(capsys, "memory", "link", "-w", plain)
    assert (code, out) == (2, "")
    assert err == (
        f"yak: {plain} is not in a git worktree; name the folder whose memory it should "
        "share with --to\n"
    )
    seed(data_dir, feature, "- mine\n")
    code, out, err = run(capsys, "memory", "link", "-w", feature)
    assert (code, out) == (2, "")
    assert "has a memory of its own" in err and err.count("\n") == 1
    code, out, err = run(capsys, "memory", "unlink", "-w", feature)
    assert (code, out) == (2, "")
    assert err == f"yak: {feature} does not share another folder's memory\n"
    code, out, _ = run(capsys, "memory", "show", "-w", feature)
    assert out == "- mine\n"


def test_link_to_any_folder_with_to(worktree, tmp_path, capsys):
    """``--to FOLDER`` links a plain folder to any workspace; linking to a folder that itself
    shares another's memory is refused (exit 2), so links never chain."""
    main, feature = worktree
    plain = tmp_path / "plain"
    plain.mkdir()
    code, out, _ = run(capsys, "memory", "link", "-w", plain, "--to", main, "--json")
    assert code == 0
    assert json.loads(out)["linked_to"] == str(main)
    code, out, err = run(capsys, "memory", "link", "-w", feature, "--to", plain)
    assert (code, out) == (2, "")
    assert "uses another folder's memory itself" in err


async def test_a_refresh_in_a_linked_worktree_rewrites_the_shared_document(
    worktree, core, fake_api
):
    """A conversation held in the linked worktree is folded by its refresh into the one shared
    document (the main checkout's reads the new version, its history has both); the
    conversation stays the worktree's."""
    from tests.support.builders import say
    from tests.support.fake_api import text
    from yak.domain import RefreshStatus

    main, feature = worktree
    workspace, target = await core.workspaces.link(str(feature))
    say(core, workspace.id, "On this branch we lint with ruff.", "Noted.")
    new = "- build: make\n- tests: pytest\n- lint: ruff\n"
    fake_api.script(text(new))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED and outcome.version == 2
    assert (await core.memory.read(target.id)).content == new
    assert [r.version for r in await core.memory.history(target.id)] == [2, 1]
    assert await core.chat.sessions(target.id) == []
    assert len(await core.chat.sessions(workspace.id)) == 1


async def test_a_write_to_the_shared_document_is_noticed_in_the_linked_worktree(
    worktree, core, data_dir
):
    """A window showing the linked worktree hears of a save another process made to the shared
    document: the watcher's step names the worktree (and its ``MemoryChanged`` the new
    version), so its panel reloads."""
    from yak.events import MemoryChanged

    main, feature = worktree
    workspace, target = await core.workspaces.link(str(feature))
    await core.memory.read(workspace.id)  # the window shows the worktree's memory
    await core.watcher.check_external_changes()  # the watcher's first step learns versions
    heard = []
    core.bus.subscribe(MemoryChanged, heard.append)

    other = open_core(data_dir)
    try:
        await other.memory.save(target.id, "- build: make\n", expected_version=1)
    finally:
        await other.aclose()
    changed = await core.watcher.check_external_changes()
    assert workspace.id in changed
    assert MemoryChanged(workspace.id, 2, "external", None) in heard


def test_reattach_onto_a_folder_whose_memory_was_deleted_is_refused(renamed, tmp_path, capsys):
    """A folder whose memory was emptied still has its history: re-attaching there would
    repeat version numbers (two version 1s, the number going back), so it is exit 2, one
    line, and neither history changes."""
    old, new = renamed
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "brief.txt").write_text("- its own\n")
    assert run(capsys, "memory", "set", "-w", taken, "--file", taken / "brief.txt")[0] == 0
    assert run(capsys, "memory", "delete", "-w", taken, "--yes")[0] == 0
    code, out, err = run(capsys, "memory", "reattach", old, "-w", taken)
    assert (code, out) == (2, "")
    assert err.startswith(
        f"yak: {taken} has a memory history of its own (version 2); nothing was moved."
    )
    code, out, _ = run(capsys, "memory", "history", "-w", taken, "--json")
    assert [r["version"] for r in json.loads(out)] == [2, 1]


def test_a_linked_worktree_takes_no_reattach_and_a_shared_folder_links_nowhere(
    worktree, renamed, tmp_path, capsys
):
    """Re-attaching onto a worktree that uses its main checkout's memory is refused (the moved
    memory would hide behind the link); so is linking the main checkout elsewhere while the
    worktree uses its memory (the worktree would go on using a document nobody shows)."""
    main, feature = worktree
    old, _ = renamed
    assert run(capsys, "memory", "link", "-w", feature)[0] == 0
    code, _, err = run(capsys, "memory", "reattach", old, "-w", feature)
    assert (code, err) == (
        2,
        f"yak: {feature} uses the memory of {main}; unlink it first (yak memory unlink), "
        "then re-attach. Nothing was moved.\n",
    )
    other = tmp_path / "other"
    other.mkdir()
    code, _, err = run(capsys, "memory", "link", "-w", main, "--to", other)
    assert code == 2
    assert err.startswith(f"yak: {main} shares its memory with {feature}; unlink those first")
