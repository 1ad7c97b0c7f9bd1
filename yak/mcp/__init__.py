"""``yak mcp``: the memory of one workspace served to other agents over MCP (stdio), a front
end on the same application core as the desktop app and the command line ("The MCP server" in
docs/memory.md).

Importing this package imports nothing heavy; :mod:`yak.mcp.server` imports the ``mcp`` SDK.
"""
