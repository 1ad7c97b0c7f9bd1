"""Yak's bundled assets (the app icon), loaded with ``importlib.resources.files("yak.resources")``.

This folder is mapped to the ``yak.resources`` package in the wheel (see ``pyproject.toml``); the
``__init__.py`` makes it a regular package so an editable install finds it too.
"""
