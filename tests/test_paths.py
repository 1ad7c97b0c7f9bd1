"""The workspace key (``docs/workspaces.md``, "The workspace key"): every spelling of one
folder is one key and one document; distinct folders never share one. The documents are read
and written through the core (``core.workspaces``, ``core.memory``)."""

from __future__ import annotations

import hashlib
import os
import unicodedata

import pytest

from yak import paths
from yak.paths import (
    folder_identity,
    normalize_path_text,
    normalize_workspace_path,
    workspace_id_for,
)


@pytest.fixture
def folder(tmp_path):
    made = tmp_path / "projects" / "proj"
    made.mkdir(parents=True)
    return made


def test_trailing_slashes_do_not_change_the_key(folder):
    """``/p/proj/`` and ``/p/proj//`` are ``/p/proj``."""
    key = normalize_workspace_path(folder)
    assert key == str(folder)
    assert normalize_workspace_path(f"{folder}/") == key
    assert normalize_workspace_path(f"{folder}///") == key


def test_tilde_is_the_home_folder(folder, monkeypatch):
    """``~/proj`` is the folder ``proj`` in the home folder."""
    monkeypatch.setenv("HOME", str(folder.parent))
    assert normalize_workspace_path("~/proj") == str(folder)
    assert normalize_workspace_path("~/proj/") == str(folder)


def test_dot_and_dotdot_and_relative_paths(folder, monkeypatch):
    """``.``/``..`` segments are resolved and a relative path is taken from the current folder."""
    (folder.parent / "other").mkdir()
    key = str(folder)
    assert normalize_workspace_path(f"{folder.parent}/./other/../proj/.") == key
    monkeypatch.chdir(folder.parent)
    assert normalize_workspace_path("proj") == key
    assert normalize_workspace_path("./proj") == key
    monkeypatch.chdir(folder)
    assert normalize_workspace_path(".") == key


def test_doubled_separators_collapse(folder):
    """``//p//proj`` is ``/p/proj``; a leading ``//`` too (POSIX would keep it)."""
    assert normalize_workspace_path(str(folder).replace("/", "//")) == str(folder)


def test_a_symlink_to_the_folder_is_the_folder(folder):
    """A symlink resolves to its target: one key."""
    link = folder.parent / "link-to-proj"
    link.symlink_to(folder, target_is_directory=True)
    assert normalize_workspace_path(link) == str(folder)
    assert normalize_workspace_path(f"{link}/") == str(folder)


def test_nfc_and_nfd_spellings_are_one_key(tmp_path):
    """``café`` typed precomposed (NFC) or decomposed (NFD, as macOS hands it out) is one key,
    stored as NFC."""
    nfc = unicodedata.normalize("NFC", "café")
    nfd = unicodedata.normalize("NFD", "café")
    assert nfc != nfd
    (tmp_path / nfc).mkdir()
    key = normalize_workspace_path(tmp_path / nfd)
    assert key == normalize_workspace_path(tmp_path / nfc)
    assert key == unicodedata.normalize("NFC", key)


async def test_nfc_and_nfd_folders_that_are_two_folders_keep_two_memories(tmp_path, core):
    """On a filesystem that stores names as bytes, ``café`` (NFC) and ``café`` (NFD) can be two
    real folders. They are two workspaces: a note written in one is not seen from the other."""
    nfc_folder = tmp_path / unicodedata.normalize("NFC", "café")
    nfd_folder = tmp_path / unicodedata.normalize("NFD", "café")
    nfc_folder.mkdir()
    nfd_folder.mkdir()
    if paths.folder_identity(str(nfc_folder)) == paths.folder_identity(str(nfd_folder)):
        pytest.skip(
            "this filesystem folds Unicode normalization: the two spellings are one "
            "folder, covered by test_nfc_and_nfd_spellings_are_one_key"
        )
    assert normalize_workspace_path(nfc_folder) != normalize_workspace_path(nfd_folder)
    nfd_ws = await core.workspaces.open(str(nfd_folder))
    await core.memory.save(nfd_ws.id, "nfd notes\n", expected_version=0)
    nfc_ws = await core.workspaces.open(str(nfc_folder))
    assert nfc_ws.id != nfd_ws.id
    assert (await core.memory.read(nfc_ws.id)).content == ""
    assert (await core.memory.read(nfd_ws.id)).content == "nfd notes\n"


