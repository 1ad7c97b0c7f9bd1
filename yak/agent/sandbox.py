"""Confinement for ``run_command`` ("Confinement" in docs/agent.md).

An approved command may write only inside the workspace and a private temporary folder made for
it (``TMPDIR``), and cannot read Yak's memory or environment. Two ways, chosen in this order:

- **landlock** (Linux 5.13+): the command starts as ``python -I -m yak.agent.sandbox``, which
  restricts itself with a ruleset that handles every write right (``landlock_create_ruleset``,
  ``landlock_add_rule``, ``landlock_restrict_self`` through ``ctypes``; ``PR_SET_NO_NEW_PRIVS``
  first) and then execs the shell. (Not a ``preexec_fn``: Python code between ``fork`` and
  ``exec`` can deadlock on a lock another thread held at the fork.) Reads stay
  allowed; writes are allowed beneath the workspace and the temporary folder, and plain writes to
  existing device files (``/dev/null``, the terminal). A Landlock domain may not attach to a
  process outside it (``/proc/<pid>/mem``); reading ``/proc/<pid>/environ`` is stopped by Yak
  being non-dumpable (below) and by dropping the capabilities that override that
  (``CAP_SYS_PTRACE``, ``CAP_SYS_ADMIN``, ``CAP_PERFMON``) from the command's bounding set, so
  not even a command running as root gets it.
- **bubblewrap** (``bwrap`` on the ``PATH``): the whole file system read-only, the workspace and
  the temporary folder bound writable, a fresh ``/dev`` and a new PID namespace with its own
  ``/proc``, so Yak's process is not even visible.

Neither available → a command is refused with a sentence naming the setting that allows running
unconfined. The setting (``command_sandbox`` in ``settings.json``, ``YAK_COMMAND_SANDBOX``):
``auto`` (default), ``landlock``, ``bubblewrap``, or ``none`` (unconfined: the command can write
anywhere the user can; the result says so).

``yak.agent.undumpable.make_undumpable`` (``PR_SET_DUMPABLE`` 0) keeps other processes of the
same user out of Yak's ``/proc/<pid>/environ`` and memory; the front ends call it at start.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from yak.agent.undumpable import libc as _libc

LANDLOCK = "landlock"
BUBBLEWRAP = "bubblewrap"
NONE = "none"
AUTO = "auto"
CHOICES = (AUTO, LANDLOCK, BUBBLEWRAP, NONE)

UNCONFINED_WARNING = (
    "Commands run without a sandbox: an approved command can write anywhere you can and read "
    "any file you can."
)

# Linux: the Landlock system calls have one number on every architecture.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP = 38, 24
_PEEKING_CAPABILITIES = (19, 21, 38)  # CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON
_SCOPE_SIGNAL = 2

_WRITE_FILE = 1 << 1
_REMOVE_DIR, _REMOVE_FILE = 1 << 4, 1 << 5
_MAKE = (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
_REFER, _TRUNCATE = 1 << 13, 1 << 14


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@functools.cache
def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers (0: none, or not Linux)."""
    libc = _libc()
    if libc is None:
        return 0
    version = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(version), 0)


