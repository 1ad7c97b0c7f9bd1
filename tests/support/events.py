"""Recording what the core publishes."""

from __future__ import annotations

from typing import Any

from yak.bus import EventBus


def record(bus: EventBus, *event_types: type) -> list[Any]:
    """A list that receives every event of ``event_types`` published on ``bus`` from now on, in
    order (the bus delivers synchronously on the publishing thread)."""
    seen: list[Any] = []
    for event_type in event_types:
        bus.subscribe(event_type, seen.append)
    return seen
