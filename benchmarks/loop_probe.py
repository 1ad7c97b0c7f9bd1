"""What held the event loop: a probe for the UI benchmarks (``bench_streaming --probe``).

Three deterministic views of one run, each independent of the machine's load as far as it can be:

- every asyncio callback (``asyncio.Handle._run``, which qasync calls for each ready callback and
  each task step) that ran longer than ``threshold_ms``, named by its callback or coroutine;
- every Qt slot wrapped with :meth:`LoopProbe.wrap` (the transcript's render, for instance) that
  ran longer than ``threshold_ms``;
- every garbage collection (``gc.callbacks``) that took longer than ``gc_threshold_ms``, with
  its generation and the number of objects it examined.

A wall-clock gap in the heartbeat that none of these explains was spent outside Python's
callbacks (Qt's own layout or painting, or another thread holding the interpreter lock).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Slow:
    """One callback or collection over its threshold."""

    kind: str  # "callback", "slot" or "gc"
    what: str
    ms: float
    at: float  # perf_counter seconds when it started


@dataclass
class LoopProbe:
    """Times callbacks, wrapped slots and collections while installed.

    Args:
        threshold_ms: callbacks and slots longer than this are recorded.
        gc_threshold_ms: collections longer than this are recorded.
    """

    threshold_ms: float = 16.0
    gc_threshold_ms: float = 2.0
    slow: list[Slow] = field(default_factory=list)
    collections: dict[int, list[float]] = field(default_factory=dict)  # generation -> ms each
    tracked: int = 0  # objects the collector tracked when installed
    full_collection_ms: float = 0.0  # one full collection then, timed
    _gc_started: float = 0.0
    _gc_cpu_started: float = 0.0
    _gc_objects: int = 0
    _gc_where: str = ""
    _original_run: Callable[..., Any] | None = None

    def install(self) -> None:
        """Start timing (idempotent only in pairs with :meth:`uninstall`).

        First counts the objects the collector tracks and times one full collection over them:
        what any generation-2 collection during the run costs at least.
        """
        self.tracked = len(gc.get_objects())
        started = time.perf_counter()
        gc.collect()
        self.full_collection_ms = (time.perf_counter() - started) * 1000
        original = asyncio.Handle._run
        self._original_run = original
        probe = self

        def timed_run(handle: asyncio.Handle) -> None:
            started = time.perf_counter()
            try:
                original(handle)
            finally:
                ms = (time.perf_counter() - started) * 1000
                if ms > probe.threshold_ms:
                    probe.slow.append(Slow("callback", _describe(handle), ms, started))

        asyncio.Handle._run = timed_run  # type: ignore[method-assign]
        gc.callbacks.append(self._on_gc)

    def uninstall(self) -> None:
        """Stop timing."""
        if self._original_run is not None:
            asyncio.Handle._run = self._original_run  # type: ignore[method-assign]
            self._original_run = None
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def wrap(self, function: Callable[..., Any], name: str) -> Callable[..., Any]:
        """``function`` timed as a slot named ``name``."""

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                ms = (time.perf_counter() - started) * 1000
                if ms > self.threshold_ms:
                    self.slow.append(Slow("slot", name, ms, started))

        return timed

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        generation = info.get("generation", -1)
        if phase == "start":
            if generation == 2:  # the expensive kind: note how much it walks and who asked
                self._gc_objects = sum(len(gc.get_objects(g)) for g in range(3))
                self._gc_where = _caller()
            self._gc_started, self._gc_cpu_started = time.perf_counter(), time.thread_time()
            return
        ms = (time.perf_counter() - self._gc_started) * 1000
        cpu_ms = (time.thread_time() - self._gc_cpu_started) * 1000
        self.collections.setdefault(generation, []).append(ms)
        if ms <= self.gc_threshold_ms:
            return
        thread = "the loop" if threading.current_thread() is threading.main_thread() else "a worker"
        what = f"generation {generation} on {thread} ({cpu_ms:.0f} ms CPU"
        if generation == 2:
            what += f", {self._gc_objects:,} objects, during {self._gc_where}"
        self.slow.append(Slow("gc", what + ")", ms, self._gc_started))

    def report(self, top: int = 12) -> str:
        """The slowest entries and the collections' totals, as lines of text."""
        lines = [
            f"loop probe: {self.tracked:,} objects tracked by the collector at the start; a full "
            f"collection then took {self.full_collection_ms:.1f} ms",
            f"entries over {self.threshold_ms:g} ms (collections over "
            f"{self.gc_threshold_ms:g} ms):",
        ]
        for entry in sorted(self.slow, key=lambda s: -s.ms)[:top]:
            lines.append(f"  {entry.ms:8.1f} ms  {entry.kind:8s} {entry.what}")
        for generation, times in sorted(self.collections.items()):
            lines.append(
                f"  gc generation {generation}: {len(times)} collections, max "
                f"{max(times):.1f} ms, total {sum(times):.0f} ms"
            )
        started = time.perf_counter()
        gc.collect()
        lines.append(
            f"  at the end: {len(gc.get_objects()):,} objects tracked, {gc.get_freeze_count():,} "
            f"frozen; a full collection took {(time.perf_counter() - started) * 1000:.1f} ms"
        )
        return "\n".join(lines)


def _describe(handle: asyncio.Handle) -> str:
    callback = getattr(handle, "_callback", None)
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        frame = getattr(coro, "cr_frame", None)
        where = f" at line {frame.f_lineno}" if frame is not None else ""
        return f"task {getattr(coro, '__qualname__', coro)}{where}"
    return getattr(callback, "__qualname__", repr(callback))


def _caller() -> str:
    """Where this thread was when it started a collection: the innermost frame outside the
    import machinery, and the innermost frame of Yak's own code (what asked for the work)."""
    found: list[str] = []
    for frame in reversed(traceback.extract_stack()[:-2]):
        name = frame.filename
        if "importlib" in name or name.endswith(("loop_probe.py", "typing.py")):
            continue
        where = f"{name.split('site-packages/')[-1].split('/yak/')[-1]}:{frame.lineno} {frame.name}"
        if not found or ("/yak/" in name and "site-packages" not in name):
            found.append(where)
        if len(found) == 2:
            break
    return " in ".join(found) or "?"
