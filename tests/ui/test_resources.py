"""The app icon ships as the ``yak.resources`` package and loads through importlib.resources."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from yak.app.lifetime import app_icon

ROOT = Path(__file__).resolve().parents[2]


def test_icon_files_are_package_resources_and_the_png_is_small():
    folder = resources.files("yak.resources")
    assert (folder / "yak.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    png = (folder / "yak.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(png) <= 20_000


def test_app_icon_loads_with_qt(qapp):
    icon = app_icon()
    assert not icon.isNull()
    assert not icon.pixmap(64, 64).isNull()


def test_every_package_under_yak_is_listed_for_the_wheel():
    """``packages`` is a list (``find`` cannot map ``resources/``): a new package that is not
    listed would be missing from the wheel while the editable install still works."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "yak").rglob("__init__.py")
    }
    assert on_disk - listed == set()
    assert "yak.resources" in listed
    assert config["tool"]["setuptools"]["package-dir"]["yak.resources"] == "resources"
