"""Keep Python's cyclic garbage collector from stalling the window (see ``docs/ui.md``,
"The event loop").

A full (generation 2) collection walks every object the collector tracks. After start-up the app
holds about a hundred thousand of them (Qt wrappers, SQLAlchemy, the anthropic SDK, pydantic
models), nearly all alive until quit; one walk over them blocks the event loop for a hundred
milliseconds or more, and a streaming reply allocates enough to trigger one now and then.
:func:`freeze_long_lived` moves every object alive at that moment into the collector's permanent
generation (``gc.freeze``), which collections skip; later objects are collected as before.

The app calls it once the window shows its workspace and again once the model client's warm-up
(the SDK import) is done. During that import, which creates a hundred thousand objects on a worker
thread, :func:`collections_paused` keeps the collector off: otherwise full collections over the
half-imported SDK run on the worker while holding the interpreter lock, and the window waits for
them (hundreds of milliseconds each). Cyclic garbage that exists at a freeze is kept, not freed:
a bounded, one-off cost, the price of not running a full collection on the loop to clear it.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)


def freeze_long_lived() -> int:
    """Exempt every object the collector tracks now from later collections (``gc.freeze``).

    Returns:
        How many objects are frozen in all (those frozen by earlier calls included).
    """
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("%d long-lived objects exempted from garbage collection", frozen)
    return frozen


@contextmanager
def collections_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector off inside the block (the whole process: every thread),
    then restore it as it was. For a bounded burst of long-lived allocations such as a large
    import, followed by :func:`freeze_long_lived`."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
