"""Yak: a desktop app for working with an AI agent inside a project folder.

Every workspace (a project folder, keyed by its normalized path) keeps one plain-text memory
document that an LLM rewrites after conversations, under guards that never lose, collapse or
silently cut it. ``docs/architecture.md`` describes how it is built.
"""

__version__ = "0.1.0"
