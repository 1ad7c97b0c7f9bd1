"""A memory model's habits as data (``yak.memory.forms.profiles``): each tolerance says why
and on which model it was measured; ``auto`` gives the small models' profile by name only."""

from __future__ import annotations

from yak.config import Settings, clamp
from yak.memory.forms.profiles import PLAIN, SMALL_LOCAL, TOLERANCES, Habit, profile_for


def test_every_tolerance_names_its_reason_and_the_model_it_was_measured_on():
    assert {t.habit for t in TOLERANCES} == set(Habit)
    for tolerance in TOLERANCES:
        assert len(tolerance.reason) > 40 and "Qwen2.5-Coder" in tolerance.measured_on


def test_auto_picks_the_small_local_profile_by_the_model_name_only():
    assert profile_for("auto", "qwen2.5-coder-0.5b-instruct-q8_0.gguf") is SMALL_LOCAL
    assert profile_for("auto", "local-small") is SMALL_LOCAL
    assert profile_for("auto", "claude-haiku-4-5") is PLAIN
    assert profile_for("auto", "local-smaller-than-ever") is PLAIN
    assert profile_for("plain", "local-small") is PLAIN
    assert profile_for("small-local", "claude-haiku-4-5") is SMALL_LOCAL
    assert not PLAIN.tolerates(Habit.NUMBERED_LINES_KEPT)


def test_an_unknown_profile_setting_is_auto():
    assert clamp(Settings(memory_profile="tiny")).memory_profile == "auto"
