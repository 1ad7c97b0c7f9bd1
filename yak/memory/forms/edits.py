"""The edit form of a memory rewrite: the document numbered for the model, and the model's line
edits parsed and applied (pure; "The rewrite form" in ``docs/refresh.md``).

The model sees the document with each line numbered (``12| - Python 3.13.``) and answers with one
block of edits that refer to those numbers (``EXAMPLE`` below is the one the prompt shows):

- ``@@ replace A`` or ``@@ replace A-B``: lines A to B (inclusive) become the lines that follow
  (none: they are deleted);
- ``@@ insert after N``: the lines that follow go after line N (``0``: at the top);
- ``@@ delete A`` or ``@@ delete A-B``: lines A to B go;
- every number refers to the document as sent, whatever the order of the edits; two edits may
  not touch the same line; an empty block means nothing changes.

Lines of text are taken as they are (no quoting, no escaping), so a small model has nothing to
get wrong but the numbers; the blank lines that end an edit's text are dropped (a blank line may
separate edits). Untouched lines stay byte-identical by construction, and the result is judged
by the same guards as a whole document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPEN_TAG = "<edits>"
CLOSE_TAG = "</edits>"
_OPEN = re.compile(r"^\s*<edits>\s*$", re.IGNORECASE)
_CLOSE = re.compile(r"^\s*</edits>\s*$", re.IGNORECASE)
_EMPTY_BLOCK = re.compile(r"^\s*<edits>\s*</edits>\s*$|^\s*<edits\s*/>\s*$", re.IGNORECASE)
_COMMAND = re.compile(
    r"^\s*@@\s*(replace|insert\s+after|delete)\s+(\d+)(?:\s*-\s*(\d+))?\s*(?:@@)?\s*$",
    re.IGNORECASE,
)
_LOOSE_COMMAND = re.compile(r"^\s*@@")
_NUMBERED = re.compile(r"^\d+\|(?: |$)")


# The example the prompt shows; a reply that repeats it has not edited anything.
EXAMPLE = """\
<edits>
@@ replace 5
- Python 3.13.
@@ insert after 9
- Deploys go to Kubernetes on GKE.
@@ delete 12-13
</edits>"""


class EditError(ValueError):
    """The reply's edits cannot be applied to the document; the message says why in a
    sentence (it is shown to the model in the whole-document retry)."""


@dataclass(frozen=True)
class Edit:
    """One parsed edit: ``kind`` is ``replace``, ``insert`` or ``delete``; ``start``-``end``
    are 1-based inclusive line numbers (for ``insert``, both are the line it goes after, 0 for
    the top); ``lines`` the new lines (none for ``delete``)."""

    kind: str
    start: int
    end: int
    lines: tuple[str, ...]


def number_lines(document: str) -> str:
    """``document`` with each line prefixed by its 1-based number and ``| `` (``| `` alone
    before a blank line), as the edit form's request shows it; ``""`` stays ``""``."""
    return "\n".join(
        f"{n}| {line}" if line else f"{n}|" for n, line in enumerate(document.splitlines(), start=1)
    )


def is_numbered(reply: str) -> bool:
    """Whether every non-blank line of ``reply`` carries a line number as the request showed
    them (``12| …``): the numbered document sent back, not a document or edits."""
    lines = [line for line in reply.splitlines() if line.strip()]
    return bool(lines) and all(_NUMBERED.match(line.strip()) for line in lines)


def _numbered(line: str) -> tuple[int, str] | None:
    """The number and text of a line as the request numbers them (``12| - Python 3.12.`` is
    ``(12, "- Python 3.12.")``), else ``None``."""
    match = _NUMBERED.match(line.strip())
    if match is None:
        return None
    return int(line.strip().split("|", 1)[0]), line.strip()[match.end() :]


