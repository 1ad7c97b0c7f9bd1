"""The desktop UI (PySide6). Talks to services only; never to the database or the SDK."""
