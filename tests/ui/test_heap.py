"""The collector policy that keeps full collections from stalling the window (yak.ui.heap)."""

from __future__ import annotations

import gc

import pytest

from yak.ui.heap import collections_paused, freeze_long_lived


@pytest.fixture
def unfrozen():
    """Give the frozen objects back to the collector after the test."""
    yield
    gc.unfreeze()


def test_objects_alive_at_freeze_are_left_out_of_later_collections(unfrozen):
    """What lives when ``freeze_long_lived`` runs is no longer walked by a collection (the
    collector no longer lists it); objects made afterwards still are."""
    before = [object.__new__(type("Held", (), {}))]  # a tracked object alive now
    frozen = freeze_long_lived()
    after = [object()]
    assert frozen == gc.get_freeze_count() > 0
    tracked = {id(o) for o in gc.get_objects()}
    assert id(before) not in tracked
    assert id(after) in tracked


def test_collections_paused_turns_the_collector_off_and_back_as_it_was():
    """Inside the block the collector is off; afterwards it is as it was, also when the block
    raised, and it stays off when it was off before."""
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collections_paused():
        assert not gc.isenabled()
        raise RuntimeError("inside")
    assert gc.isenabled()
    gc.disable()
    try:
        with collections_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
