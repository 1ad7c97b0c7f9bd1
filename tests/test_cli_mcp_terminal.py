"""``yak mcp`` started by hand in a terminal says what it is and how to stop it; started by an
agent (pipes) it says nothing on stderr. The real ``python -m yak`` runs with its stdin on a
pseudo-terminal, and Ctrl+D ends it."""

from __future__ import annotations

import os
import pty
import subprocess

from tests.support.cli import yak_command


def test_yak_mcp_in_a_terminal_says_what_it_is_and_ctrl_d_stops_it(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    command = yak_command("mcp", "-w", folder)
    env = {**os.environ, "YAK_DATA_DIR": str(tmp_path / "data")}
    controller, terminal = pty.openpty()
    try:
        server = subprocess.Popen(
            command, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
    finally:
        os.close(terminal)
    try:
        assert server.stderr is not None
        said = server.stderr.readline().decode()  # the line comes before it waits
        os.write(controller, b"\x04")  # Ctrl+D: end of input
        out, rest = server.communicate(timeout=60)
    finally:
        os.close(controller)
        if server.poll() is None:
            server.kill()
            server.wait()
    assert said == (
        f"yak mcp serves the memory of {folder} to an agent over MCP on stdin and stdout, and "
        "waits for one. An agent starts it itself (e.g. 'claude mcp add yak -- yak mcp -w "
        "DIR'); press Ctrl+D (or Ctrl+C) to stop.\n"
    )
    assert (server.returncode, out, rest) == (0, b"", b"")

    # Started by an agent (stdin a pipe): stderr stays silent, stdout is the protocol's.
    ran = subprocess.run(command, input=b"", capture_output=True, env=env, timeout=60)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
