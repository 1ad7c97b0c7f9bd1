"""The refresher's kept model client (``yak/refresh/client.py``) with refreshes overlapping: a
client is closed only once no attempt uses it, whatever replaced it or closed the refresher."""

from __future__ import annotations

from yak.refresh.client import KeptModelClient


class Client:
    """A model client that only counts its closes (no request is made here)."""

    def __init__(self, built_from: object) -> None:
        self.built_from = built_from
        self.closes = 0

    def warm_up(self, *, without_key: bool = True) -> bool:
        return True

    async def aclose(self) -> None:
        self.closes += 1


class Factory:
    """Builds a ``Client`` for ``settings``; ``built_from`` says which."""

    def __init__(self) -> None:
        self.settings = "key-1"
        self.built: list[Client] = []

    def __call__(self) -> Client:
        self.built.append(Client(self.settings))
        return self.built[-1]

    def built_from(self) -> str:
        return self.settings


async def test_a_replaced_client_is_closed_when_the_last_attempt_using_it_ends():
    factory = Factory()
    kept = KeptModelClient(factory)
    first = await kept.take(kept.built_from())
    second = await kept.take(kept.built_from())  # another workspace's refresh, meanwhile
    assert first is second and len(factory.built) == 1

    factory.settings = "key-2"  # the key changed while both are in flight
    third = await kept.take(kept.built_from())
    assert third is not first and third.built_from == "key-2"
    await kept.give_back(first, healthy=True)
    assert first.closes == 0  # the other attempt still uses it
    await kept.give_back(second, healthy=True)
    assert first.closes == 1
    await kept.give_back(third, healthy=True)
    assert third.closes == 0 and await kept.take(kept.built_from()) is third


async def test_a_failed_call_drops_the_client_for_the_next_attempt_but_not_under_another():
    factory = Factory()
    kept = KeptModelClient(factory)
    failing = await kept.take(kept.built_from())
    other = await kept.take(kept.built_from())
    await kept.give_back(failing, healthy=False)
    assert failing.closes == 0  # the other attempt's call is still running on it
    fresh = await kept.take(kept.built_from())
    assert fresh is not failing
    await kept.give_back(other, healthy=True)
    assert failing.closes == 1
    await kept.give_back(fresh, healthy=True)
    assert fresh.closes == 0


async def test_closing_waits_for_the_attempt_in_flight_and_then_keeps_nothing():
    factory = Factory()
    kept = KeptModelClient(factory)
    idle = await kept.take(kept.built_from())
    await kept.give_back(idle, healthy=True)
    busy = await kept.take(kept.built_from())
    assert busy is idle
    await kept.aclose()
    assert busy.closes == 0
    await kept.give_back(busy, healthy=True)
    assert busy.closes == 1
    after = await kept.take(kept.built_from())  # a refresh after closing: closed after use
    await kept.give_back(after, healthy=True)
    assert after is not busy and after.closes == 1


async def test_a_factory_without_built_from_gets_a_client_per_attempt_closed_after_it():
    factory = Factory()
    kept = KeptModelClient(lambda: factory())
    assert not kept.keeps and kept.built_from() is None
    first = await kept.take(None)
    await kept.give_back(first, healthy=True)
    second = await kept.take(None)
    await kept.give_back(second, healthy=True)
    assert first is not second and (first.closes, second.closes) == (1, 1)