def shown_line(line: str, document_lines: list[str]) -> str | None:
    """The document's own line that ``line`` shows with its number (``12| - Python 3.12.``
    when line 12 of the document is ``- Python 3.12.``), else ``None``: a numbered line whose
    text is not that line of the document, or a line without a number."""
    numbered = _numbered(line)
    if numbered is None or not 1 <= numbered[0] <= len(document_lines):
        return None
    own = document_lines[numbered[0] - 1]
    return own if own.strip() == numbered[1].strip() else None


def continued_document(lines: list[str], document_lines: list[str]) -> dict[int, str]:
    """The numbered lines of a reply that write the document on in the request's numbering,
    ``{index in lines: text without its number}``; ``{}`` unless the reply's numbered lines
    are exactly the document's own lines under their numbers (``1| …`` to ``n| …``, none
    left out) followed by lines numbered ``n+1``, ``n+2``… in order, at least one of them
    not blank. A small model asked for the whole document answers that way: the document it
    was shown, and its new lines numbered after it."""
    numbered = [(i, found) for i, line in enumerate(lines) if (found := _numbered(line))]
    count = len(document_lines)
    if len(numbered) <= count or any(n != k for k, (_i, (n, _t)) in enumerate(numbered, 1)):
        return {}
    if [shown_line(lines[i], document_lines) for i, _ in numbered[:count]] != document_lines:
        return {}
    if not any(text.strip() for _i, (_n, text) in numbered[count:]):
        return {}
    return {i: (document_lines[n - 1] if n <= count else text) for i, (n, text) in numbered}


def is_edit_syntax(line: str) -> bool:
    """Whether ``line`` belongs to the edit form rather than to a document: an ``<edits>`` or
    ``</edits>`` tag, an ``@@`` command, or a line carrying a line number as the request shows
    them (``12| …``). Such a line is never document content."""
    return bool(
        _OPEN.match(line)
        or _CLOSE.match(line)
        or _EMPTY_BLOCK.match(line)
        or _LOOSE_COMMAND.match(line)
        or _NUMBERED.match(line.strip())
    )


def holds_edits(reply: str) -> bool:
    """Whether ``reply`` answers in the edit form: a line that is only ``<edits>`` (or an
    empty ``<edits></edits>`` / ``<edits/>``). A reply without one is a whole document."""
    return any(_OPEN.match(line) or _EMPTY_BLOCK.match(line) for line in reply.splitlines())


def parse_edits(reply: str) -> list[Edit]:
    """The edits of the first ``<edits>`` block of ``reply`` (text around it is ignored).

    Returns:
        The edits in reply order; ``[]`` for an empty block (nothing changes).

    Raises:
        EditError: no block, a block that is not closed, text before the first command, a
            command that is not one of the three forms, a range that runs backwards, text
            after a ``delete``, a new line that carries a line number (``12| …``), or the
            prompt's example repeated. An ``insert`` with no lines is no edit.
    """
    lines = reply.splitlines()
    for index, line in enumerate(lines):
        if _EMPTY_BLOCK.match(line):
            return []
        if _OPEN.match(line):
            start = index + 1
            break
    else:
        raise EditError("the reply holds no <edits> block")
    for end in range(start, len(lines)):
        if _CLOSE.match(lines[end]):
            break
    else:
        raise EditError("the <edits> block is not closed with </edits>")
    if [line.strip() for line in lines[start:end] if line.strip()] == EXAMPLE.splitlines()[1:-1]:
        raise EditError("the reply repeats the example of the format instead of editing")
    edits: list[Edit] = []
    current: tuple[str, int, int] | None = None
    body: list[str] = []

    def finish() -> None:
        if current is None:
            return
        kind, first, last = current
        text = list(body)
        while text and not text[-1].strip():
            text.pop()
        if kind == "delete" and text:
            raise EditError(f"'@@ delete {first}' is followed by text; a delete takes none")
        if kind == "insert" and not text:
            return  # nothing to insert: a small model's stray command changes nothing
        edits.append(Edit(kind, first, last, tuple(text)))

    for line in lines[start:end]:
        command = _COMMAND.match(line)
        if command is None and _LOOSE_COMMAND.match(line):
            raise EditError(
                f"'{line.strip()[:60]}' is not an edit; use '@@ replace A-B', "
                "'@@ insert after N' or '@@ delete A-B'"
            )
        if command is None and _NUMBERED.match(line):
            raise EditError(
                f"the new line '{line.strip()[:60]}' carries a line number; write new lines "
                "without numbers"
            )
        if command is None:
            if current is None:
                if line.strip():
                    raise EditError(f"text before the first edit command: '{line.strip()[:60]}'")
                continue
            body.append(line)
            continue
        finish()
        body = []
        verb = command[1].lower()
        kind = "insert" if verb.startswith("insert") else verb
        first = int(command[2])
        last = int(command[3]) if command[3] else first
        if kind == "insert" and command[3]:
            raise EditError(f"'@@ insert after {first}-{last}' names a range; give one line")
        if last < first:
            raise EditError(f"the range {first}-{last} runs backwards")
        current = (kind, first, last)
    finish()
    return edits


