"""The model clients a test core (or a benchmark) uses: the real ``Provider`` (the anthropic SDK)
against the fake Messages API, built per use like the core's own factory, but without the SDK's
retries and with a short timeout, so a scripted error or hang is seen at once."""

from __future__ import annotations

import os

from yak.llm import credentials
from yak.llm.provider import Provider


class ModelClients:
    """A model-client factory for ``open_core(model_client=...)``.

    Attributes:
        base_url: where requests go; ``None`` means ``ANTHROPIC_BASE_URL`` (the fake API the
            ``fake_api`` fixture started). A test points it at a closed port to refuse the
            connection.
        timeout_s: each client's timeout (a test lowers it to see a hang time out).
        max_retries: the SDK's retries (0: every scripted reply is taken exactly once).
        built: every client built so far, oldest first.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        timeout_s: float = 10.0,
        max_retries: int = 0,
        provider_class: type[Provider] = Provider,
    ) -> None:
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.provider_class = provider_class
        self.built: list[Provider] = []

    def __call__(self) -> Provider:
        client = self.provider_class(
            base_url=self.base_url, timeout_s=self.timeout_s, max_retries=self.max_retries
        )
        self.built.append(client)
        return client

    def built_from(self) -> tuple[object, ...]:
        """What a client built now would use (the refresher keeps its client while this stays
        the same, as it does with the app's factory): the attributes above, the base URL the
        SDK reads from the environment, and the key the client would use."""
        return (
            self.base_url,
            self.timeout_s,
            self.max_retries,
            self.provider_class,
            os.environ.get("ANTHROPIC_BASE_URL"),
            credentials.api_key(),
        )

    async def aclose(self) -> None:
        """Close every client built (the core closes each after use; this is a safety net)."""
        for client in self.built:
            await client.aclose()
