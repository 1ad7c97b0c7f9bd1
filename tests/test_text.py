"""The shared text helpers: a cut is always visible and never over its limit."""

from __future__ import annotations

import pytest

from yak.text import controls_to_spaces, head_and_tail, one_line, plural, shorten, tool_target


def test_shorten_keeps_short_text_and_ends_a_cut_with_an_ellipsis():
    """Text within the limit is unchanged; longer text is cut to the limit, "…" last."""
    assert shorten("abc", 3) == "abc"
    assert shorten("abcdef", 4) == "abc…"
    assert len(shorten("x" * 500, 80)) == 80


def test_one_line_collapses_blanks_and_line_breaks_before_shortening():
    """A multi-line command shows as one line in a transcript row."""
    assert one_line("make \n  test\tall", 100) == "make test all"
    assert one_line("a " * 100, 10) == "a a a a a…"


@pytest.mark.parametrize("limit", [60, 100, 4000])
def test_head_and_tail_keeps_both_ends_with_a_visible_marker_within_the_limit(limit):
    """A long text keeps its first and last characters, says how many were cut, and the
    whole (marker included) fits the limit."""
    text = "HEAD" + "m" * 10_000 + "TAIL"
    cut = head_and_tail(text, limit)
    assert len(cut) <= limit
    assert cut.startswith("HEAD") and cut.endswith("TAIL")
    removed = len(text) - len(cut.replace("\n", "").split("]", 1)[1]) - len(cut.split("\n")[0])
    assert f"[… {removed:,} characters cut …]" in cut


def test_head_and_tail_leaves_text_within_the_limit_alone():
    """Nothing is cut (and no marker added) when the text fits."""
    assert head_and_tail("short", 5) == "short"


def test_plural_counts_with_thousands_separators():
    """``1 line``, ``2 lines``, ``1,024 lines``, and an irregular plural when given."""
    assert plural(1, "line") == "1 line"
    assert plural(2, "line") == "2 lines"
    assert plural(1024, "line") == "1,024 lines"
    assert plural(3, "entry", "entries") == "3 entries"


def test_controls_to_spaces_leaves_one_line_that_cannot_drive_a_terminal():
    """Escape sequences, line breaks, C1 controls and bidi overrides become single spaces;
    ordinary text, accents included, stays as it is."""
    given = "Keep\x1b[31m red\x1b[0m\r\nlines\x85and \u202eoverride\u202c — café\t!"
    assert controls_to_spaces(given) == "Keep [31m red [0m lines and override — café !"
    assert controls_to_spaces("\x00\n\t ") == ""


def test_tool_target_is_the_command_the_pattern_or_the_path_on_one_line():
    """One line per tool call, the same in the live chat, a reloaded one and the memory input."""
    assert tool_target({"path": "src/a.py", "content": "x"}) == "src/a.py"
    assert tool_target({"command": "ls -la\n  rm x", "timeout_s": 5}) == "ls -la rm x"
    assert tool_target({"pattern": "*.py"}) == "*.py"
    assert tool_target({"pattern": "TODO", "path": "src"}) == "TODO in src"
    assert tool_target({"pattern": "x" * 200}, 80) == "x" * 79 + "…"
    assert tool_target({}) == tool_target({"other": 1}) == tool_target("not a dict") == ""
