"""Where an agent's added lines go in the document ("The inbox" in docs/memory.md). Pure
rules, no I/O.

The document is plain text in sections: blocks of lines separated by blank lines, each
starting with a short title line (a Markdown heading alone in its block belongs to the block
after it). A block whose first line is a fact ("- project: api"), not a title
(:func:`is_title`), has no title: it is never named as a heading. Lines are placed after a
given line, at the end of the section under a given title, or, with no place given, at the
end of the section whose words match them best (its title counts three times); only when no
section shares a word with them do they go at the end of the document, as a block of their
own (or into the one block there is).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from yak.errors import UsageError
from yak.linediff import line_edits
from yak.memory.lines import LIST_MARKER, STOPWORDS

_WORD = re.compile(r"[^\W_]{3,}")
_TITLE_WEIGHT = 3


@dataclass(frozen=True)
class Section:
    """A block of the document: its first line (as written), and its lines ``first`` to
    ``last`` (1-based, inclusive)."""

    title: str
    first: int
    last: int

    @property
    def titled(self) -> bool:
        """Whether its first line is a section title (a heading, "Conventions", "Build:"),
        not a fact."""
        return is_title(self.title)

    @property
    def heading(self) -> str | None:
        """Its title when it has one, else ``None``."""
        return self.title if self.titled else None


@dataclass(frozen=True)
class Placement:
    """Added lines placed: the whole new document, the line number (1-based) of the first
    added line in it, and the title of the section they joined (``None``: none, or a block
    without a title)."""

    document: str
    line: int
    section: str | None


_TITLE_WORDS = 6  # the most words of a title line
_HEADING = re.compile(r"#{1,6}\s")
_LIST_ITEM = re.compile(rf"(?:{LIST_MARKER})(?:\s|$)|[-*+•>|`]")


def is_title(line: str) -> bool:
    """Whether ``line`` reads as a section's title rather than a fact: a Markdown heading, or
    a short line (at most ``_TITLE_WORDS`` words) that is no list item, ends no sentence and
    neither gives a ``label: value`` ("Project structure", "Build:", "## Decisions"; not "-
    project: api", "Project: yak", "# of workers: 4" or "Tests run with pytest.")."""
    stripped = line.strip()
    body = stripped.removesuffix(":")
    if _HEADING.match(stripped):
        return ":" not in body  # "# of workers: 4" is a fact
    if not stripped or _LIST_ITEM.match(stripped) or stripped[-1] in ".!?;,":
        return False
    return ":" not in body and len(body.split()) <= _TITLE_WORDS and any(c.isalpha() for c in body)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in STOPWORDS}


def _bare_title(line: str) -> str:
    return line.strip().lstrip("#").strip().rstrip(":").strip().casefold()


def sections(document: str) -> list[Section]:
    """The document's sections, in order."""
    found: list[Section] = []
    start: int | None = None
    lines = document.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate([*lines, ""], start=1):
        if line.strip():
            if start is None:
                start = number
            continue
        if start is None:
            continue
        last = number - 1
        if found and found[-1].last == -1:  # a heading alone waits for its block
            found[-1] = Section(found[-1].title, found[-1].first, last)
        elif start == last and lines[start - 1].lstrip().startswith("#"):
            found.append(Section(lines[start - 1].strip(), start, -1))
        else:
            found.append(Section(lines[start - 1].strip(), start, last))
        start = None
    return [s if s.last != -1 else Section(s.title, s.first, s.first) for s in found]


def _best(parts: list[Section], lines: list[str], added: str) -> Section | None:
    wanted = _words(added)
    best: tuple[int, Section] | None = None
    for section in parts:
        body = " ".join(lines[section.first : section.last])
        score = _TITLE_WEIGHT * len(wanted & _words(section.title)) + len(wanted & _words(body))
        if score and (best is None or score > best[0]):
            best = (score, section)
    return best[1] if best else None


def _titled(parts: list[Section], heading: str) -> Section:
    wanted = _bare_title(heading)
    if not wanted:
        raise UsageError("The heading to place the lines under is empty; nothing was proposed.")
    parts = [s for s in parts if s.titled]
    exact = [s for s in parts if _bare_title(s.title) == wanted]
    near = exact or [s for s in parts if wanted in _bare_title(s.title)]
    if len(near) == 1:
        return near[0]
    titles = "; ".join(s.title for s in parts[:12]) or "none"
    what = "Several sections" if near else "No section"
    raise UsageError(
        f"{what} of the memory {'are' if near else 'is'} titled {heading.strip()!r} "
        f"(its sections: {titles}); nothing was proposed."
    )


def place(
    document: str, added: str, *, after_line: int | None = None, heading: str | None = None
) -> Placement:
    """``added`` (one or more lines, LF) put into ``document``.

    Args:
        after_line: put them after this line (1-based; 0: at the top).
        heading: put them at the end of the section with this title (case and a leading
            ``#`` or trailing ``:`` ignored; a unique part of a title will do).

    Raises:
        UsageError: both places given; a line number outside the document; no section (or
            several) with that title.
    """
    if after_line is not None and heading is not None:
        raise UsageError("Give either after_line or heading, not both; nothing was proposed.")
    lines = document.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    new = added.strip("\n").split("\n")
    parts = sections(document)
    section: Section | None = None
    if after_line is not None:
        if not 0 <= after_line <= len(lines):
            raise UsageError(
                f"after_line must be between 0 and {len(lines)} (the memory's line count); "
                "nothing was proposed."
            )
        at = after_line
        section = next((s for s in parts if s.first <= at <= s.last), None)
    else:
        section = _titled(parts, heading) if heading is not None else _best(parts, lines, added)
        if section is None and len(parts) == 1:
            section = parts[0]  # one block: the lines join it
        at = section.last if section else len(lines)
    if section is None and after_line is None and lines and lines[-1].strip():
        new = ["", *new]  # a new block of its own at the end
    merged = [*lines[:at], *new, *lines[at:]]
    first = at + 1 + (1 if new[0] == "" and section is None and after_line is None else 0)
    return Placement("\n".join(merged) + "\n", first, section.heading if section else None)


def landing(base: str, content: str) -> tuple[int, str | None] | None:
    """Where a proposal's first added line lands: its line number in ``content`` and the title
    of the section it is in (``None``: none, or a block without a title: a fact line is never
    named as a heading), or ``None`` when it adds no line."""
    old, new = base.split("\n"), content.split("\n")
    for tag, _i1, _i2, j1, j2 in line_edits(old, new):
        if tag in ("insert", "replace") and any(line.strip() for line in new[j1:j2]):
            first = next(j for j in range(j1, j2) if new[j].strip()) + 1
            section = next((s for s in sections(content) if s.first <= first <= s.last), None)
            if section is not None and section.first == first:
                return first, None  # it starts a section of its own
            return first, section.heading if section else None
    return None
