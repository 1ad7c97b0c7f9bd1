"""The Settings dialog and its pages (Memory; Provider is added by the chat UI)."""
