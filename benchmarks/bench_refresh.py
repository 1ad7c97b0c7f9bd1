"""Memory refresh benchmarks: coalescing, and the app's own overhead per refresh.

Runs the real core from ``open_core`` (the refresh scheduler and its queue, the refresher, the
memory service and the repositories on an SQLite file in a temporary folder) and the real
``Provider`` (the anthropic SDK) against the scripted fake Messages API of the test suite
(``tests/support/fake_api.py``) on 127.0.0.1. Prints tables; asserts nothing about time (the
machine is shared and noisy).

1. Coalescing: N assistant-turn completions in one workspace inside the debounce → model calls
   (target: exactly 1 whatever N), with a fake clock and timers fired by hand; then once more
   with real timers (2 s debounce, turns 0.1 s apart). Two workspaces → one call each.
2. Overhead: everything a refresh does except the model call (reading the document and the
   unfolded messages, formatting and redacting up to 48,000 characters, the guards, the
   grounding of each new line and the per-line decision, the write with its revision and
   watermarks, recording the attempt), measured around
   ``Provider.complete`` and compared with a 2 s model call (target: under 1%). Here the fake
   API runs in a child process, as the real one is remote, and the heap is frozen before the
   runs as the app's is once it has started (``yak.ui.heap.freeze_long_lived``): without that,
   full collections over the benchmark's own objects add several milliseconds to each run.
3. Redaction alone (``yak.memory.redaction.scan.redact``), in ms per 60,000 characters: the overhead
   rows' conversation (ordinary prose), a developer's conversation (code, paths, hashes, ids and
   talk about keys and tokens: most of its lines need a closer look), and text dense with
   secrets (the credential lines of the redaction corpus test, one after another), and an image
   pasted as one base64 line. Target: a few ms for ordinary conversation, inside the overhead's
   1%.

Usage, from the repository root: ``python -m benchmarks.bench_refresh [--repeat 15]``
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import multiprocessing
import os
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import targets
from tests.support import ManualTimers, ModelClients, add_turns, project_folder, say
from tests.support import fake_api as fake_api_module
from tests.test_redact_corpus import CREDENTIALS
from yak.bootstrap import open_core
from yak.core import Core
from yak.llm.provider import Provider
from yak.memory.prompts.rewrite import request_text
from yak.memory.redaction import redact
from yak.ui.heap import freeze_long_lived

MODEL_CALL_S = 2.0  # the reference model call the overhead is compared with
OVERHEAD_TARGET_PERCENT = 1.0  # of MODEL_CALL_S


def document(lines: int, tag: str = "") -> str:
    return "".join(
        f"- fact {i:03d}{tag}: the project keeps this convention in src/module_{i}.py\n"
        for i in range(lines)
    )


class TimedProvider(Provider):
    """A Provider that adds up the time spent inside the model call."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.call_s = 0.0

    async def complete(self, **kwargs):
        started = time.perf_counter()
        try:
            return await super().complete(**kwargs)
        finally:
            self.call_s += time.perf_counter() - started