def apply_edits(document: str, edits: list[Edit]) -> str:
    """``document`` with ``edits`` applied (numbers refer to ``document``'s lines).

    Args:
        document: the document the model was shown, LF line endings.
        edits: from :func:`parse_edits`.

    Returns:
        The new document, each line ending with LF (``""`` when no line is left); the untouched
        lines are ``document``'s own, byte for byte.

    Edits that reach past the end of the document, a small model's habit, are read for what
    they can only mean: ``@@ insert after N`` past the last line appends; a ``replace`` or
    ``delete`` range that ends past it ends at the last line; on an empty document (``@@
    replace 1`` as its first lines) a replace inserts and a delete changes nothing. One that
    starts past the last line of a document meant another line: it does not apply (the whole
    document is asked for instead), since appending it would keep the fact it replaces. What
    the lines then say is judged like any other (``yak.memory.judging.per_line``).

    Raises:
        EditError: a line number below 1 (0 for an insert), a replace or delete that starts
            past the last line of a document, or two edits touching the same line.
    """
    old = document.splitlines()
    count = len(old)
    edits = [_within(edit, count) for edit in edits]
    taken: dict[int, Edit] = {}
    replaced_at: dict[int, tuple[str, ...]] = {}
    inserts: dict[int, list[str]] = {}
    for edit in edits:
        if edit.kind == "insert":
            if not 0 <= edit.start <= count:
                raise EditError(
                    f"'@@ insert after {edit.start}' is outside the document's {count} lines"
                )
            inserts.setdefault(edit.start, []).extend(edit.lines)
            continue
        if edit.start < 1 or edit.end > count:
            span = f"{edit.start}-{edit.end}" if edit.end != edit.start else str(edit.start)
            raise EditError(f"'@@ {edit.kind} {span}' is outside the document's {count} lines")
        for number in range(edit.start, edit.end + 1):
            if number in taken:
                raise EditError(f"two edits change line {number}")
            taken[number] = edit
        if edit.kind == "replace":
            replaced_at[edit.start] = edit.lines
    new: list[str] = list(inserts.get(0, ()))
    for number, line in enumerate(old, start=1):
        new += replaced_at.get(number, ())
        if number not in taken:
            new.append(line)
        new += inserts.get(number, ())
    return "".join(line + "\n" for line in new)


def _within(edit: Edit, count: int) -> Edit:
    """``edit`` brought within a document of ``count`` lines (see :func:`apply_edits`)."""
    if edit.kind == "insert" and edit.start > count:
        return Edit("insert", count, count, edit.lines)
    if edit.kind == "insert" or edit.end <= count:
        return edit
    if edit.start <= count:
        return Edit(edit.kind, edit.start, count, edit.lines)
    if count == 0:  # nothing to replace yet: the lines are the document's first
        return Edit("insert", 0, 0, edit.lines)  # (a delete's none: nothing)
    return edit  # aimed at a line that is not there: it meant another, so it does not apply