def test_dot_dot_after_a_symlink_follows_the_link_first(tmp_path):
    """``link/..`` is the parent of where the link points, as the shell's ``cd -P`` and
    ``realpath`` see it, not the folder holding the link."""
    target = tmp_path / "proj" / "sub"
    target.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "elsewhere" / "link"
    link.symlink_to(target, target_is_directory=True)
    assert normalize_workspace_path(f"{link}/..") == str(tmp_path / "proj")
    assert normalize_workspace_path(f"{link}/..") == os.path.realpath(f"{link}/..")


def test_the_root_stays_the_root():
    """``/`` is ``/``, and ``//``, ``///`` and ``/.`` too."""
    for spelling in ("/", "//", "///", "/.", "/.."):
        assert normalize_workspace_path(spelling) == "/"
    assert normalize_path_text("/", windows=False) == "/"


@pytest.mark.parametrize(
    "spelling",
    [
        "c:/Users/Me/Proj/",
        "C:\\Users\\me\\proj",
        "C:\\Users\\ME\\PROJ\\",
        "c:\\users\\me\\proj\\\\",
        "C:\\Users\\me\\.\\other\\..\\proj",
        "C:\\\\Users\\\\me\\\\proj",
    ],
)
def test_windows_spellings_fold_to_one_key(spelling):
    """On Windows case and separators fold (``ntpath.normcase``), trailing separators go."""
    assert normalize_path_text(spelling, windows=True) == "c:\\users\\me\\proj"


def test_windows_drive_root_stays_the_root():
    """``C:\\``, ``c:/`` and ``C:\\\\`` are the drive root ``c:\\``, not ``c:``."""
    for spelling in ("C:\\", "c:/", "C:\\\\", "C:/."):
        assert normalize_path_text(spelling, windows=True) == "c:\\"


def test_windows_distinct_folders_stay_distinct():
    """Case folds on Windows, punctuation never does."""
    assert normalize_path_text("C:\\p\\a_b", windows=True) != normalize_path_text(
        "C:\\p\\a-b", windows=True
    )


def test_posix_case_and_punctuation_are_distinct(tmp_path):
    """``/p/a_b`` and ``/p/a-b`` are two workspaces; on a case-sensitive filesystem so are
    ``/p/Proj`` and ``/p/proj``."""
    for name in ("a_b", "a-b", "Proj", "proj"):
        (tmp_path / name).mkdir()
    keys = {normalize_workspace_path(tmp_path / name) for name in ("a_b", "a-b", "Proj", "proj")}
    assert len(keys) == 4
    assert len({workspace_id_for(k) for k in keys}) == 4


def test_workspace_id_is_derived_from_the_key():
    """``ws_`` + the first 32 hex digits of sha256(key)."""
    key = "/home/me/proj"
    expected = "ws_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    assert workspace_id_for(key) == expected
    assert len(workspace_id_for(key)) == 35


def test_empty_and_nul_paths_are_refused():
    """An empty, blank or NUL-containing path is no workspace key."""
    for bad in ("", "   ", "/tmp/a\0b"):
        with pytest.raises(ValueError):
            normalize_workspace_path(bad)


async def test_one_folder_by_many_spellings_is_one_document_and_the_neighbour_sees_none(
    tmp_path, core, monkeypatch
):
    """One folder reached by eight spellings is one document; the neighbour folder, whose name
    differs only in punctuation, sees none of it."""
    parent = tmp_path / "code"
    folder = parent / unicodedata.normalize("NFC", "café-proj")
    neighbour = parent / unicodedata.normalize("NFC", "café_proj")
    folder.mkdir(parents=True)
    neighbour.mkdir()
    (parent / "link").symlink_to(folder, target_is_directory=True)
    monkeypatch.setenv("HOME", str(parent))
    monkeypatch.chdir(parent)
    spellings = [
        f"{folder}/",
        str(folder).replace("/", "//"),
        f"{parent}/./café_proj/../café-proj",
        str(parent / "link"),
        "~/café-proj",
        unicodedata.normalize("NFD", str(folder)),
        "café-proj",
    ]
    content = "Project: a café.\n- one\n- two\n"
    written = await core.workspaces.open(str(folder))
    await core.memory.save(written.id, content, expected_version=0)

    for spelling in spellings:
        workspace = await core.workspaces.open(spelling)
        assert workspace.id == written.id, spelling
        assert (await core.workspaces.find(spelling)).id == written.id, spelling
        document = await core.memory.read(workspace.id)
        assert (document.content, document.version) == (content, 1), spelling

    other = await core.workspaces.open(str(neighbour))
    assert other.id != written.id
    assert (await core.memory.read(other.id)).content == ""
    assert (await core.memory.read(other.id)).version == 0
    assert [s.workspace.id for s in await core.memory.list_documents()] == [written.id]


