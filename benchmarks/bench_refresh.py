"""Memory refresh benchmarks (DESIGN.md section 8): coalescing and app overhead per refresh.

Runs the real queue, refresher, stores (SQLite file in a temporary folder) and ``Provider`` (the
anthropic SDK) against the scripted fake Messages API from ``tests/fake_anthropic.py`` on
127.0.0.1. Prints tables; asserts nothing about time (the machine is shared and noisy).

1. Coalescing: N assistant-turn completions in one workspace inside the debounce → model calls
   (target: exactly 1 whatever N), with a fake clock; then once more with real timers (2 s
   debounce, turns 0.1 s apart). Two workspaces → one call each.
2. Overhead: everything a refresh does except the model call (reading the document and the
   unfolded messages, formatting and redacting up to 48,000 characters, the guards, the write
   with its revision and watermarks, recording the attempt), measured around
   ``Provider.complete`` and compared with a 2 s model call (target: under 1%). Here the fake
   API runs in a child process, as the real one is remote.

Usage: ``python benchmarks/bench_refresh.py [--repeat 15]``
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from yak.config import Settings
from yak.db import open_database
from yak.db.conversations import ConversationStore
from yak.llm.provider import Provider
from yak.memory.queue import MemoryRefreshQueue
from yak.memory.refresh import MemoryRefresher
from yak.memory.store import MemoryStore

ROOT = Path(__file__).resolve().parent.parent


def _fake_api():
    """The scripted fake Messages API module of the test suite (``tests/fake_anthropic.py``)."""
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    import fake_anthropic

    return fake_anthropic


MODEL_CALL_S = 2.0  # the reference model call of DESIGN.md section 8


def document(lines: int, tag: str = "") -> str:
    return "".join(f"- fact {i:03d}{tag}: the project keeps this convention in src/module_{i}.py\n"
                   for i in range(lines))


class Timers:
    """A fake clock and scheduler so the debounce is driven without waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.entries: list[list] = []

    def clock(self) -> float:
        return self.now

    def schedule(self, delay, callback):
        entry = [self.now + delay, callback]

        class Handle:
            def cancel(self) -> None:
                entry[1] = None

        self.entries.append(entry)
        return Handle()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for entry in sorted(self.entries, key=lambda e: e[0]):
            if entry[1] is not None and entry[0] <= self.now:
                callback, entry[1] = entry[1], None
                callback()

    def armed(self) -> bool:
        return any(entry[1] is not None for entry in self.entries)


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


class Setup:
    def __init__(self, folder: Path, fake) -> None:
        (folder / "data").mkdir()
        self.db = open_database(folder / "data")
        self.store = MemoryStore(self.db)
        self.conversations = ConversationStore(self.db)
        self.fake = fake
        self.folder = folder
        self.providers: list[TimedProvider] = []
        self.api_url: str | None = None  # the out-of-process fake, when set

    def workspace(self, name: str) -> str:
        path = self.folder / name
        path.mkdir()
        return self.store.open_workspace(str(path)).id

    def provider(self) -> TimedProvider:
        provider = TimedProvider(base_url=self.api_url or self.fake.url, max_retries=0)
        self.providers.append(provider)
        return provider

    def refresher(self) -> MemoryRefresher:
        settings = Settings()
        return MemoryRefresher(store=self.store, conversations=self.conversations,
                               provider_factory=self.provider, settings=lambda: settings)

    def turn(self, session_id: str, user: str, assistant: str) -> None:
        self.conversations.add_message(session_id, "user", [{"type": "text", "text": user}])
        self.conversations.add_message(session_id, "assistant",
                                       [{"type": "text", "text": assistant}])


async def coalescing(setup: Setup, turns: int, *, spacing_s: float,
                     workspaces: int = 1) -> int:
    """Model calls for ``turns`` turn-completions per workspace, ``spacing_s`` apart, with a
    10 s debounce and the 60 s maximum wait; runs until nothing is pending."""
    before = len(setup.fake.message_requests)
    timers = Timers()
    refresher = setup.refresher()
    queue = MemoryRefreshQueue(lambda ws, rebuild: refresher.refresh(ws, rebuild=rebuild),
                               debounce_s=10, clock=timers.clock, scheduler=timers.schedule)
    ids = [setup.workspace(f"coalesce-{turns}-{spacing_s:g}-{workspaces}-{i}")
           for i in range(workspaces)]
    sessions = {ws: setup.conversations.create_session(ws, "Chat").id for ws in ids}
    for n in range(turns):
        for ws in ids:
            setup.turn(sessions[ws], f"turn {n}: decide something", f"decided {n}")
            queue.enqueue(ws)
        timers.advance(spacing_s)
        await asyncio.sleep(0)  # let a run the maximum wait started begin (a yield, no wait)
    await queue.wait_idle()
    while timers.armed():  # runs re-armed by turns that arrived during a run
        timers.advance(10)
        await queue.wait_idle()
    return len(setup.fake.message_requests) - before


