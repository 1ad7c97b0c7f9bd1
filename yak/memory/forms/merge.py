"""The tool form's merge: the facts and forgets of an ``update_memory`` call, checked for
cause and merged into the document deterministically ("The rewrite forms" in docs/refresh.md).
Pure.

The model's claim that a line is outdated removes nothing by itself (:func:`with_cause`): a
replaced or forgotten line goes only where the conversations give a cause. Where the model
names no line a new value replaces, Yak finds it: the one line the fact is a new value of, a
value changed in the line that holds it, a moved port carried into the lines that use it.
:func:`merge` then places each fact: in the place of the first line it replaces, or in the
section its words fit (``yak.memory.history.placement``), never blindly at the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from yak.errors import UsageError
from yak.memory.forms import Quote
from yak.memory.history.placement import place, sections
from yak.memory.history.provenance import fold_line
from yak.memory.judging.kinds import is_structure
from yak.memory.judging.quotes import verify
from yak.memory.judging.removals import (
    Removals,
    ended_names,
    moved_port,
    names_line,
    names_term,
    new_value_of,
    restated,
    says_change,
    value_changed,
    value_moves,
    with_port,
    with_value,
)
from yak.memory.judging.said import Passage
from yak.memory.judging.words import details, distinctive_tokens, split_sentences


def _superseded(lines: Sequence[str], fact: Mapping[str, Any], claimed: set[int]) -> list[int]:
    """The line a fact listed as new is a new value of, when exactly one is: the fact takes
    its place. First the lines it restates both ways
    (:func:`yak.memory.judging.removals.new_value_of`), else those whose anchored value it changes,
    said as a change in its quote (:func:`yak.memory.judging.removals.value_changed`), else the
    line naming what its quote says has ended ("3.11 is no longer supported", "Fly.io did not
    work out": :func:`yak.memory.judging.removals.ended_names`; of several, the one whose value
    the fact changes). The 1.5B
    model added "- Python 3.12 from now on." beside "- Python 3.11." without naming the line it
    replaces, and left superseded values in 9 of 13 cases; two lines that could be meant leave both
    in place."""
    text, quote = str(fact["text"]).strip(), str(fact.get("quote", ""))
    open_lines = [
        (number, line)
        for number, line in enumerate(lines, start=1)
        if number not in claimed and line.strip() and not is_structure(line)
    ]
    found = [number for number, line in open_lines if new_value_of(line, text)]
    if not found:
        found = [number for number, line in open_lines if value_changed(line, text, quote)]
    if not found and any(value_moves(line, text) for _number, line in open_lines):
        return []  # a value of a line changes in place (_moved_values), the lines using it follow
    for name in [] if found else ended_names(quote):
        found = [
            number
            for number, line in open_lines
            if names_term(line, name)
            and len(split_sentences(line)) == 1
            and not value_moves(line, text)  # the value changes in place (_moved_values)
        ]
        if len(found) > 1:  # the one whose value the fact changes: the others use it
            found = [
                number
                for number in found
                if moved_port(lines[number - 1], text)
                or value_changed(lines[number - 1], text, quote)
            ]
        if len(found) == 1:
            break
    return found if len(found) == 1 else []


def with_cause(
    previous: str,
    facts: list[Mapping[str, Any]],
    forget: list[Mapping[str, Any]],
    said: Sequence[Passage],
    sessions: Sequence[str],
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]], int]:
    """The call's claims that a line is outdated, kept only where the conversations give a
    cause ("What a rewrite may remove" in docs/memory.md): for a replaced line, a fact that
    restates it or a passage that touches it; for a forgotten line, its own quote, found in
    the conversation it names, asking for it (:func:`yak.memory.judging.removals.names_line`), or a
    fact of the call restating it (a new value: the 1.5B model forgot "Redis on 6379" with a
    quote of the document and added "Redis on 6380" beside it). A
    model's claim alone removes nothing (a 1.5B model listed lines 1-4 as replaced where one
    line was touched); the lines it named without cause stay in place, and how many is
    returned."""
    lines = previous.splitlines()
    removals = Removals(said)
    added = [str(fact["text"]).strip() for fact in facts]
    spared = 0

    def caused(number: int, replacement: list[str]) -> bool:
        nonlocal spared
        line = lines[number - 1]
        if not line.strip():
            return False  # a blank line is no fact: it stays where it is
        if not is_structure(line) and not removals.without_cause(line, replacement, added):
            return True
        spared += 1
        return False

    kept_facts: list[Mapping[str, Any]] = []
    claimed = {n for fact in facts for n in fact["replaces"]} | {i["line"] for i in forget}
    for fact in facts:
        text = str(fact["text"]).strip()
        replaces = [n for n in fact["replaces"] if caused(n, [text])]
        if not fact["replaces"]:
            replaces = _superseded(lines, fact, claimed)
            claimed.update(replaces)
        kept_facts.append({**fact, "replaces": replaces})
    kept_forget = []
    for item in forget:
        line = lines[item["line"] - 1]
        found = verify(Quote(line, item["conversation"], item["quote"]), sessions, said)
        asked = found is not None and names_line(found.quote, line)
        taker = _taker(line, kept_facts) if not asked else None
        if not is_structure(line) and taker is not None:
            # a new value listed beside the forget of its line: it takes the line's place, so a
            # port it moves is carried (_carried)
            kept_facts[taker] = {**kept_facts[taker], "replaces": [item["line"]]}
        elif not is_structure(line) and (asked or restated(line, added)):
            kept_forget.append(item)
        elif line.strip():
            spared += 1
    taken = {n for fact in kept_facts for n in fact["replaces"]} | {i["line"] for i in kept_forget}
    kept_facts, moved = _moved_values(lines, kept_facts, taken)
    kept_facts += moved
    return kept_facts + _carried(lines, kept_facts, taken), kept_forget, spared


def _taker(line: str, facts: Sequence[Mapping[str, Any]]) -> int | None:
    """The index of the first fact that replaces no line and restates ``line`` (a new value of
    it), or ``None``: the 1.5B model forgot "- The dev backend caches in Redis on port 6379."
    and listed "on port 6380" as new, and the REDIS_URL line using 6379 was left behind."""
    for index, fact in enumerate(facts):
        if not fact["replaces"] and restated(line, [str(fact["text"]).strip()]):
            return index
    return None


def _moved_values(
    lines: Sequence[str], facts: Sequence[Mapping[str, Any]], taken: set[int]
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """A value a fact gives anew, changed in the line that holds it: for a fact that replaces
    no line and whose quote says a change, each other line holding an old value of what it
    says (:func:`yak.memory.judging.removals.value_moves`: "The load runs nightly at 02:00 UTC
    with a batch size of 500 rows." and "The nightly run moves to 03:30 UTC") gets the new
    value in place, its other statements kept, as a fact of the same quote replacing that
    line (a port in a ``host:port`` of the same line follows). The fact itself is left out
    when the changed lines give all its details. The 1.5B model wrote a setup's values
    several to a line and never named the line a new value replaces.

    Returns:
        The facts kept, and the changed lines as facts.
    """
    kept: list[Mapping[str, Any]] = []
    moved: list[Mapping[str, Any]] = []
    for fact in facts:
        text = str(fact["text"]).strip()
        if fact["replaces"] or not says_change(str(fact.get("quote", ""))):
            kept.append(fact)
            continue
        covered: set[str] = set()
        for number, line in enumerate(lines, start=1):
            if number in taken or not line.strip() or is_structure(line):
                continue
            changed = line
            for old, new in value_moves(line, text):
                changed = with_value(changed, old, new)
                changed = with_port(changed, old, new) or changed
            if changed != line:
                moved.append({**fact, "text": changed, "replaces": [number]})
                taken.add(number)
                covered |= details(changed)
        if not covered or not details(text) <= covered:
            kept.append(fact)
    return kept, moved


def _carried(
    lines: Sequence[str], facts: Sequence[Mapping[str, Any]], taken: set[int]
) -> list[Mapping[str, Any]]:
    """A port a fact moves, carried into the other lines that use it: a fact that takes the
    place of "- Postgres runs on port 5432." with "… on port 6432" makes
    "- DATABASE_URL=postgresql://orders@localhost:5432/orders" use 6432 too (``moved_port``
    and ``with_port`` in :mod:`yak.memory.judging.removals`), as a fact with the same
    conversation and quote replacing that line; lines in ``taken`` (replaced or forgotten
    already) are left to the call. The 1.5B model moved a port's line and
    left the connection string that uses it (4 of the evaluation's 13 superseded values are
    such ports)."""
    carried: list[Mapping[str, Any]] = []
    for fact in facts:
        for number in fact["replaces"]:
            moved = moved_port(lines[number - 1], str(fact["text"]))
            if moved is None:
                continue
            for other, line in enumerate(lines, start=1):
                changed = None if other in taken else with_port(line, *moved)
                if changed is not None:
                    carried.append({**fact, "text": changed, "replaces": [other]})
                    taken.add(other)
    return carried


def merge(
    previous: str, facts: Sequence[Mapping[str, Any]], forget: Sequence[Mapping[str, Any]]
) -> tuple[str, tuple[Quote, ...]]:
    """The document with ``facts`` merged and ``forget`` removed (both already checked).

    A fact replacing lines takes the place of the first of them (several facts replacing the
    same line keep their order); the other lines it replaces go. A new fact joins the section
    it names (``section``, optional: started at the end when the document has no section of
    that title, unless the title holds a name or a value, "Fly.io": then placed by its words)
    or else the section its words fit best (:func:`yak.memory.history.placement.place`), never
    blindly the end. A fact the document keeps word for word (case, spacing and end
    punctuation folded) adds nothing.

    Returns:
        The document (LF, one final newline unless empty) and each placed fact's quote.
    """
    lines = previous.splitlines()
    gone = {int(item["line"]) for item in forget}
    at_line: dict[int, list[str]] = {}
    new: list[tuple[str, str]] = []  # (text, section)
    quotes: list[Quote] = []
    for fact in facts:
        text = str(fact["text"]).strip()
        replaces = sorted({int(n) for n in fact["replaces"]})
        gone.update(replaces)
        if replaces:
            at_line.setdefault(replaces[0], []).append(text)
        else:
            section = fact.get("section")
            new.append((text, section.strip() if isinstance(section, str) else ""))
        quotes.append(Quote(text, int(fact["conversation"]), str(fact["quote"])))
    merged: list[str] = []
    for number, line in enumerate(lines, start=1):
        merged += at_line.get(number, [])
        if number not in gone:
            merged.append(line)
    kept = {fold_line(line) for line in merged}
    document = "".join(line + "\n" for line in merged)
    for text, section in new:
        if fold_line(text) in kept:
            continue  # the document says it already
        document = _placed(document, text, section)
        kept.add(fold_line(text))
    return document, tuple(quotes)


def _placed(document: str, text: str, section: str) -> str:
    """``document`` with the new line ``text`` in ``section`` (its title; a new section at
    the end when none has it), or where its words fit best."""
    titles = {fold_line(s.title) for s in sections(document) if s.titled}
    if section and fold_line(section) not in titles and distinctive_tokens(section):
        section = ""  # a value or a name, not a title (the 1.5B model gave "Fly.io")
    if section and fold_line(section) not in titles:
        if not document.strip():
            return f"{section}\n{text}\n"
        return f"{document.rstrip(chr(10))}\n\n{section}\n{text}\n"
    if not document.strip():
        return text + "\n"
    if section:
        try:
            return place(document, text, heading=section).document
        except UsageError:  # several sections of that title: where its words fit best
            pass
    return place(document, text).document