class Breakdown:
    """Adds up the time spent in each step of a refresh, wherever it runs (loop or worker
    thread), by wrapping the functions the refresher calls by name."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.wrapped: list[tuple[object, str, object]] = []  # (owner, name, original)

    def wrap(self, owner: object, name: str, label: str) -> None:
        """Time every call of ``owner.name`` (a function or a coroutine function) as ``label``."""
        original = getattr(owner, name)
        self.wrapped.append((owner, name, original))

        def add(started: float) -> None:
            self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - started

        if asyncio.iscoroutinefunction(original):

            async def timed_async(*args, **kwargs):
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    add(started)

            setattr(owner, name, timed_async)
        else:

            def timed(*args, **kwargs):
                started = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    add(started)

            setattr(owner, name, timed)

    def restore(self) -> None:
        """Put back every function :meth:`wrap` replaced."""
        for owner, name, original in reversed(self.wrapped):
            setattr(owner, name, original)
        self.wrapped.clear()

    def take(self) -> dict[str, float]:
        """The seconds per label since the last call, then start again from zero."""
        taken, self.seconds = self.seconds, {}
        return taken


def instrument(core: Core) -> Breakdown:
    """Wrap the steps of ``core``'s refresher (``yak/refresh/refresher.py`` and ``asking.py``)."""
    from yak.memory.forms import text as text_form
    from yak.memory.judging import guards
    from yak.memory.judging import pipeline as judging
    from yak.refresh import asking, client, refresher, retries

    breakdown = Breakdown()
    steps = [
        (refresher, "redact", "redact transcript"),
        (refresher, "format_transcript", "format+redact"),
        (judging, "redact", "redact reply"),
        (text_form, "clean_reply", "guards"),
        (guards, "normalize_document", "guards"),
        (guards, "check_rewrite", "guards"),
        (asking, "judge_reply", "judge"),
        (retries.prompt, "build_rewrite_request", "prompt"),
        (client, "ready_model_client", "client"),
        (client, "_close", "close"),
        (core.refresher, "_transcript", "read+format"),
        (core.refresher._workspaces, "get", "read workspace"),
        (core.memory._documents, "read", "read document"),
        (core.memory, "apply_rewrite", "write"),
        (core.memory, "record_attempt", "record attempt"),
        (refresher, "passages", "passages"),
        (asking, "decide_lines", "decide"),
    ]
    for owner, name, label in steps:
        breakdown.wrap(owner, name, label)
    return breakdown


# The breakdown's columns: (heading, how it is computed from the wrapped steps' seconds).
BREAKDOWN_COLUMNS = (
    ("read msgs", lambda s: s.get("read+format", 0) - s.get("format+redact", 0)),
    ("format", lambda s: s.get("format+redact", 0) - s.get("redact transcript", 0)),
    ("redact", lambda s: s.get("redact transcript", 0) + s.get("redact reply", 0)),
    ("guards", lambda s: s.get("guards", 0)),
    ("judge other", lambda s: s.get("judge", 0) - s.get("guards", 0) - s.get("redact reply", 0)),
    ("prompt", lambda s: s.get("prompt", 0)),
    ("client", lambda s: s.get("client", 0) + s.get("close", 0)),
    ("read doc+ws", lambda s: s.get("read document", 0) + s.get("read workspace", 0)),
    ("write", lambda s: s.get("write", 0)),
    ("record", lambda s: s.get("record attempt", 0)),
    ("passages*", lambda s: s.get("passages", 0)),
    ("per line", lambda s: s.get("decide", 0)),
)


class Setup:
    """The core (its queue on a fake clock), its model clients and the folders."""

    def __init__(self, folder: Path, fake) -> None:
        self.folder = folder
        self.data_dir = folder / "data"
        self.data_dir.mkdir()
        self.fake = fake
        self.timers = ManualTimers()
        self.clients = ModelClients(provider_class=TimedProvider, timeout_s=120.0)
        self.core = open_core(
            self.data_dir,
            clock=self.timers.clock,
            timer_scheduler=self.timers.schedule,
            model_client=self.clients,
            debounce_s=10,
        )

    async def workspace(self, core: Core, name: str) -> str:
        return (await core.workspaces.open(str(project_folder(self.folder, name)))).id

    def call_s(self) -> float:
        """Seconds spent in model calls so far, by every client built (the refresher keeps its
        client between refreshes while the settings stay the same)."""
        return sum(client.call_s for client in self.clients.built)

    async def aclose(self) -> None:
        await self.core.aclose()
        await self.clients.aclose()


async def coalescing(setup: Setup, turns: int, *, spacing_s: float, workspaces: int = 1) -> int:
    """Model calls for ``turns`` turn-completions per workspace, ``spacing_s`` apart, with a
    10 s debounce and the 900 s maximum wait; runs until nothing is pending."""
    core, timers = setup.core, setup.timers
    before = len(setup.fake.message_requests)
    ids = [
        await setup.workspace(core, f"coalesce-{turns}-{spacing_s:g}-{workspaces}-{i}")
        for i in range(workspaces)
    ]
    sessions = {ws: core.chat.conversations.create_session(ws, "Chat").id for ws in ids}
    for n in range(turns):
        for ws in ids:
            say(core, ws, f"turn {n}: decide something", f"decided {n}", session_id=sessions[ws])
            core.refresh.enqueue(ws)
        timers.advance(spacing_s)
        await asyncio.sleep(0)  # let a run the maximum wait started begin (a yield, no wait)
    await core.refresh.queue.wait_idle()
    while timers.armed():  # runs re-armed by turns that arrived during a run
        timers.advance(10)
        await core.refresh.queue.wait_idle()
    return len(setup.fake.message_requests) - before


