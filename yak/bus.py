"""The event bus: synchronous publish/subscribe keyed on the event class (``yak.events``).

Apart from the events so that building the core does not define every event class: each is a
frozen dataclass, and a command that only reads (``yak memory show``) publishes none of them.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class EventBus:
    """Synchronous publish/subscribe keyed on the event class."""

    def __init__(self) -> None:
        self._subscribers: dict[type, list[Callable[[Any], None]]] = defaultdict(list)

    def subscribe(self, event_type: type, callback: Callable[[Any], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for every published ``event_type``; returns an unsubscribe."""
        self._subscribers[event_type].append(callback)
        return lambda: self._subscribers[event_type].remove(callback)

    def publish(self, event: Any) -> None:
        """Deliver ``event`` to its subscribers; a failing subscriber is logged, not raised."""
        for callback in list(self._subscribers.get(type(event), ())):
            try:
                callback(event)
            except Exception:  # a broken subscriber must not break the publisher
                log.exception("event subscriber failed for %r", event)