async def coalescing_real_timers(setup: Setup, turns: int) -> tuple[int, float]:
    """The same with the event loop's own timers: 2 s debounce, turns 0.1 s apart."""
    before = len(setup.fake.message_requests)
    refresher = setup.refresher()
    queue = MemoryRefreshQueue(lambda ws, rebuild: refresher.refresh(ws, rebuild=rebuild),
                               debounce_s=2)
    ws = setup.workspace(f"real-{turns}")
    session = setup.conversations.create_session(ws, "Chat").id
    started = time.perf_counter()
    for n in range(turns):
        setup.turn(session, f"turn {n}", f"answer {n}")
        queue.enqueue(ws)
        await asyncio.sleep(0.1)
    while queue.state(ws).state != "idle" or len(setup.fake.message_requests) == before:
        await asyncio.sleep(0.05)
    await queue.wait_idle()
    return len(setup.fake.message_requests) - before, time.perf_counter() - started


def _rewrite_responder(body: dict):
    """Answer a rewrite with the current document's lines re-tagged (always a valid rewrite)."""
    content = body["messages"][0]["content"]
    current = re.search(r"<current-memory>\n(.*?)\n</current-memory>", content, re.DOTALL)
    lines = current.group(1).count("\n") + 1 if current else 5
    reply = document(lines, tag=f"-{time.monotonic_ns()}")
    return _fake_api().text(reply, chunks=[reply])


def _serve_fake(urls: multiprocessing.Queue, stop: multiprocessing.Event) -> None:
    """The fake API in its own process, as the real API is on another machine: its threads
    then do not compete with the measured process for the interpreter lock."""
    with _fake_api().FakeAnthropic() as fake:
        fake.respond_with(_rewrite_responder)
        urls.put(fake.url)
        stop.wait(3600)


async def overhead(setup: Setup, *, doc_lines: int, conversation_chars: int,
                   repeat: int) -> list[tuple[float, float]]:
    """(total, model call) seconds per refresh, ``repeat`` times, each folding a fresh
    conversation of about ``conversation_chars`` characters into a ``doc_lines`` document."""
    ws = setup.workspace(f"overhead-{doc_lines}-{conversation_chars}")
    setup.store.write(ws, document(doc_lines), expected_version=0)
    samples = []
    for i in range(repeat):
        session = setup.conversations.create_session(ws, f"Session {i}").id
        per_turn = "We decided to keep the module layout; see src/app.py and docs/setup.md. "
        body = (per_turn * (conversation_chars // len(per_turn) // 8 + 1))
        for n in range(4):
            setup.turn(session, f"{n}: {body}", f"{n}: noted. {body}")
        refresher = setup.refresher()
        started = time.perf_counter()
        outcome = await refresher.refresh(ws)
        total = time.perf_counter() - started
        provider = setup.providers[-1]
        if outcome.status.value != "applied":
            raise SystemExit(f"benchmark refresh was {outcome.status}: {outcome.reason}")
        samples.append((total, provider.call_s))
    return samples


async def main(repeat: int) -> None:
    fake_api = _fake_api()
    with tempfile.TemporaryDirectory() as tmp, fake_api.FakeAnthropic() as fake:
        os.environ["ANTHROPIC_API_KEY"] = "bench-key"
        setup = Setup(Path(tmp), fake)
        fake.respond_with(lambda body: fake_api.text("- coalesced\n" + document(5)))

        print("Coalescing: turn-completions -> model calls (debounce 10 s, maximum wait 60 s)")
        print(f"{'turns':>6}  {'apart':>6}  {'workspaces':>10}  {'model calls':>11}  expected")
        for turns, spacing, workspaces, expected in (
                (1, 1.0, 1, "1"), (5, 1.0, 1, "1"), (20, 1.0, 1, "1"), (100, 0.5, 1, "1"),
                (5, 1.0, 2, "2 (one each)"), (100, 1.0, 1, "2 (60 s maximum wait)")):
            calls = await coalescing(setup, turns, spacing_s=spacing, workspaces=workspaces)
            print(f"{turns:>6}  {spacing:>5g}s  {workspaces:>10}  {calls:>11}  {expected}")
        calls, elapsed = await coalescing_real_timers(setup, 10)
        print(f"real timers, 2 s debounce, 10 turns 0.1 s apart: {calls} model call(s), "
              f"idle after {elapsed:.1f} s")
        fake.respond_with(None)

        urls: multiprocessing.Queue = multiprocessing.Queue()
        stop = multiprocessing.Event()
        server = multiprocessing.Process(target=_serve_fake, args=(urls, stop), daemon=True)
        server.start()
        setup.api_url = urls.get(timeout=60)
        print()
        print(f"Overhead per refresh (everything but the model call), {repeat} runs each, "
              f"vs a {MODEL_CALL_S:g} s model call (target: under 1%)")
        print(f"{'document':>9}  {'conversation':>12}  {'median ms':>9}  {'p90 ms':>7}  "
              f"{'% of 2 s':>8}")
        for doc_lines, chars in ((50, 5_000), (150, 20_000), (190, 60_000)):
            samples = await overhead(setup, doc_lines=doc_lines, conversation_chars=chars,
                                     repeat=repeat)
            own = sorted(total - call for total, call in samples)
            median = statistics.median(own)
            p90 = own[min(len(own) - 1, int(0.9 * len(own)))]
            print(f"{doc_lines:>6} ln  {chars:>9,} ch  {median * 1000:>9.1f}  {p90 * 1000:>7.1f}"
                  f"  {100 * median / MODEL_CALL_S:>7.2f}%")
        stop.set()
        server.join(10)
        for provider in setup.providers:
            await provider.aclose()
        setup.db.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    asyncio.run(main(parser.parse_args().repeat))