def _case_insensitive_identity(real):
    """A ``folder_identity`` that behaves like a case-insensitive filesystem for the last path
    component (the folders in the test are created lower-case)."""

    def identity(path):
        head, _, tail = str(path).rpartition("/")
        return real(f"{head}/{tail.lower()}")

    return identity


async def test_an_alias_by_folder_identity_is_the_same_workspace(tmp_path, core, monkeypatch):
    """On a case-insensitive volume ``Proj`` and ``proj`` are one folder with two keys: the
    second spelling is recognised by ``(st_dev, st_ino)`` and gets the first one's document."""
    folder = tmp_path / "proj"
    folder.mkdir()
    monkeypatch.setattr(paths, "folder_identity", _case_insensitive_identity(paths.folder_identity))
    first = await core.workspaces.open(str(folder))
    await core.memory.save(first.id, "the notes\n", expected_version=0)

    upper = str(tmp_path / "PROJ")
    assert normalize_workspace_path(upper) != first.path  # a different key...
    assert (await core.workspaces.open(upper)).id == first.id  # ...but the same workspace
    assert (await core.workspaces.find(upper)).id == first.id
    assert (await core.memory.read(first.id)).content == "the notes\n"
    assert len(await core.memory.list_documents()) == 1


async def test_a_renamed_folder_is_not_an_alias_of_its_old_workspace(tmp_path, core):
    """A row whose folder is gone is not an alias even though the inode matches: the old memory
    becomes orphaned (re-attachable) and the renamed folder starts empty."""
    old = tmp_path / "old"
    old.mkdir()
    first = await core.workspaces.open(str(old))
    await core.memory.save(first.id, "old notes\n", expected_version=0)
    new = tmp_path / "new"
    os.rename(old, new)
    assert paths.folder_identity(str(new)) is not None

    second = await core.workspaces.open(str(new))
    assert second.id != first.id
    assert (await core.memory.read(second.id)).content == ""
    orphaned = {s.workspace.id: s.orphaned for s in await core.memory.list_documents()}
    assert orphaned == {first.id: True}
    assert (await core.workspaces.find(str(old))).id == first.id  # still found by its key


def test_a_folder_that_exists_only_under_its_nfd_name_keeps_that_name(tmp_path):
    """A folder copied from a Mac can exist only as NFD ("cafe" + a combining accent). Folding
    its key to NFC would name a folder that does not exist and the workspace could never be
    opened; it keeps its exact spelling, and the key names an existing folder."""
    nfd = tmp_path / unicodedata.normalize("NFD", "café")
    nfd.mkdir()
    key = normalize_workspace_path(str(nfd))
    assert key == str(nfd)
    assert folder_identity(key) is not None


def test_missing_folders_answers_what_isdir_answers(tmp_path):
    """``missing_folders`` lists exactly the paths ``os.path.isdir`` says are not folders: a
    folder, a link to a folder, a file, a gone folder beside existing ones, children of a
    parent that does not exist or is a file, and the root."""
    import os

    from yak.paths import missing_folders

    (tmp_path / "here").mkdir()
    (tmp_path / "also").mkdir()
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "here")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    names = ["here", "also", "a-file", "link", "dangling", "gone", "nope/child", "a-file/child"]
    candidates = [str(tmp_path / name) for name in names] + ["/"]

    missing = missing_folders(candidates)

    assert missing == {path for path in candidates if not os.path.isdir(path)}
    assert missing == {str(tmp_path / n) for n in ("a-file", "dangling", "gone")} | {
        str(tmp_path / "nope/child"),
        str(tmp_path / "a-file/child"),
    }
