"""Opening the database: several programs at once, and what they find."""

import subprocess
import sys
import textwrap

from sqlalchemy import inspect

from yak.db import open_database

# Each child opens the application core, as the desktop app and the command line do.
_OPENER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from yak.bootstrap import open_core
    go = Path(sys.argv[2])
    while not go.exists():  # start together: every child waits for the same signal file
        time.sleep(0.005)
    open_core(Path(sys.argv[1])).close()
""")


def test_programs_opening_a_new_database_at_once_all_succeed(tmp_path):
    """The app and the CLI may create the database at the same moment: each one opens it
    (exit 0, no 'table already exists'), and the schema is created once."""
    data = tmp_path / "data"
    data.mkdir()
    go = tmp_path / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _OPENER, str(data), str(go)], stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    go.touch()
    results = [(child.wait(timeout=120), child.stderr.read()) for child in children]
    for child in children:
        child.stderr.close()
    assert [code for code, _ in results] == [0, 0, 0, 0], [err for _, err in results]
    db = open_database(data)
    try:
        tables = set(inspect(db.engine).get_table_names())
    finally:
        db.close()
    assert {"workspaces", "memory_documents", "memory_revisions", "chat_messages"} <= tables