@functools.cache
def bubblewrap_path() -> str | None:
    """The ``bwrap`` executable when it is installed and can make a sandbox here."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    try:
        probe = subprocess.run(
            [
                found,
                "--ro-bind",
                "/",
                "/",
                "--unshare-pid",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "true",
            ],  # fmt: skip
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found if probe.returncode == 0 else None


@dataclass(frozen=True)
class Sandbox:
    """The confinement commands get: ``kind`` is ``landlock``, ``bubblewrap`` or ``none``;
    ``refusal`` is set when commands cannot run at all (no sandbox and unconfined not
    allowed)."""

    kind: str
    refusal: str | None = None

    @property
    def label(self) -> str:
        """``sandbox: landlock`` / ``sandbox: bubblewrap`` / ``sandbox: none``."""
        return f"sandbox: {self.kind}"

    def describe(self) -> str:
        """One line for the approval dialog, the tool result and ``yak ask``."""
        if self.kind == LANDLOCK:
            return f"{self.label} (writes only in the workspace and a temporary folder)"
        if self.kind == BUBBLEWRAP:
            return f"{self.label} (writes only in the workspace and a temporary folder)"
        if self.refusal is not None:
            return f"{self.label} (commands are refused: no sandbox is available)"
        return f"{self.label} (unconfined: commands can write anywhere you can)"


def choose(setting: str) -> Sandbox:
    """The sandbox for the ``command_sandbox`` setting (``auto``, ``landlock``, ``bubblewrap``,
    ``none``; anything else counts as ``auto``)."""
    hint = (
        "set the command sandbox to none in Settings › Provider (or YAK_COMMAND_SANDBOX=none) "
        "to run commands unconfined"
    )
    if setting == NONE:
        return Sandbox(NONE)
    if setting in (AUTO, LANDLOCK) and landlock_abi() >= 1:
        return Sandbox(LANDLOCK)
    if setting in (AUTO, BUBBLEWRAP) and bubblewrap_path() is not None:
        return Sandbox(BUBBLEWRAP)
    if setting == LANDLOCK:
        why = "Landlock is not available on this system"
    elif setting == BUBBLEWRAP:
        why = "bubblewrap (bwrap) is not installed or cannot make a sandbox here"
    else:
        why = "no command sandbox is available here (Landlock or bubblewrap on Linux)"
    return Sandbox(NONE, refusal=f"Commands are not run: {why}; {hint}.")


@dataclass
class Launch:
    """How to start one command: the argument list and the environment."""

    argv: list[str]
    env: dict[str, str]


@contextlib.contextmanager
def prepared(sandbox: Sandbox, command: str, *, cwd: Path, env: dict[str, str]) -> Iterator[Launch]:
    """The launch for ``command`` under ``sandbox``, with its private temporary folder (removed
    afterwards) as ``TMPDIR``.

    Raises:
        OSError: the sandbox could not be prepared (the Landlock ruleset was refused).
    """
    tmp = tempfile.mkdtemp(prefix="yak-cmd-")
    env = {**env, "TMPDIR": tmp, "TMP": tmp, "TEMP": tmp}
    shell = "/bin/sh"
    try:
        if sandbox.kind == LANDLOCK:
            helper = [sys.executable, "-I", "-m", "yak.agent.sandbox", "--write", str(cwd)]
            yield Launch([*helper, "--write", tmp, "--", shell, "-c", command], env)
        elif sandbox.kind == BUBBLEWRAP:
            bwrap = bubblewrap_path() or "bwrap"
            argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
            argv += ["--bind", str(cwd), str(cwd), "--bind", tmp, tmp]
            argv += ["--unshare-pid", "--die-with-parent", "--chdir", str(cwd)]
            yield Launch([*argv, "--", shell, "-c", command], env)
        else:
            yield Launch([shell, "-c", command], env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _landlock_ruleset(writable: list[str]) -> int:
    """A Landlock ruleset descriptor handling every write right, allowing them beneath
    ``writable`` and plain writes to existing files under ``/dev``."""
    libc = _libc()
    abi = landlock_abi()
    assert libc is not None and abi >= 1
    handled = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE
    if abi >= 2:
        handled |= _REFER
    if abi >= 3:
        handled |= _TRUNCATE
    attr = _RulesetAttr(handled, 0, _SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 8
    fd = int(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "the Landlock ruleset was refused")
    try:
        rules = [(path, handled) for path in writable]
        rules.append(("/dev", _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)))
        for path, allowed in rules:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(allowed, target)
                if libc.syscall(_SYS_ADD_RULE, fd, _RULE_PATH_BENEATH, ctypes.byref(rule), 0):
                    raise OSError(ctypes.get_errno(), f"Landlock refused a rule for {path}")
            finally:
                os.close(target)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _restrict_self(ruleset: int) -> Callable[[], None]:
    """Confine this process: no new privileges, then the ruleset (``exec`` next)."""
    libc = _libc()
    assert libc is not None

    def restrict() -> None:
        # Without these even a command run as root cannot read a non-dumpable Yak's
        # /proc/<pid>/environ (Landlock itself only stops attaching). Failing is fine: a user
        # without CAP_SETPCAP has none of them to drop.
        for capability in _PEEKING_CAPABILITIES:
            libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")

    return restrict


def _exec_confined(args: list[str]) -> int:
    """``python -m yak.agent.sandbox --write DIR [--write DIR…] -- PROGRAM ARGS…``: confine
    this process with Landlock (writes only beneath each DIR), then exec PROGRAM. Exits 126 with
    one line on stderr when the sandbox cannot be applied (nothing runs unconfined)."""
    writable: list[str] = []
    while len(args) >= 2 and args[0] == "--write":
        writable.append(args[1])
        args = args[2:]
    if not args or args[0] != "--" or len(args) < 2 or not writable:
        sys.stderr.write("yak: usage: python -m yak.agent.sandbox --write DIR -- PROGRAM\n")
        return 2
    try:
        ruleset = _landlock_ruleset(writable)
        _restrict_self(ruleset)()
        os.close(ruleset)
    except (OSError, AssertionError) as exc:
        sys.stderr.write(f"yak: the landlock sandbox could not be applied: {exc}\n")
        return 126
    try:
        os.execv(args[1], args[1:])
    except OSError as exc:
        sys.stderr.write(f"yak: could not run {args[1]}: {exc.strerror}\n")
    return 127


if __name__ == "__main__":
    sys.exit(_exec_confined(sys.argv[1:]))
