"""Desktop integration: ``yak install-desktop`` puts the entry, the metainfo and the icons (all
named after the app id) where a freedesktop desktop finds them, the packaged files pass the
validators Debian ships, and the real window reports the app id under X11.

The validator and X11 tests need ``desktop-file-utils``, ``appstream``, ``xvfb`` and
``x11-utils`` (CI installs them); where a tool is missing the test says which one."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from importlib import resources

import pytest

from tests.support.cli import yak, yak_command
from yak.cli.desktop import desktop_entry_for
from yak.paths import APP_ID

RESOURCES = resources.files("yak.resources")
DESKTOP_ENTRY = RESOURCES / "desktop" / f"{APP_ID}.desktop"
METAINFO = RESOURCES / "desktop" / f"{APP_ID}.metainfo.xml"


def needs(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (apt-get install the package that has it)")
    return path


@pytest.fixture
def xdg_data(tmp_path):
    """An empty XDG data folder and an environment that points at it."""
    folder = tmp_path / "share"
    env = dict(os.environ, XDG_DATA_HOME=str(folder))
    return folder, env


def test_install_desktop_puts_entry_metainfo_and_icons_under_the_xdg_data_folder(xdg_data):
    """``yak install-desktop`` writes the entry, the metainfo and both icons named after the
    app id, the entry starting this very Yak by an absolute command; ``--uninstall`` removes
    exactly those files and a second uninstall says there is nothing to remove."""
    folder, env = xdg_data
    result = yak("install-desktop", env=env, text=True)
    assert result.returncode == 0, result.stderr
    expected = [
        folder / "applications" / f"{APP_ID}.desktop",
        folder / "metainfo" / f"{APP_ID}.metainfo.xml",
        folder / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
        folder / "icons" / "hicolor" / "128x128" / "apps" / f"{APP_ID}.png",
    ]
    assert result.stdout.splitlines() == [f"installed {path}" for path in expected]
    assert expected[2].read_bytes() == (RESOURCES / "yak.svg").read_bytes()
    assert expected[3].read_bytes() == (RESOURCES / "yak.png").read_bytes()
    assert expected[1].read_bytes() == METAINFO.read_bytes()
    entry = expected[0].read_text(encoding="utf-8")
    exec_lines = [line for line in entry.splitlines() if line.startswith("Exec=")]
    assert exec_lines == [
        f"Exec={sys.executable} -m yak %f",
        f"Exec={sys.executable} -m yak --choose-folder",
    ]
    assert f"Icon={APP_ID}" in entry.splitlines()

    (folder / "applications" / "other.desktop").write_text("[Desktop Entry]\n")
    result = yak("install-desktop", "--uninstall", env=env, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"removed {path}" for path in expected]
    assert not any(path.exists() for path in expected)
    assert (folder / "applications" / "other.desktop").exists()
    again = yak("install-desktop", "--uninstall", env=env, text=True)
    assert (again.returncode, again.stdout) == (0, f"nothing to remove under {folder}\n")


def test_exec_lines_quote_a_launcher_path_with_spaces_by_the_desktop_entry_rules():
    """A launcher in a folder with a space or a ``$`` is quoted and escaped so the desktop
    starts it, and a literal ``%`` is doubled; only ``Exec=yak`` lines change."""
    text = "Name=yak\nExec=yak %f\nTryExec=yak\n"
    assert desktop_entry_for(text, ["/opt/My Apps/$x/yak"]) == (
        'Name=yak\nExec="/opt/My Apps/\\$x/yak" %f\nTryExec=yak\n'
    )
    assert desktop_entry_for("Exec=yak\n", ["/p/100%/yak"]) == "Exec=/p/100%%/yak\n"


def test_the_desktop_entry_declares_no_folder_handler_and_offers_an_open_folder_action():
    """Yak never becomes a candidate default for opening folders (no ``MimeType``); the
    entry's "Open Folder in Yak" action starts Yak on its folder dialog instead."""
    entry = DESKTOP_ENTRY.read_text(encoding="utf-8").splitlines()
    assert not [line for line in entry if line.startswith(("MimeType", "Version=1.5"))]
    assert "Actions=open-folder;" in entry
    assert "Name=Open Folder in Yak" in entry
    assert "Exec=yak --choose-folder" in entry


def test_packaged_and_installed_desktop_entries_pass_desktop_file_validate(xdg_data):
    """Debian's ``desktop-file-validate`` accepts the packaged entry and the installed one."""
    validate = needs("desktop-file-validate")
    folder, env = xdg_data
    assert yak("install-desktop", env=env, text=True).returncode == 0
    with resources.as_file(DESKTOP_ENTRY) as packaged:
        for path in (packaged, folder / "applications" / f"{APP_ID}.desktop"):
            result = subprocess.run([validate, str(path)], capture_output=True, text=True)
            assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_metainfo_passes_appstreamcli_validate_with_developer_urls_and_screenshot():
    """``appstreamcli validate`` accepts the metainfo (offline), which names the developer,
    the project's URLs and a screenshot."""
    appstreamcli = needs("appstreamcli")
    text = METAINFO.read_text(encoding="utf-8")
    for part in ("<developer_name>", '<url type="homepage">', "<screenshot ", "<image "):
        assert part in text
    with resources.as_file(METAINFO) as path:
        result = subprocess.run(
            [appstreamcli, "validate", "--no-net", str(path)], capture_output=True, text=True
        )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_real_window_reports_the_app_id_under_x11(tmp_path):
    """Started on a real X server, Yak's main window carries the app id in
    ``_GTK_APPLICATION_ID`` (the desktop matches it to the installed entry): the id is set
    before the window is created."""
    xvfb, xwininfo, xprop = needs("Xvfb"), needs("xwininfo"), needs("xprop")
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write_fd), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    app = None
    try:
        display = ":" + os.read(read_fd, 64).decode().strip()
        env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb")
        app = subprocess.Popen(
            yak_command("--data-dir", tmp_path / "data"),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        window = None
        deadline = time.monotonic() + 60
        while window is None and time.monotonic() < deadline and app.poll() is None:
            time.sleep(0.3)
            tree = subprocess.run(
                [xwininfo, "-root", "-tree"], env=env, capture_output=True, text=True
            ).stdout
            window = next(
                (line.split()[0] for line in tree.splitlines() if '"Yak": ("' in line), None
            )
        assert window is not None, app.stderr.read().decode() if app.poll() is not None else ""
        props = subprocess.run(
            [xprop, "-id", window, "_GTK_APPLICATION_ID", "WM_CLASS"],
            env=env,
            capture_output=True,
            text=True,
        ).stdout
        assert f'_GTK_APPLICATION_ID(UTF8_STRING) = "{APP_ID}"' in props
        assert props.splitlines()[1].endswith('"Yak"')
    finally:
        if app is not None:
            app.send_signal(signal.SIGTERM)
            app.wait(30)
        server.terminate()
        server.wait(10)
        os.close(read_fd)
