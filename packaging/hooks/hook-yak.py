"""PyInstaller hook: Yak's migrations and resources are package data, read at run time."""

from PyInstaller.utils.hooks import collect_data_files, collect_submodules

datas = collect_data_files("yak", include_py_files=True, subdir="db/migrations")
datas += collect_data_files("yak.resources")
datas += collect_data_files("detect_secrets")
hiddenimports = collect_submodules("yak") + collect_submodules("detect_secrets.plugins")
