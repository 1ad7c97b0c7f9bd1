"""Helpers for the chat UI tests: run a test body on the qasync loop (the ``qloop`` fixture of
``tests/ui/conftest.py``) and wait for what the user would see, without sleeping for timing.
They are the memory UI tests' helpers, shared."""

from memory_support import run, until

__all__ = ["run", "until"]
