"""A fake monotonic clock and a timer scheduler whose timers fire only when a test says so.

Pass ``timers.clock`` and ``timers.schedule`` to ``open_core(clock=..., timer_scheduler=...)``;
then ``timers.advance(seconds)`` moves time and fires every timer that became due, in due order,
on the caller's thread (the event-loop thread in an async test). Nothing ever sleeps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Timer:
    """One scheduled callback; ``callback`` is ``None`` once it fired or was cancelled."""

    due: float
    callback: Callable[[], None] | None
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class ManualTimers:
    """The clock (``clock()``, seconds) and the scheduler (``schedule(delay, callback)``)."""

    now: float = 1000.0
    timers: list[Timer] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(self.now + max(delay, 0.0), callback)
        self.timers.append(timer)
        return timer

    def armed(self) -> list[Timer]:
        """The timers still waiting to fire."""
        return [t for t in self.timers if not t.cancelled and t.callback is not None]

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` on, firing the timers due by then one by one in due order
        (the clock reads each timer's due time while it fires; timers a callback schedules fire
        too when they fall due within the step)."""
        target = self.now + seconds
        while True:
            due = sorted((t for t in self.armed() if t.due <= target), key=lambda t: t.due)
            if not due:
                break
            timer = due[0]
            self.now = max(self.now, timer.due)
            callback, timer.callback = timer.callback, None
            assert callback is not None
            callback()
        self.now = target
