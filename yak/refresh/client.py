"""The refresher's model client, kept from one refresh to the next.

Building a client per refresh costs about a millisecond here (the SDK client, its HTTP pool, a
worker-thread hop) and, against the real API, a new TLS handshake per refresh. So the refresher
keeps the client it built while what the factory builds it from (its ``built_from()``: base URL,
API key, time limit) stays the same, and builds a new one when that changes. A client is closed:

- when a newer one replaces it (a key changed in Settings is used by the next refresh), once no
  refresh still uses it;
- after an attempt whose model call failed or was cancelled (a broken connection is never
  reused: the next refresh starts afresh);
- when the refresher closes (``aclose``, from ``Core.aclose``);
- after every attempt, when the factory has no ``built_from()`` (nothing says when a kept client
  would be stale), as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable

from yak.ports import ModelClient, ModelClientFactory, ready_model_client

log = logging.getLogger(__name__)


class KeptModelClient:
    """Hands out the refresher's model client, building it when needed.

    Args:
        factory: builds a client for the current settings (``yak.ports.ModelClientFactory``).
            When it has a ``built_from()`` method (returning a hashable value that changes
            whenever the client it would build changes; blocking, as it may read the OS
            keyring), clients are kept between refreshes; otherwise each is closed after use.
    """

    def __init__(self, factory: ModelClientFactory) -> None:
        self._factory = factory
        self._built_from: Callable[[], Hashable] | None = getattr(factory, "built_from", None)
        self._client: ModelClient | None = None  # the kept client
        self._client_from: Hashable = None  # what it was built from
        self._users: dict[int, int] = {}  # id(client) -> attempts using it now
        self._closed = False

    @property
    def keeps(self) -> bool:
        """Whether clients are kept between refreshes (the factory has ``built_from()``)."""
        return self._built_from is not None

    def built_from(self) -> Hashable:
        """What the factory would build a client from now (``None`` when clients are not kept).
        Blocking (the OS keyring): call it on a worker thread."""
        return None if self._built_from is None else self._built_from()

    async def take(self, built_from: Hashable) -> ModelClient:
        """A ready client for one attempt: the kept one when ``built_from`` (from
        :meth:`built_from`, read just before) is what it was built from, else a new one (built
        on a worker thread, ``ready_model_client``). Give it back with :meth:`give_back`.

        Raises:
            what the factory raises.
        """
        client = self._client
        if client is None or built_from is None or built_from != self._client_from:
            client = await ready_model_client(self._factory)
            if self.keeps and built_from is not None and not self._closed:
                old, self._client, self._client_from = self._client, client, built_from
                if old is not None and not self._users.get(id(old)):
                    await _close(old)
        self._users[id(client)] = self._users.get(id(client), 0) + 1
        return client

    async def give_back(self, client: ModelClient, *, healthy: bool) -> None:
        """End an attempt's use of ``client``. ``healthy``: its model calls all answered (a
        failed or cancelled call may leave a broken connection: the client is then not handed
        out again). A client that is not kept any more is closed once no attempt uses it."""
        left = self._users.get(id(client), 0) - 1
        if left > 0:
            self._users[id(client)] = left
        else:
            self._users.pop(id(client), None)
        if client is self._client and (not healthy or self._closed):
            self._client, self._client_from = None, None
        if client is not self._client and left <= 0:
            await _close(client)

    async def aclose(self) -> None:
        """Close the kept client (one still in use is closed when given back); from now on each
        client is closed after its attempt."""
        self._closed = True
        client, self._client, self._client_from = self._client, None, None
        if client is not None and not self._users.get(id(client)):
            await _close(client)


async def _close(client: ModelClient) -> None:
    """Close a client's connections (``Provider.aclose`` lets a later call open new ones, so a
    client shared with a caller stays usable)."""
    try:
        await client.aclose()
    except Exception:  # closing must never turn an outcome into a crash
        log.warning("closing the memory model's connection failed", exc_info=True)
