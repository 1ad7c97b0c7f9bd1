"""The fault suite: Yak under crashes, races, broken providers, bad input and escape attempts.

Usage, from the repository root (with the development environment active)::

    python -m benchmarks.faults            # the full run (a few minutes)
    python -m benchmarks.faults --quick    # a short run (CI runs it, about 30 s)

What it does, each part against a private data directory and the scripted fake Messages API:

- **kill -9** during ``memory set`` (hand writes), refreshes and imports: a worker process writes
  in a loop and prints each acknowledged write; it is killed at a random moment, then the
  database is checked: ``PRAGMA integrity_check`` is ``ok``, every acknowledged write is in the
  history with its exact bytes, the versions run 1, 2, 3… without a gap, and the document and
  every revision are whole documents the worker wrote (never a partial one).
- **racing writers**: several processes read the version and write on it at once; a conflict is
  retried. Every acknowledged write must be in the history (lost updates 0).
- **provider faults**: every kind of fault the fake API can produce (HTTP errors, errors inside a
  stream, cut and stalled streams, hangs, malformed data) during a refresh: the document must be
  byte-identical afterwards, the attempt recorded, and no exception may escape.
- **bad input**: a table of command lines a user might get wrong, with the exit code and the one
  line each gets; never exit 1 (that is for the database), never a traceback, one line.
- **escapes**: tool calls that try to leave the workspace (``..``, absolute paths, links out,
  drive paths) and commands that write outside or read Yak's environment; all refused.

It prints a table of figures and exits 1 when any invariant is broken.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import importlib
import io
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.fake_api import (
    MALFORMED_FAULTS,
    FakeAnthropic,
    Reply,
    cut,
    error,
    hang,
    malformed,
    stream_error,
    text,
)

ROOT = Path(__file__).resolve().parent.parent
BASE_LINES = 30
HEADER = re.compile(r"^document (set|refresh|import|race) (\w+) (\d+)\n")


def document(kind: str, who: str, n: int) -> str:
    """A whole document a worker writes, ``BASE_LINES`` lines: a header naming it, then facts.

    A refresh's document changes only its header and its last line from one write to the
    next: a rewrite that replaces more than a quarter of the lines waits for review whole
    (docs/refresh.md), and an acknowledged refresh is one that was applied."""
    if kind == "refresh":
        body = "".join(f"- refresh: fact {i:02d} of the project\n" for i in range(BASE_LINES - 2))
        return f"document {kind} {who} {n}\n{body}- the latest write is number {n}\n"
    body = "".join(f"- {kind} {who} write {n}: fact {i:02d} of the project\n" for i in range(29))
    return f"document {kind} {who} {n}\n{body}"


def refresh_reply(body: dict) -> Reply:
    """The memory model's reply to a refresh: the document the newest folded message says
    (the worker says the whole document it wants, so every line of the reply is backed by the
    conversation; a line nothing said would wait for review)."""
    from yak.memory.prompts.rewrite import request_text

    said = request_text(body["messages"]).split("<conversations>", 1)[-1]
    found = re.findall(r"document refresh (\S+) (\d+)", said)
    who, n = found[-1] if found else ("model", "0")
    return text(document("refresh", who, int(n)), chunk_delay_s=0.001)


def is_whole(content: str) -> bool:
    """Whether ``content`` is exactly one document :func:`document` makes (never a part)."""
    found = HEADER.match(content)
    return bool(found) and content == document(found[1], found[2], int(found[3]))


def sha(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()[:16]


# --- workers (run in a child process, killed at random) ---------------------------------------
async def _worker(kind: str, data_dir: Path, folder: str, who: str, count: int) -> None:
    from tests.support.builders import say
    from yak.bootstrap import open_core
    from yak.errors import ConflictError

    core = open_core(data_dir)
    try:
        workspace = await core.workspaces.open(folder)
        if kind == "refresh":  # the SDK import takes seconds: done before the clock starts
            importlib.import_module("anthropic")
        print("ready", flush=True)
        n = 0
        while count <= 0 or n < count:
            n += 1
            content = document(kind, who, n)
            if kind == "set":
                written = await core.memory.save(workspace.id, content, expected_version=None)
            elif kind == "import":
                path = data_dir / f"import-{who}-{n}.txt"
                path.write_text(content, encoding="utf-8")
                written = await core.memory.import_file(workspace.id, path)
            elif kind == "race":
                while True:
                    current = await core.memory.read(workspace.id)
                    try:
                        written = await core.memory.save(
                            workspace.id, content, expected_version=current.version
                        )
                        break
                    except ConflictError:
                        continue
            else:  # refresh: a message saying the document, then its rewrite streamed slowly
                say(core, workspace.id, f"We settled:\n{content}", "ok", title=f"w{n}")
                outcome = await core.refresh.refresh_now(workspace.id)
                if str(outcome.status) != "applied":
                    continue
                written = await core.memory.read(workspace.id)
                content = written.content
            print(f"ack {written.version} {sha(content)}", flush=True)
    finally:
        await core.aclose()


# --- checks -------------------------------------------------------------------------------------
@dataclass
class Figures:
    """One row of the table."""

    part: str
    runs: int = 0
    acknowledged: int = 0
    lost: int = 0
    broken: list[str] = field(default_factory=list)
    note: str = ""
    seconds: float = 0.0


def check_store(data_dir: Path, folder: str, acks: list[tuple[int, str]], figures: Figures) -> None:
    """The invariants after a crash: integrity, no acknowledged write lost, no version gap,
    never a partial document."""
    with contextlib.closing(sqlite3.connect(data_dir / "yak.db")) as db:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    if integrity != "ok":
        figures.broken.append(f"integrity_check: {integrity}")
    from yak.bootstrap import open_core

    async def read() -> tuple[str, list]:
        core = open_core(data_dir)
        try:
            workspace = await core.workspaces.open(folder)
            return (await core.memory.read(workspace.id)).content, await core.memory.history(
                workspace.id
            )
        finally:
            await core.aclose()

    content, history = asyncio.run(read())
    by_version = {r.version: r.content for r in history}
    versions = sorted(by_version)
    if versions != list(range(1, len(versions) + 1)):
        figures.broken.append(f"version gap: {versions[:5]}…")
    for version, digest in acks:
        if version not in by_version or sha(by_version[version]) != digest:
            figures.lost += 1
    if content and not is_whole(content):
        figures.broken.append("the document is not a whole document")
    if any(not is_whole(c) for c in by_version.values() if c):
        figures.broken.append("a revision is not a whole document")
    if versions and content != by_version[versions[-1]]:
        figures.broken.append("the document is not its latest revision")


def spawn(
    kind: str, data_dir: Path, folder: str, who: str, count: int, env: dict
) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.faults", "--worker", kind, str(data_dir), folder, who],
        cwd=ROOT,
        env={**env, "YAK_FAULTS_COUNT": str(count)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def kill_cycles(kind: str, cycles: int, base: Path, env: dict, rng: random.Random) -> Figures:
    """``cycles`` workers of ``kind`` killed with SIGKILL at a random moment each; the store is
    checked after every kill."""
    figures = Figures(f"kill -9 during {'memory set' if kind == 'set' else kind}")
    data_dir, folder = base / f"kill-{kind}", base / f"ws-{kind}"
    data_dir.mkdir()
    folder.mkdir()
    for cycle in range(cycles):
        worker = spawn(kind, data_dir, str(folder), f"c{cycle}", 0, env)
        assert worker.stdout is not None
        if worker.stdout.readline().strip() != "ready":
            worker.kill()
            figures.broken.append(f"cycle {cycle}: the worker did not start")
            continue
        time.sleep(rng.uniform(0.1, 1.5) if kind == "refresh" else rng.uniform(0.05, 0.6))
        worker.send_signal(signal.SIGKILL)
        out, _ = worker.communicate()
        acks = [(int(v), d) for _, v, d in (line.split() for line in out.splitlines() if line)]
        figures.runs += 1
        figures.acknowledged += len(acks)
        check_store(data_dir, str(folder), acks, figures)
    return figures


def racing_writers(writers: int, writes: int, base: Path, env: dict) -> Figures:
    """``writers`` processes each making ``writes`` writes on the version they read."""
    figures = Figures("racing writers", note=f"{writers} processes × {writes} writes")
    data_dir, folder = base / "race", base / "ws-race"
    data_dir.mkdir()
    folder.mkdir()
    procs = [spawn("race", data_dir, str(folder), f"w{i}", writes, env) for i in range(writers)]
    acks: list[tuple[int, str]] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        acks += [(int(v), d) for _, v, d in (line.split() for line in out.splitlines()[1:])]
        figures.runs += writes
    figures.acknowledged = len(acks)
    if len({v for v, _ in acks}) != len(acks):
        figures.broken.append("two writes acknowledged with one version")
    check_store(data_dir, str(folder), acks, figures)
    if figures.acknowledged != writers * writes:
        figures.broken.append(f"{figures.acknowledged} of {writers * writes} writes acknowledged")
    return figures


# --- provider faults ----------------------------------------------------------------------------
def fault_kinds() -> list[tuple[str, Callable[[], Reply]]]:
    """Every fault the fake API can produce, by name."""
    kinds: list[tuple[str, Callable[[], Reply]]] = [
        (f"http {status}", lambda status=status: error(status, retry_after_ms=1))
        for status in (400, 401, 403, 404, 413, 429, 500, 529)
    ]
    kinds += [
        ("stream error overloaded", lambda: stream_error(error_type="overloaded_error")),
        ("stream error api_error", lambda: stream_error(error_type="api_error")),
        ("stream cut", lambda: cut("- half a docu", after_deltas=3)),
        ("hang before answering", hang),
        ("stall mid-stream", lambda: hang(after_deltas=2)),
        ("reply cut at max_tokens", lambda: text("# a short cut\n- one", stop_reason="max_tokens")),
        ("refusal", lambda: text("I can't help with that.", stop_reason="refusal")),
    ]
    kinds += [(f"malformed {name}", lambda name=name: malformed(name)) for name in MALFORMED_FAULTS]
    return kinds


def provider_faults(fake: FakeAnthropic, base: Path) -> tuple[Figures, list[tuple[str, str]]]:
    """One refresh per fault kind; the document must come out byte-identical."""
    from tests.support.builders import say
    from yak.bootstrap import open_core

    figures = Figures("provider faults during a refresh")
    outcomes: list[tuple[str, str]] = []
    data_dir, folder = base / "faults", base / "ws-faults"
    data_dir.mkdir()
    folder.mkdir()
    env = {**os.environ, "YAK_TIMEOUT_SECONDS": "1", "YAK_MEMORY_MODEL": "claude-fault"}

    async def run() -> None:
        core = open_core(data_dir, env=env)
        try:
            workspace = await core.workspaces.open(str(folder))
            await core.memory.save(
                workspace.id, document("set", "faults", 0), expected_version=None
            )
            for name, make in fault_kinds():
                fake.script(make(), make(), make())
                say(core, workspace.id, f"about {name}", "ok", title=name)
                before = (await core.memory.read(workspace.id)).content.encode()
                attempts = len(await core.memory.attempts(workspace.id))
                figures.runs += 1
                try:
                    outcome = await core.refresh.refresh_now(workspace.id)
                except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
                    figures.broken.append(f"{name}: {type(exc).__name__} escaped")
                    continue
                finally:
                    fake.drop_pending()  # replies the SDK did not retry for
                after = (await core.memory.read(workspace.id)).content.encode()
                recorded = len(await core.memory.attempts(workspace.id)) == attempts + 1
                if after != before or str(outcome.status) == "applied":
                    figures.broken.append(f"{name}: the document changed")
                elif not recorded:
                    figures.broken.append(f"{name}: no attempt recorded")
                else:
                    figures.acknowledged += 1  # survived
                outcomes.append((name, f"{outcome.status}: {outcome.reason}"))
        finally:
            await core.aclose()

    asyncio.run(run())
    figures.note = f"{figures.acknowledged} of {figures.runs} survived, document byte-identical"
    return figures, outcomes


# --- bad input ----------------------------------------------------------------------------------
def bad_inputs(base: Path) -> list[tuple[list[str], str]]:
    """Command lines a user may get wrong, with their stdin."""
    folder = base / "ws-bad"
    folder.mkdir()
    (base / "binary.bin").write_bytes(b"\x00\x01\x02\xff" * 100)
    (base / "over.txt").write_text("- line\n" * 300)
    (base / "empty.txt").write_text("")
    (base / "a folder").mkdir()
    w = ["-w", str(folder)]
    cases: list[tuple[list[str], str]] = [
        (["memory", "show", "-w", str(base / "missing")], ""),
        (["memory", "show", "-w", "/nowhere/a\nb"], ""),
        (["memory", "show", "-w", "/nowhere/\x1b[31mred"], ""),
        (["memory", "show", "-w", "/nowhere/" + "x" * 5000], ""),
        (["memory", "show", "-w", str(base / "binary.bin")], ""),
        (["memory", "show", "-w", ""], ""),
        (["memory", "set", *w], ""),
        (["memory", "set", *w], "\n\n  \n"),
        (["memory", "set", *w], "- line\n" * 300),
        (["memory", "set", *w], "nul \x00 inside"),
        (["memory", "set", *w, "--expect-version", "abc"], "x"),
        (["memory", "set", *w, "--expect-version", "-1"], "x"),
        (["memory", "set", *w, "--file", str(base / "nothing.txt")], ""),
        (["memory", "set", *w, "--file", str(base / "a folder")], ""),
        (["memory", "import", str(base / "binary.bin"), *w], ""),
        (["memory", "import", str(base / "over.txt"), *w], ""),
        (["memory", "import", str(base / "empty.txt"), *w], ""),
        (["memory", "import", str(base / "nothing.txt"), *w], ""),
        (["memory", "restore", "nope", *w], ""),
        (["memory", "restore", "", *w], ""),
        (["memory", "export", *w, "--format", "pdf"], ""),
        (["memory", "export", *w, "-o", str(base / "a folder")], ""),
        (["memory", "history", *w, "--limit", "x"], ""),
        (["memory", "frobnicate"], ""),
        (["memory"], ""),
        (["--json", "memory", "list"], ""),
        (["ask", *w, ""], ""),
        (["ask", *w, "-"], "   "),
        (["ask", *w, "--session", "abc", "hi"], ""),
        (["ask", *w, "--timeout", "0", "hi"], ""),
        (["ask", *w, "--timeout", "soon", "hi"], ""),
        (["memory", "refresh", *w, "--timeout", "-1"], ""),
        (["memory", "show", "-w", str(folder), "--json", "--bogus"], ""),
    ]
    return cases


def run_cli(argv: list[str], stdin: str) -> tuple[int, str, str]:
    """``yak ARGV`` in this process; (exit code, stdout, stderr)."""
    from yak.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8", "surrogateescape")))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = int(exc.code or 0)
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def bad_input_table(base: Path, *, quick: bool) -> tuple[Figures, list[tuple[str, int, str]]]:
    """Every bad input (every third one in a quick run): a clear one-line error each."""
    figures = Figures("bad input")
    rows: list[tuple[str, int, str]] = []
    cases = bad_inputs(base)
    for argv, stdin in cases[::3] if quick else cases:
        code, _out, err = run_cli(argv, stdin)
        figures.runs += 1
        shown = " ".join(a if len(a) < 40 else a[:18] + "…" + a[-12:] for a in argv)
        shown = shown.encode("unicode_escape").decode()
        line = err.rstrip("\n")
        clear = code not in (0, 1) and "Traceback" not in err and err.count("\n") == 1
        if clear:
            figures.acknowledged += 1  # a clear error
        else:
            figures.broken.append(f"{shown}: exit {code}, {err!r:.80}")
        rows.append((shown, code, line))
    figures.note = f"{figures.acknowledged} of {figures.runs} with a clear one-line error"
    return figures, rows


# --- escapes ------------------------------------------------------------------------------------
def escapes(base: Path) -> Figures:
    from yak.agent import sandbox
    from yak.agent.tools import WorkspaceTools

    figures = Figures("escape attempts")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-SECRET\n")
    ws = base / "ws-escape"
    (ws / "d").mkdir(parents=True)
    (ws / "link_out").symlink_to(outside / "secret.txt")
    (ws / "dir_out").symlink_to(outside, target_is_directory=True)
    tools = WorkspaceTools(ws)
    paths = [
        "../outside/secret.txt",
        "d/../../outside/secret.txt",
        "..\\outside\\secret.txt",
        str(outside / "secret.txt"),
        "link_out",
        "dir_out/secret.txt",
        "C:\\Windows\\win.ini",
        "\\\\server\\share\\x",
        "//server/share/x",
        "nul\x00byte",
    ]
    calls = []
    for path in paths:
        calls += [
            ("read_file", {"path": path}),
            ("write_file", {"path": path, "content": "pwned"}),
            ("edit_file", {"path": path, "old_string": "OUTSIDE", "new_string": "pwned"}),
            ("list_directory", {"path": path}),
            ("grep", {"pattern": "SECRET", "path": path}),
        ]
    calls += [("glob", {"pattern": "../outside/*"}), ("glob", {"pattern": "/etc/*"})]
    chosen = sandbox.choose("auto")
    if chosen.refusal is None:
        calls += [
            ("run_command", {"command": f"echo pwned > {outside}/new.txt"}),
            ("run_command", {"command": f"rm {outside}/secret.txt"}),
            ("run_command", {"command": "cat /proc/$PPID/environ | grep -c ANTHROPIC_API_KEY"}),
        ]
    for name, args in calls:
        result = tools.run(name, args)
        figures.runs += 1
        leaked = "OUTSIDE-SECRET" in result.output or "ANTHROPIC_API_KEY=" in result.output
        if result.ok and name != "run_command" or leaked:
            figures.broken.append(f"{name} {args}: {result.output[:60]!r}")
        else:
            figures.acknowledged += 1
    if sorted(os.listdir(outside)) != ["secret.txt"] or (
        (outside / "secret.txt").read_text() != "OUTSIDE-SECRET\n"
    ):
        figures.broken.append("something outside the workspace changed")
    figures.note = f"{figures.acknowledged} of {figures.runs} refused ({chosen.label})"
    return figures


# --- the run ------------------------------------------------------------------------------------
@contextlib.contextmanager
def fake_api() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic().start()
    try:
        yield fake
    finally:
        fake.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (CI)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--worker", nargs=4, metavar=("KIND", "DATA_DIR", "FOLDER", "WHO"))
    args = parser.parse_args()
    if args.worker:
        kind, data_dir, folder, who = args.worker
        count = int(os.environ.get("YAK_FAULTS_COUNT", "0"))
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_worker(kind, Path(data_dir), folder, who, count))
        return 0
    rng = random.Random(args.seed)
    cycles, writers, writes = (1, 2, 3) if args.quick else (40, 4, 25)
    started = time.monotonic()
    rows: list[Figures] = []
    with tempfile.TemporaryDirectory(prefix="yak-faults-") as tmp, fake_api() as fake:
        base = Path(tmp)
        fake.respond_with(refresh_reply)
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "fault-suite-key",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            # the in-process command lines (bad input, provider faults) keep to the run's own
            # database, never the user's
            "YAK_DATA_DIR": str(base / "cli-data"),
        }
        for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "PYTHON_KEYRING_BACKEND"):
            os.environ[name] = env[name]
        os.environ["YAK_DATA_DIR"] = env["YAK_DATA_DIR"]

        def timed(part: Callable[[], Figures]) -> None:
            since = time.monotonic()
            figures = part()
            figures.seconds = time.monotonic() - since
            rows.append(figures)

        for kind in ("set", "refresh", "import"):
            timed(lambda kind=kind: kill_cycles(kind, cycles, base, env, rng))
        timed(lambda: racing_writers(writers, writes, base, env))
        fake.respond_with(None)
        outcomes: list[tuple[str, str]] = []
        table: list[tuple[str, int, str]] = []

        def faults() -> Figures:
            figures, found = provider_faults(fake, base)
            outcomes.extend(found)
            return figures

        def bad() -> Figures:
            figures, rows_found = bad_input_table(base, quick=args.quick)
            table.extend(rows_found)
            return figures

        timed(faults)
        timed(bad)
        timed(lambda: escapes(base))

    print(f"\nFault suite ({'quick' if args.quick else 'full'} run, seed {args.seed})\n")
    print(f"{'part':34} {'runs':>5} {'acked/ok':>9} {'lost':>5} {'broken':>7} {'s':>5}  note")
    for row in rows:
        print(
            f"{row.part:34} {row.runs:>5} {row.acknowledged:>9} {row.lost:>5} "
            f"{len(row.broken):>7} {row.seconds:>5.0f}  {row.note}"
        )
    print("\nProvider faults (outcome of the refresh):")
    for name, outcome in outcomes:
        print(f"  {name:34} {outcome[:110]}")
    print("\nBad input (exit code, the line on stderr):")
    for shown, code, line in table:
        print(f"  {code}  {shown[:60]:60}  {line[:100]}")
    broken = [f"{row.part}: {b}" for row in rows for b in row.broken]
    lost = sum(row.lost for row in rows)
    print(f"\n{len(broken)} invariants broken, {lost} acknowledged writes lost "
          f"({time.monotonic() - started:.0f} s).")  # fmt: skip
    for line in broken:
        print(f"  BROKEN {line}")
    return 1 if broken or lost else 0


if __name__ == "__main__":
    sys.exit(main())
