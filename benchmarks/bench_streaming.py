"""UI event-loop smoothness while a reply streams (the target: no stall over 50 ms and a p99
under 16 ms, while a reply streams at 200 tokens/s and a refresh runs).

The real chat panel and its controller on the core from ``open_core`` (its chat service, agent
loop and ``Provider``, the anthropic SDK, and its refresh scheduler and refresher) on one qasync
loop, as in the app, against the scripted fake Messages API of the test suite
(``tests/support/fake_api.py``) running in a child process (the real API is on another machine, so
its threads must not compete with the window for the interpreter lock). The fake streams one word
per delta at 200 deltas a second. Meanwhile a memory refresh of another workspace runs on the same
loop against the same fake (its reply streamed over about three seconds).

A 5 ms ``QTimer`` heartbeat records when the loop gets round to it; the gap between two beats is
the longest the window could not react to the user. The table shows the gaps' maximum, p99 and
median per scenario, with the delta rate reached, how often the transcript re-rendered and the
process's CPU time as a share of the wall time (the window's own cost, the fake being elsewhere).
Nothing is asserted: the machine is shared and noisy; read the numbers.

Scenarios: ``idle`` (the heartbeat alone: this machine's floor), ``stream`` (a 1,000-word reply),
``stream+refresh`` (the same with a refresh running), ``long+refresh`` (a 3,000-word reply, about
20,000 characters, with a refresh: rendering cost grows with the reply), and for comparison
``long, unthrottled`` (the same reply re-rendered on every delta, which the transcript never does).

Usage, from the repository root: ``python -m benchmarks.bench_streaming [--repeat 2] [--rate 200]``
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen" if not os.environ.get("DISPLAY") else "xcb")
os.environ.setdefault("QT_API", "pyside6")

import qasync
from PySide6.QtCore import Qt, QTimer, qInstallMessageHandler
from PySide6.QtWidgets import QApplication, QMainWindow

from tests.support import ManualTimers, add_turns, project_folder
from tests.support import fake_api as fake_api_module
from yak.bootstrap import open_core
from yak.ui.chat.controller import ChatController
from yak.ui.chat.panel import ChatPanel

HEARTBEAT_MS = 5
MEMORY_MODEL = "bench-memory-model"
WORDS = (
    "the",
    "agent",
    "reads",
    "src/app.py",
    "and",
    "**keeps**",
    "`memory`",
    "short,",
    "then",
    "writes",
    "a",
    "test.",
)


def reply_text(words: int) -> list[str]:
    """A Markdown reply of ``words`` deltas: paragraphs, a list and a code block now and then."""
    chunks = []
    for i in range(words):
        word = WORDS[i % len(WORDS)]
        if i % 60 == 59:
            chunks.append(word + "\n\n")
        elif i % 240 == 120:
            chunks.append("\n\n- item\n- item\n\n```python\nprint('x')\n```\n\n")
        else:
            chunks.append(word + " ")
    return chunks


def _responder(rate: float):
    fake_api = fake_api_module

    def respond(body: dict):
        if body.get("model") == MEMORY_MODEL:  # the memory rewrite: a document, over ~3 s
            doc = "".join(
                f"- fact {i}: the project keeps convention {i} in src/m{i}.py\n" for i in range(60)
            )
            return fake_api.text(doc, chunk_delay_s=3.0 / 600)
        prompt = body["messages"][-1]["content"]
        prompt_text = prompt if isinstance(prompt, str) else prompt[0].get("text", "")
        words = int(re.search(r"(\d+) words", prompt_text).group(1))
        return fake_api.text(
            "", chunks=reply_text(words), chunk_delay_s=1.0 / rate, usage=(1200, words)
        )

    return respond


def _serve_fake(urls: multiprocessing.Queue, stop: multiprocessing.Event, rate: float) -> None:
    with fake_api_module.FakeAnthropic() as fake:
        fake.respond_with(_responder(rate))
        urls.put(fake.url)
        stop.wait(3600)


@dataclass
class Run:
    """One measured scenario run."""

    gaps_ms: list[float]
    deltas: int = 0
    stream_s: float = 0.0
    renders: int = 0
    refresh: str = ""
    cpu_share: float = 0.0  # process CPU time / wall time over the run


class Heartbeat:
    """A 5 ms timer that records when it fires."""

    def __init__(self) -> None:
        self.beats: list[float] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(HEARTBEAT_MS)
        self.timer.timeout.connect(self._on_timer_timeout)

    def _on_timer_timeout(self) -> None:
        self.beats.append(time.perf_counter())

    def start(self) -> None:
        self.beats.clear()
        self.timer.start()

    def stop(self) -> list[float]:
        self.timer.stop()
        return [(b - a) * 1000 for a, b in itertools.pairwise(self.beats)]


class Bench:
    """The window, the core and the other workspace whose memory gets refreshed.

    The core's automatic refreshes (a completed turn enqueues its workspace) wait on timers that
    are never fired here, so the only refresh is the one a scenario starts.
    """

    def __init__(self, tmp: Path) -> None:
        (tmp / "data").mkdir()
        held = ManualTimers()  # never advanced: automatic refreshes never come due
        self.core = open_core(tmp / "data", clock=held.clock, timer_scheduler=held.schedule)
        settings = self.core.settings.current()
        self.core.settings.save(replace(settings, memory_model=MEMORY_MODEL))
        self.folders = {name: project_folder(tmp, name) for name in ("chat", "other")}
        self.window = QMainWindow()
        self.panel = ChatPanel()
        self.window.setCentralWidget(self.panel)
        self.window.resize(1000, 700)
        self.window.show()
        self.controller = ChatController(self.panel, self.core.chat, self.core.settings)
        self.heartbeat = Heartbeat()
        self.deltas = 0
        self.first_delta: float | None = None
        self.last_delta = 0.0
        self.render_every_delta = False  # the comparison row: no throttling
        original = self.controller._on_agent_event

        def counting(event) -> None:
            if type(event).__name__ == "TextDelta":
                now = time.perf_counter()
                self.first_delta = self.first_delta or now
                self.last_delta = now
                self.deltas += 1
            original(event)
            if self.render_every_delta:
                self.panel.transcript.flush()

        self.controller._on_agent_event = counting

    async def open_workspaces(self) -> None:
        self.workspace = await self.core.workspaces.open(str(self.folders["chat"]))
        self.other = await self.core.workspaces.open(str(self.folders["other"]))

    async def prepare_refresh(self, n: int) -> None:
        """Give the other workspace a conversation not yet folded into its memory."""
        await self.core.memory.save(
            self.other.id, "- the project is a benchmark\n" * 20, expected_version=None
        )
        add_turns(
            self.core,
            self.other.id,
            4,
            title=f"Other {n}",
            turn=lambda i: (
                f"Question {i}: how is src/m{i}.py organised?",
                f"Answer {i}: it keeps convention {i}. " * 20,
            ),
        )

    async def idle(self, seconds: float) -> Run:
        cpu, wall = time.process_time(), time.perf_counter()
        self.heartbeat.start()
        await asyncio.sleep(seconds)
        gaps = self.heartbeat.stop()
        return Run(
            gaps_ms=gaps, cpu_share=(time.process_time() - cpu) / (time.perf_counter() - wall)
        )

    async def stream(
        self, words: int, *, with_refresh: bool, n: int, render_every_delta: bool = False
    ) -> Run:
        self.render_every_delta = render_every_delta
        if with_refresh:
            await self.prepare_refresh(n)
        renders_before = self.panel.transcript.render_count
        self.deltas, self.first_delta = 0, None
        done = asyncio.Event()
        statuses: list[str] = []

        def on_finished(status: str) -> None:
            statuses.append(status)
            done.set()

        self.controller.turn_finished.connect(on_finished)
        cpu, wall = time.process_time(), time.perf_counter()
        self.heartbeat.start()
        refresh_task = None
        if with_refresh:  # a forced refresh, as the memory panel's Refresh button runs it
            refresh_task = asyncio.ensure_future(self.core.refresh.refresh_now(self.other.id))
        self.controller.start_turn(f"Please answer in {words} words.")
        await done.wait()
        outcome = await refresh_task if refresh_task is not None else None
        gaps = self.heartbeat.stop()
        cpu_share = (time.process_time() - cpu) / (time.perf_counter() - wall)
        self.controller.turn_finished.disconnect(on_finished)
        if statuses != ["completed"]:
            raise SystemExit(
                f"the benchmark turn ended {statuses}: {self.panel.error_banner.text()}"
            )
        return Run(
            gaps_ms=gaps,
            deltas=self.deltas,
            stream_s=(self.last_delta - (self.first_delta or self.last_delta)),
            renders=self.panel.transcript.render_count - renders_before,
            refresh=outcome.status.value if outcome is not None else "",
            cpu_share=cpu_share,
        )


def _row(name: str, runs: list[Run]) -> str:
    gaps = sorted(g for run in runs for g in run.gaps_ms)
    p99 = gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))] if gaps else 0.0
    rate = statistics.mean(r.deltas / r.stream_s for r in runs) if runs[0].stream_s else 0.0
    renders = statistics.mean(r.renders for r in runs)
    stalls = sum(1 for g in gaps if g > 50)
    refresh = ",".join(sorted({r.refresh for r in runs if r.refresh})) or "-"
    cpu = statistics.mean(r.cpu_share for r in runs) * 100
    verdict = "ok" if gaps and gaps[-1] <= 50 and p99 < 16 else "MISSED"
    return (
        f"{name:18s} {len(runs):>4d} {len(gaps):>6d} {gaps[-1] if gaps else 0:>8.1f} "
        f"{p99:>7.1f} {statistics.median(gaps) if gaps else 0:>7.1f} {stalls:>7d} "
        f"{rate:>9.0f} {renders:>8.0f} {cpu:>6.0f}% {refresh:>9s} {verdict:>7s}"
    )


async def main(repeat: int, rate: float) -> None:
    urls: multiprocessing.Queue = multiprocessing.Queue()
    stop = multiprocessing.Event()
    server = multiprocessing.Process(target=_serve_fake, args=(urls, stop, rate), daemon=True)
    server.start()
    try:
        os.environ["ANTHROPIC_BASE_URL"] = urls.get(timeout=30)
        os.environ["ANTHROPIC_API_KEY"] = "bench-key"
        with tempfile.TemporaryDirectory() as tmp:
            bench = Bench(Path(tmp))
            await bench.open_workspaces()
            task = bench.controller.set_workspace(bench.workspace)
            if task is not None:
                await task
            await bench.stream(50, with_refresh=False, n=0)  # warm up: SDK import, first render
            results: list[tuple[str, list[Run]]] = [
                ("idle", [await bench.idle(2.0) for _ in range(repeat)])
            ]
            plan = [
                ("stream", 1000, False, False),
                ("stream+refresh", 1000, True, False),
                ("long+refresh", 3000, True, False),
                ("long, unthrottled", 3000, False, True),
            ]
            for name, words, with_refresh, every_delta in plan:
                runs = []
                for n in range(repeat):
                    runs.append(
                        await bench.stream(
                            words,
                            with_refresh=with_refresh,
                            n=len(results) * 100 + n,
                            render_every_delta=every_delta,
                        )
                    )
                results.append((name, runs))
            chars = len(bench.panel.transcript.plain_text())
            bench.controller.set_workspace(None)
            bench.window.close()
            await bench.core.aclose()
    finally:
        stop.set()
        server.join(timeout=10)

    platform = QApplication.platformName()
    print(
        f"UI event loop while a reply streams at {rate:.0f} tokens/s (heartbeat every "
        f"{HEARTBEAT_MS} ms, Qt platform {platform}); target: max gap <= 50 ms, p99 < 16 ms"
    )
    print(
        f"{'scenario':18s} {'runs':>4s} {'beats':>6s} {'max ms':>8s} {'p99 ms':>7s} "
        f"{'p50 ms':>7s} {'>50 ms':>7s} {'tokens/s':>9s} {'renders':>8s} {'CPU':>7s} "
        f"{'refresh':>9s} {'target':>7s}"
    )
    for name, runs in results:
        print(_row(name, runs))
    print(
        f"(the transcript held {chars:,} characters at the end; a render re-draws at most "
        "the open block, see yak/ui/chat/transcript.py; 'unthrottled' renders on every delta,"
        " for comparison only)"
    )


def _quiet_offscreen_notes(mode, context, message: str) -> None:
    if "propagateSizeHints" not in message:  # the offscreen platform's note on every window
        sys.stderr.write(message + "\n")


if __name__ == "__main__":
    qInstallMessageHandler(_quiet_offscreen_notes)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs per scenario")
    parser.add_argument("--rate", type=float, default=200.0, help="tokens (deltas) per second")
    args = parser.parse_args()
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(main(args.repeat, args.rate))
