"""Builders of what tests and benchmarks start from: a project folder, its workspace with a
memory document, and stored conversations. Everything goes through a core from ``open_core``.

The conversation builders call the conversation repository directly (``core.chat.conversations``,
synchronous): stored messages are the input of a refresh, and only a model turn adds them
through the services.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from yak.core import Core
from yak.domain import Workspace


def project_folder(
    parent: Path, name: str = "proj", *, files: Mapping[str, str] | None = None
) -> Path:
    """Make the folder ``parent/name`` (a workspace's folder) holding ``files`` (a relative path
    and its text each); returns it."""
    folder = parent / name
    folder.mkdir(parents=True)
    for relative, content in (files or {}).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return folder


async def workspace_with_document(
    core: Core, folder: Path | str, text: str = "", *, by_hand: bool = True
) -> Workspace:
    """The workspace of an existing ``folder`` (registered and marked opened), with ``text`` saved
    as its memory document when it is not empty: by hand, or (``by_hand=False``) as an earlier
    refresh wrote it, so its lines are not the person's and a rewrite may change them."""
    workspace = await core.workspaces.open(str(folder))
    if text and by_hand:
        await core.memory.save(workspace.id, text, expected_version=None)
    elif text:
        await seed_document(core, workspace.id, text)
    return workspace


async def seed_document(core: Core, workspace_id: str, text: str) -> None:
    """Write ``text`` as a refresh revision on the current version (a document a model wrote
    earlier: no line of it is the person's)."""
    current = await core.memory.read(workspace_id)
    await core.memory.apply_rewrite(
        workspace_id,
        text,
        base_version=current.version,
        model="seed",
        session_ids=(),
        watermarks={},
    )


def say(
    core: Core,
    workspace_id: str,
    *texts: str,
    session_id: str | None = None,
    title: str = "Chat",
) -> str:
    """Store ``texts`` as alternating user and assistant text messages (user first) in a session:
    ``session_id``, or a new one titled ``title``. Returns the session id."""
    conversations = core.chat.conversations
    if session_id is None:
        session_id = conversations.create_session(workspace_id, title).id
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        conversations.add_message(session_id, role, [{"type": "text", "text": text}])
    return session_id


def default_turn(n: int) -> tuple[str, str]:
    return f"turn {n}: we decided something", f"noted {n}"


def add_turns(
    core: Core,
    workspace_id: str,
    turns: int,
    *,
    session_id: str | None = None,
    title: str = "Chat",
    turn: Callable[[int], tuple[str, str]] = default_turn,
) -> str:
    """A conversation of ``turns`` turns, each a user message and an assistant reply
    (``turn(n)`` gives their texts), in ``session_id`` or a new session. Returns the session id."""
    for n in range(turns):
        session_id = say(core, workspace_id, *turn(n), session_id=session_id, title=title)
    if session_id is None:  # no turns: still an (empty) session
        session_id = core.chat.conversations.create_session(workspace_id, title).id
    return session_id


def git(*argv: str, cwd: Path) -> None:
    """Run the real ``git`` quietly, with an identity and no user or system configuration."""
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Yak Test",
        "GIT_AUTHOR_EMAIL": "yak@example.invalid",
        "GIT_COMMITTER_NAME": "Yak Test",
        "GIT_COMMITTER_EMAIL": "yak@example.invalid",
    }
    subprocess.run(["git", *argv], cwd=cwd, env=env, check=True, capture_output=True)


def git_worktree(root: Path) -> tuple[Path, Path]:
    """A real repository ``root/app`` (one commit, a ``web`` subfolder) and its linked worktree
    ``root/app-feature`` made by ``git worktree add``. Returns (main checkout, worktree)."""
    main_checkout = root / "app"
    (main_checkout / "web").mkdir(parents=True)
    (main_checkout / "web" / "index.html").write_text("<p>hi</p>\n")
    git("init", "-q", "-b", "main", ".", cwd=main_checkout)
    git("add", ".", cwd=main_checkout)
    git("commit", "-q", "-m", "start", cwd=main_checkout)
    git("worktree", "add", "-q", "-b", "feature", "../app-feature", cwd=main_checkout)
    return main_checkout, root / "app-feature"


def drop_search_index(database: Path) -> None:
    """Make the SQLite file at ``database`` what a SQLite without FTS5 migrates to: no
    full-text index tables (searches are then plain scans)."""
    import sqlite3

    with sqlite3.connect(database) as conn:
        conn.execute("DROP TABLE memory_search")
        conn.execute("DROP TABLE memory_search_indexed")