async def coalescing_real_timers(setup: Setup, turns: int) -> tuple[int, float]:
    """The same with the event loop's own timers: 2 s debounce, turns 0.1 s apart (a second
    core on the same database, with the default clock and timers)."""
    core = open_core(setup.data_dir, model_client=setup.clients, debounce_s=2)
    try:
        before = len(setup.fake.message_requests)
        ws = await setup.workspace(core, f"real-{turns}")
        session = core.chat.conversations.create_session(ws, "Chat").id
        started = time.perf_counter()
        for n in range(turns):
            say(core, ws, f"turn {n}", f"answer {n}", session_id=session)
            core.refresh.enqueue(ws)
            await asyncio.sleep(0.1)
        while core.refresh.state(ws).state != "idle" or len(setup.fake.message_requests) == before:
            await asyncio.sleep(0.05)
        await core.refresh.queue.wait_idle()
        return len(setup.fake.message_requests) - before, time.perf_counter() - started
    finally:
        await core.aclose()


def _rewrite_responder(body: dict):
    """Answer a rewrite with one edit replacing the document's last line with the newest
    decision of the conversations: a rewrite that changes one line, backed by what was said,
    which the review rules apply at once (re-tagging every line would remove them all, and
    wait for review; a line nothing said would wait too)."""
    content = request_text(body["messages"])
    current = re.search(r"<current-memory>\n(.*?)\n</current-memory>", content, re.DOTALL)
    shown = current.group(1) if current else ""
    last = 0 if shown.startswith("(empty:") else len(shown.split("\n"))
    edit = f"@@ replace {last}" if last else "@@ insert after 0"
    decided = re.findall(r"Decision (\d+): ([^\n]+?\.)", content.split("<conversations>")[-1])
    number, what = decided[-1] if decided else ("none", "nothing was decided.")
    reply = f"<edits>\n{edit}\n- decision {number}: {what}\n</edits>\n"
    return fake_api_module.text(reply, chunks=[reply])


def _serve_fake(urls: multiprocessing.Queue, stop: multiprocessing.Event) -> None:
    """The fake API in its own process, as the real API is on another machine: its threads
    then do not compete with the measured process for the interpreter lock."""
    with fake_api_module.FakeAnthropic() as fake:
        fake.respond_with(_rewrite_responder)
        urls.put(fake.url)
        stop.wait(3600)


