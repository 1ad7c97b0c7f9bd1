"""What the tests and the benchmarks share: the scripted fake Messages API (``fake_api``),
a fake clock with timers fired by hand (``clock``), one way to wait for a condition with a hang
guard (``waiting``), recording published events (``events``), the model clients a test core
uses (``clients``), builders of folders, workspaces and conversations (``builders``), and
stored times moved into the past (``aging``).

Nothing here builds a repository, a refresher or a service: those come from
``yak.bootstrap.open_core`` (see ``docs/testing.md``, "Tests").
"""

from tests.support.builders import (
    add_turns,
    drop_search_index,
    project_folder,
    say,
    workspace_with_document,
)
from tests.support.clients import ModelClients
from tests.support.clock import ManualTimers
from tests.support.events import record
from tests.support.waiting import until

__all__ = [
    "drop_search_index",
    "ManualTimers",
    "ModelClients",
    "add_turns",
    "project_folder",
    "record",
    "say",
    "until",
    "workspace_with_document",
]
