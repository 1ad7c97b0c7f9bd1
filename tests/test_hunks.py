"""Taking a proposal hunk by hunk (``yak.memory.history.hunks``): the hunks a person sees, and the
document built from the ones they take, compared byte for byte."""

from __future__ import annotations

from itertools import combinations

from yak.memory.history.hunks import hunks, take

BASE = "".join(f"- fact {i}\n" for i in range(1, 13))
# three hunks: line 2 changed, line 7 removed, a line added at the end
PROPOSED = (
    BASE.replace("- fact 2\n", "- fact two\n")
    .replace("- fact 7\n", "")
    .replace("- fact 12\n", "- fact 12\n- fact 13\n")
)


def test_each_change_is_a_hunk_with_its_header_counts_and_context():
    """Three changes give three hunks with their unified-diff headers and counts, context
    shown once (what follows one hunk is not repeated before the next); a removed line a
    person wrote is named in its hunk."""
    found = hunks(BASE, PROPOSED, hand=[6])
    assert [(h.number, h.header, h.added, h.removed) for h in found] == [
        (1, "@@ -1,5 +1,5 @@", 1, 1),
        (2, "@@ -6,5 +6,4 @@", 0, 1),
        (3, "@@ -11,2 +10,3 @@", 1, 0),
    ]
    assert hunks(BASE, PROPOSED, context=1)[1].rows == (
        ("context", "- fact 6"),
        ("removed", "- fact 7"),
        ("context", "- fact 8"),
    )
    assert hunks(BASE, PROPOSED, context=1)[0].rows == (
        ("context", "- fact 1"),
        ("removed", "- fact 2"),
        ("added", "- fact two"),
        ("context", "- fact 3"),
    )
    assert [h.hand_removed for h in found] == [(), ("- fact 7",), ()]
    assert hunks(BASE, BASE) == []


def test_take_applies_exactly_the_chosen_hunks():
    """Every subset of hunks gives the base with exactly those changes: all of them the
    proposal, none the base, and each one alone only its own lines."""
    assert take(BASE, PROPOSED, {1, 2, 3}) == PROPOSED
    assert take(BASE, PROPOSED, set()) == BASE
    assert take(BASE, PROPOSED, {2}) == BASE.replace("- fact 7\n", "")
    assert take(BASE, PROPOSED, {1, 3}) == PROPOSED.replace(
        "- fact 6\n- fact 8\n", "- fact 6\n- fact 7\n- fact 8\n"
    )
    for size in range(4):
        for chosen in combinations((1, 2, 3), size):
            text = take(BASE, PROPOSED, chosen)
            assert ("- fact two\n" in text) is (1 in chosen)
            assert ("- fact 7\n" not in text) is (2 in chosen)
            assert ("- fact 13\n" in text) is (3 in chosen)


def test_take_keeps_bytes_at_the_edges():
    """Lines added before the first line and after a last line without a newline, and CRLF
    lines, come through byte for byte."""
    base = "a\r\nb"
    proposed = "top\na\r\nb\nc"
    assert len(hunks(base, proposed)) == 2
    assert take(base, proposed, {1, 2}) == proposed
    assert take(base, proposed, {1}) == "top\na\r\nb"
    assert take(base, proposed, {2}) == "a\r\nb\nc"
    assert take(base, proposed, set()) == base
    assert take("", "- new\n", {1}) == "- new\n"
    assert take("- gone\n", "", {1}) == ""