async def overhead(
    setup: Setup,
    *,
    doc_lines: int,
    conversation_chars: int,
    repeat: int,
    breakdown: Breakdown,
) -> list[tuple[float, float, dict[str, float]]]:
    """(total, model call, seconds per step) per refresh, ``repeat`` times, each folding a fresh
    conversation of about ``conversation_chars`` characters into a ``doc_lines`` document."""
    core = setup.core
    ws = await setup.workspace(core, f"overhead-{doc_lines}-{conversation_chars}")
    # As an earlier refresh wrote it: lines typed by hand would make a rewrite of them wait.
    await core.memory.apply_rewrite(
        ws, document(doc_lines), base_version=0, model="seed", session_ids=(), watermarks={}
    )
    body = PER_TURN * (conversation_chars // len(PER_TURN) // 8 + 1)

    def turn(n: int) -> tuple[str, str]:
        return f"{n}: {body}", f"{n}: noted. {body}"

    samples = []
    for i in range(repeat):
        add_turns(core, ws, 4, title=f"Session {i}", turn=turn)
        # what the rewrite adds (_rewrite_responder): a refresh applies only what was said
        say(core, ws, f"Decision {i:03d}: release {i:03d} keeps this layout.", "Noted.")
        breakdown.take()
        called = setup.call_s()
        started = time.perf_counter()
        outcome = await core.refresher.refresh(ws)
        total = time.perf_counter() - started
        if outcome.status.value != "applied":
            raise SystemExit(f"benchmark refresh was {outcome.status}: {outcome.reason}")
        samples.append((total, setup.call_s() - called, breakdown.take()))
    return samples


PER_TURN = "We decided to keep the module layout; see src/app.py and docs/setup.md. "
DEVELOPER_LINES = (
    "user: the refresh should keep the API key out of the logs; see yak/settings.py",
    "assistant: I pass max_tokens=8192 to `Provider.complete` and the token counts are logged.",
    "    def load(self, key: str) -> bytes:",
    "        return self._store[key]",
    "commit 3f2a9c1b7d8e4f5a6b7c8d9e0f1a2b3c4d5e6f7a fixes the password reset flow",
    "    password = request.form['password']",
    "pytest -q tests/test_redact_corpus.py::test_every_credential_is_redacted",
    "The workspace list reads 10,000 rows in one query; the panel renders the first 200.",
    "- tests run offscreen with QT_QPA_PLATFORM=offscreen",
    "We should rotate the deploy key every 90 days and keep it in the keyring.",
    "    async def refresh(self, workspace_id: str) -> RefreshOutcome:",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed once with a 529",
    "Run `alembic upgrade head` before starting the app.",
    "The user prefers small commits with a sentence per change.",
)


def redaction(repeat: int, chars: int = 60_000) -> None:
    """Print the redaction table: ms per ``chars`` characters of each kind of text (median
    and fastest of ``repeat`` runs, CPU time of this process, so other processes on a shared
    machine count less)."""
    texts = {
        "ordinary conversation": PER_TURN,
        "developer conversation": "\n".join(DEVELOPER_LINES) + "\n",
        "dense with secrets": "\n".join(text for text, _, _ in CREDENTIALS) + "\n",
        # One line with no space: an image pasted as a data URI.
        "pasted base64 blob": "data:image/png;base64,"
        + base64.b64encode(random.Random(0).randbytes(chars)).decode(),
    }
    print(f"Redaction, ms per {chars:,} characters, {repeat} runs each")
    print(f"{'text':>24}  {'median ms':>9}  {'min ms':>7}  {'markers':>7}")
    for label, unit in texts.items():
        text = (unit * (chars // len(unit) + 1))[:chars]
        redact(text)  # the library's detectors are built on first use
        samples = []
        for _ in range(max(repeat, 5)):
            started = time.process_time()
            redacted, _ = redact(text)
            samples.append(time.process_time() - started)
        markers = redacted.count("[REDACTED:")
        print(
            f"{label:>24}  {statistics.median(samples) * 1000:>9.1f}  "
            f"{min(samples) * 1000:>7.1f}  {markers:>7}"
        )


async def main(repeat: int) -> None:
    redaction(repeat)
    print()
    with tempfile.TemporaryDirectory() as tmp, fake_api_module.FakeAnthropic() as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.url
        os.environ["ANTHROPIC_API_KEY"] = "bench-key"
        setup = Setup(Path(tmp), fake)
        fake.respond_with(lambda body: fake_api_module.text("- coalesced\n" + document(5)))

        print("Coalescing: turn-completions -> model calls (debounce 10 s, maximum wait 900 s)")
        print(f"{'turns':>6}  {'apart':>6}  {'workspaces':>10}  {'model calls':>11}  expected")
        for turns, spacing, workspaces, expected in (
            (1, 1.0, 1, 1),
            (5, 1.0, 1, 1),
            (20, 1.0, 1, 1),
            (100, 0.5, 1, 1),
            (5, 1.0, 2, 2),  # one each
            (100, 9.5, 1, 2),  # the 900 s maximum wait runs one in between
        ):
            calls = await coalescing(setup, turns, spacing_s=spacing, workspaces=workspaces)
            print(f"{turns:>6}  {spacing:>5g}s  {workspaces:>10}  {calls:>11}  {expected}")
            targets.target(
                f"coalescing, {turns} turns {spacing:g} s apart, {workspaces} workspace(s)",
                f"{calls} model call(s)",
                f"{expected}",
                calls == expected,
            )
        calls, elapsed = await coalescing_real_timers(setup, 10)
        print(
            f"real timers, 2 s debounce, 10 turns 0.1 s apart: {calls} model call(s), "
            f"idle after {elapsed:.1f} s"
        )
        targets.target(
            "coalescing, real timers, 10 turns 0.1 s apart",
            f"{calls} model call(s)",
            "1",
            calls == 1,
        )
        fake.respond_with(None)

        urls: multiprocessing.Queue = multiprocessing.Queue()
        stop = multiprocessing.Event()
        server = multiprocessing.Process(target=_serve_fake, args=(urls, stop), daemon=True)
        server.start()
        setup.clients.base_url = urls.get(timeout=60)
        print()
        print(
            f"Overhead per refresh (everything but the model call), {repeat} runs each, "
            f"vs a {MODEL_CALL_S:g} s model call (target: under 1%)"
        )
        print(
            f"{'document':>9}  {'conversation':>12}  {'median ms':>9}  {'p90 ms':>7}  "
            f"{'% of 2 s':>8}  {'target':>7s}"
        )
        breakdown = instrument(setup.core)
        # The heap as the app holds it when a refresh runs: what start-up built, the SDK
        # included, is exempt from collections (the app freezes it after start-up and after the
        # SDK's warm-up, yak/ui/heap.py), so a collection walks what the app's would.
        freeze_long_lived()
        rows = []
        try:
            for doc_lines, chars in ((50, 5_000), (150, 20_000), (190, 60_000)):
                samples = await overhead(
                    setup,
                    doc_lines=doc_lines,
                    conversation_chars=chars,
                    repeat=repeat,
                    breakdown=breakdown,
                )
                own = sorted(total - call for total, call, _ in samples)
                median = statistics.median(own)
                p90 = own[min(len(own) - 1, int(0.9 * len(own)))]
                share = 100 * median / MODEL_CALL_S
                verdict = "ok" if share < OVERHEAD_TARGET_PERCENT else "MISSED"
                print(
                    f"{doc_lines:>6} ln  {chars:>9,} ch  {median * 1000:>9.1f}  "
                    f"{p90 * 1000:>7.1f}  {share:>7.2f}%  {verdict:>7s}"
                )
                rows.append((doc_lines, chars, samples, median))
                targets.target(
                    f"refresh overhead, {doc_lines} lines, {chars:,} characters",
                    f"{median * 1000:.1f} ms = {share:.2f}% of a {MODEL_CALL_S:g} s call",
                    f"< {OVERHEAD_TARGET_PERCENT:g}%",
                    share < OVERHEAD_TARGET_PERCENT,
                )
            print()
            print(
                "Where the overhead goes (medians per step, ms; steps on worker threads included)"
            )
            headings = [heading for heading, _ in BREAKDOWN_COLUMNS]
            print(
                f"{'document':>9}  {'conversation':>12}  "
                + "  ".join(f"{h:>11}" for h in headings)
                + f"  {'the rest':>8}"
            )
            for doc_lines, chars, samples, median in rows:
                cells = [
                    statistics.median(compute(steps) for _, _, steps in samples)
                    for _, compute in BREAKDOWN_COLUMNS
                ]
                rest = median - sum(cells)
                print(
                    f"{doc_lines:>6} ln  {chars:>9,} ch  "
                    + "  ".join(f"{cell * 1000:>11.1f}" for cell in cells)
                    + f"  {rest * 1000:>8.1f}"
                )
            print("(the rest: handing work to threads and back, events, the queue, the loop)")
            print(
                "(passages*: the conversations cut into passages for grounding, their redaction "
                "also under redact; per line: the rewrite decided line by line)"
            )
        finally:
            stop.set()
            server.join(10)
            await setup.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    asyncio.run(main(parser.parse_args().repeat))
