"""Yak's bundled assets (the app icon), loaded with ``importlib.resources.files("yak.resources")``.

This folder is mapped to the ``yak.resources`` package in the wheel (see ``pyproject.toml``), and
``yak/resources`` links to it so the source tree is a complete package; the ``__init__.py`` makes
it a regular package. ``desktop/`` holds the desktop entry and the AppStream metainfo (see
``yak.cli.desktop``).
"""
