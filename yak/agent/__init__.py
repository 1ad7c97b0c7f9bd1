"""The agent: the tool loop and the workspace-confined tools."""
