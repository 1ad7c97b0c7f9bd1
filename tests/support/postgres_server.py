"""A throwaway PostgreSQL server for the tests: ``python -m tests.support.postgres_server``.

``start FOLDER`` creates a cluster in ``FOLDER`` (``initdb``), starts it on 127.0.0.1 on a free
port with password authentication for the user ``yak`` and durability off (a test server), and
prints the URL to give as ``YAK_TEST_DATABASE_URL``; ``stop FOLDER`` stops it. PostgreSQL refuses
to run as root, so as root the server runs as the ``postgres`` user (Debian's package creates it)
and the folder is handed to that user. The server programs are found on ``PATH`` or under
``/usr/lib/postgresql/<version>/bin`` (Debian's layout).
"""

from __future__ import annotations

import argparse
import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
from pathlib import Path

USER = "yak"


def bin_dir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or ``None`` when PostgreSQL is missing."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(command: list[str], *, as_postgres: bool) -> None:
    if as_postgres:
        command = ["runuser", "-u", "postgres", "--", *command]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def start(folder: Path) -> str:
    """Create and start a server in ``folder``; returns its URL (user ``yak``, database
    ``postgres``, a random password).

    Raises:
        RuntimeError: PostgreSQL is not installed.
        subprocess.CalledProcessError: ``initdb`` or ``pg_ctl`` failed (see ``folder/server.log``).
    """
    programs = bin_dir()
    if programs is None:
        raise RuntimeError(
            "PostgreSQL is not installed (no initdb on PATH or in /usr/lib/postgresql)"
        )
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    as_postgres = os.geteuid() == 0
    if as_postgres:
        shutil.chown(folder, "postgres", "postgres")
    password = secrets.token_hex(12)
    password_file = folder / "password"
    password_file.write_text(password + "\n")
    if as_postgres:
        shutil.chown(password_file, "postgres", "postgres")
    data = folder / "data"
    _run(
        [
            str(programs / "initdb"),
            "-D",
            str(data),
            "-U",
            USER,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            f"--pwfile={password_file}",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
        ],
        as_postgres=as_postgres,
    )
    port = _free_port()
    options = (
        f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={folder} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    _run(
        [str(programs / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-o", options]
        + ["-w", "start"],
        as_postgres=as_postgres,
    )
    url = f"postgresql://{USER}:{password}@127.0.0.1:{port}/postgres"
    (folder / "url").write_text(url + "\n")
    return url


def stop(folder: Path) -> None:
    """Stop the server started in ``folder`` (fast shutdown)."""
    programs = bin_dir()
    assert programs is not None
    _run(
        [str(programs / "pg_ctl"), "-D", str(folder.resolve() / "data"), "-m", "fast", "stop"],
        as_postgres=os.geteuid() == 0,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    if args.action == "start":
        print(start(args.folder))
    else:
        stop(args.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
