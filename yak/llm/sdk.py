"""The ``anthropic`` SDK, imported on first use: the one deferred import of ``yak.llm``.

Importing the SDK (and its HTTP library) takes seconds, so no module imports it at its top:
:func:`load` does, once per process, and every use of the SDK goes through what it returns. The
app calls it on a worker thread once its window is painted (``ChatService.warm_up``); a first
message sent before that import has finished waits in :func:`load` for it (a lock, not a second
import) and leaves the moment it is done. The same lock keeps the OS keyring's first load from
running beside it (:data:`import_lock`).

Measured with anthropic 2.x: the SDK rides on ``httpx2``; older releases ride on ``httpx``,
installed under its own name, so the transport's exception classes are taken from whichever is
there.
"""

from __future__ import annotations

import contextlib
import importlib
import ssl
import threading
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Sdk:
    """The SDK and what every client shares.

    Attributes:
        anthropic: the ``anthropic`` package.
        timeouts: the transport's timeout exception classes (a timeout after the response
            headers arrived is not wrapped by the SDK).
        transport_errors: every exception class of the transport.
        tls: one TLS context, as the transport builds by default, shared by every client
            (building one loads the certificate authorities, tens of milliseconds, and a client
            is built per refresh and per turn).
    """

    anthropic: ModuleType
    timeouts: tuple[type[Exception], ...]
    transport_errors: tuple[type[Exception], ...]
    tls: ssl.SSLContext


# What the SDK's first request would import lazily (its transport's asyncio backend, the trace
# propagation): imported with the SDK, off the event loop, so that request leaves as fast as a
# later one. A name a future release no longer has is passed over.
FIRST_REQUEST_MODULES = ("anyio._backends._asyncio", "opentelemetry.propagate")

# Held while a library Yak loads on first use is imported: the SDK here, the OS keyring in
# yak.llm.credentials. Both pull in packages of the standard library that import each other
# (email, http, urllib) and that neither had loaded yet; two threads importing such a cycle from
# different ends at once get each other's half-initialized module, an ImportError "most likely
# due to a circular import". At start the warm-up's SDK import ran beside the key check's
# keyring import (measured: keyring, urllib.request, http.client and email.parser loaded on
# another thread during the SDK's 2.7 s), and about one start in eleven failed so. With this
# lock they load one after the other; a reentrant lock, since loading one may ask for the other.
import_lock = threading.RLock()
_loaded: Sdk | None = None


def load() -> Sdk:
    """The SDK, imported the first time (seconds; blocking: call it on a worker thread). A
    thread that asks while another imports it, or the OS keyring, waits for that import
    (:data:`import_lock`)."""
    global _loaded
    with import_lock:
        if _loaded is None:
            _loaded = _import()
        return _loaded


def _import() -> Sdk:
    import anthropic  # seconds: the reason for this module

    try:
        import httpx2 as http  # the SDK's transport (anthropic 2.x)
    except ImportError:  # older SDKs ride on httpx, installed in its place (so found by name)
        http = importlib.import_module("httpx")
    for name in FIRST_REQUEST_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    return Sdk(
        anthropic=anthropic,
        timeouts=(http.TimeoutException,),
        transport_errors=(http.TransportError,),
        tls=http.create_ssl_context(),
    )
