"""``yak mcp`` as another agent reaches it: the MCP SDK's own client (``ClientSession`` over
``stdio_client``) launching ``python -m yak mcp -w FOLDER`` in another process."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation

from tests.support.cli import yak_command


@asynccontextmanager
async def mcp_session(
    data_dir: Path, folder: Path, client: str | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized MCP client session with ``yak mcp -w folder`` on ``data_dir`` (and the
    PostgreSQL test database of a ``database`` test); ``client``: the name the client gives
    when it connects. The server's stderr is dropped; it ends when the session closes."""
    command = yak_command("mcp", "-w", folder)
    server = StdioServerParameters(
        command=command[0],
        args=command[1:],
        env={
            "YAK_DATA_DIR": str(data_dir),
            **{k: v for k, v in os.environ.items() if k == "YAK_DATABASE_URL"},
        },
    )
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            ClientSession(
                read,
                write,
                client_info=None if client is None else Implementation(name=client, version="1"),
            ) as session,
        ):
            await session.initialize()
            yield session
