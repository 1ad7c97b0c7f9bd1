"""PyInstaller hook for Yak: every submodule, and the package data read at run time.

The data files are found through ``importlib.resources`` and placed under their package's
folder in the bundle, whatever the install kind: from a wheel the packages are plain folders,
from an editable install ``yak.resources`` is mapped from the top-level ``resources/`` folder,
which PyInstaller's path-based ``collect_data_files`` would place at the bundle's top level
(where ``importlib.resources.files("yak.resources")`` never looks).
"""

from importlib import resources

from PyInstaller.utils.hooks import collect_data_files, collect_submodules, copy_metadata


def package_data(package, *, under=""):
    """``(source, destination folder)`` for every file of ``package`` (only those in its
    subfolder ``under`` when given), recursively, as ``importlib.resources`` sees them."""
    found = []

    def visit(folder, parts):
        for entry in folder.iterdir():
            if entry.name == "__pycache__":
                continue
            if entry.is_dir():
                visit(entry, [*parts, entry.name])
            else:
                found.append((str(entry), "/".join(package.split(".") + parts)))

    start = resources.files(package)
    visit(start.joinpath(*under.split("/")) if under else start, under.split("/") if under else [])
    return found


# The icons, the desktop entry and the metainfo; the Alembic migrations (read as files).
datas = package_data("yak.resources") + package_data("yak.db", under="migrations")
datas += collect_data_files("detect_secrets")
datas += copy_metadata("keyring")  # keyring finds its backends through entry points
hiddenimports = [
    "yak.resources",
    *collect_submodules("yak"),
    *collect_submodules("detect_secrets.plugins"),
    *collect_submodules("keyring.backends"),
]
