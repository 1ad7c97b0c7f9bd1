"""The free-text rewrite forms: ``edits`` against the numbered document and the ``whole``
document ("The rewrite forms" in docs/refresh.md). Pure.

Their readers hold every rule about a free-text reply's shape: the ``<edits>`` block and its
commands (``yak.memory.edits``), the wrapping a model puts around a whole document (an outer
fence, a tag, chatter: ``guards.clean_reply``), the request's own blocks or retry message sent
back, and lines that are Yak's own request text or edit syntax. A model's habits that only
one model needs are a profile's business (``yak.memory.forms.profiles``), not a reader's.
"""

from __future__ import annotations

from collections.abc import Sequence

from yak.domain import RewriteForm
from yak.memory import grounding, guards
from yak.memory.document import merge_flags
from yak.memory.edits import (
    EditError,
    apply_edits,
    continued_document,
    holds_edits,
    is_edit_syntax,
    is_numbered,
    parse_edits,
    shown_line,
)
from yak.memory.forms import Candidate, FormError
from yak.memory.prompt import copies_retry_message, echoes_request
from yak.memory.provenance import fold_line
from yak.memory.said import Passage
from yak.text import plural

NUMBERED_ECHO = "the reply is the numbered document sent back, with its line numbers"


def read_text(
    form: RewriteForm,
    raw: str,
    previous: str,
    *,
    said: Sequence[Passage] = (),
    declined: bool = False,
) -> Candidate | FormError:
    """Read a free-text reply (already redacted) in ``form``.

    Args:
        form: ``edits`` (a reply holding an ``<edits>`` block is applied to ``previous``; any
            other is read as the whole document, flag ``whole_reply``) or ``whole``.
        raw: the reply's text.
        previous: the document the request showed.
        said: the folded conversations: a line of Yak's own request they back is kept.
        declined: the model declined (stop reason ``refusal``): read as a whole document,
            never as edits.

    Returns:
        The candidate, or a :class:`FormError` when edits do not apply (a line number below
        1, overlapping edits, …) or the reply is the numbered document sent back as it was.
    """
    flags: tuple[str, ...] = ()
    if form is RewriteForm.EDITS and not declined and holds_edits(raw):
        try:
            parsed = parse_edits(raw)
            applied = apply_edits(previous, parsed)
        except EditError as exc:
            return FormError(str(exc), record=raw)
        if not parsed:
            return Candidate(text=previous, unchanged=True, record=raw)
        text = guards.normalize_document(applied)
    elif (
        form is RewriteForm.EDITS
        and is_numbered(raw)
        and not continued_document(raw.splitlines(), previous.splitlines())
    ):
        return FormError(NUMBERED_ECHO, record=raw)
    else:
        text = guards.normalize_document(guards.clean_reply(raw))
        if form is RewriteForm.EDITS and raw.strip():
            flags = ("whole_reply",)
    return _without_echoes(text, raw, previous, flags, said)


def _without_echoes(
    text: str, raw: str, previous: str, flags: tuple[str, ...], said: Sequence[Passage]
) -> Candidate:
    """The reply's document once what is Yak's own request is taken out: a reply that repeats
    a request block or a retry message is not a document; lines that are request text or
    edit syntax are dropped (:func:`without_request_lines`)."""
    echo = guards.find_echoed_block(text)
    copied = [line for line in text.splitlines() if copies_retry_message(line)]
    if echo is None and copied:
        echo = (
            f"the reply repeats Yak's own request text (its retry message, "
            f'"{copied[0].strip()[:40]}…") instead of being the document'
        )
    if echo is not None:
        return Candidate(text=text, flags=flags, not_document=echo, record=raw)
    text, dropped = without_request_lines(previous, text, said)
    not_document = None
    if dropped:
        text = guards.normalize_document(text)
        flags = merge_flags(flags, ("request_text_dropped",))
        if not text.strip():
            not_document = (
                f"the reply was only Yak's own request text ({plural(len(dropped), 'line')} "
                f"of its rules, example edits or retry message, first "
                f'"{dropped[0].strip()[:60]}")'
            )
    talk = raw if _has_words(raw) else ""
    return Candidate(
        text=text,
        flags=flags,
        dropped=dropped,
        not_document=not_document,
        talk=talk,
        record=raw,
    )


def without_request_lines(
    previous: str, text: str, passages: Sequence[Passage] = ()
) -> tuple[str, tuple[str, ...]]:
    """``text`` without its lines that are edit syntax, or Yak's own request text that the
    conversations (``passages``) do not back, and are not in ``previous`` (a line the document
    already had is the document's business); and those lines, in order. A line of the edits
    example that a person really said ("We moved to Python 3.13.") stays. When ``text`` also
    holds new lines, a numbered line showing ``previous``'s own line under its number
    (``3| - Go 1.22.``) is read as that line kept, not dropped: a small model sends the numbered
    document back with its new facts below it, and dropping the numbered lines would lose the
    document (a numbered echo alone, with nothing new, is still dropped whole). A numbered
    reply that is the whole document under its numbers and then new lines numbered on after it
    (:func:`yak.memory.edits.continued_document`) is read as that document with those lines,
    their numbers taken off; the new lines are then checked like any other. The result keeps
    ``text``'s line endings; blank runs left behind are not folded."""
    previous_lines = previous.splitlines()
    before = {fold_line(line) for line in previous_lines}
    lines = text.splitlines(keepends=True)
    for i, line in continued_document(
        [line.rstrip("\n") for line in lines], previous_lines
    ).items():
        lines[i] = line + "\n"  # the numbered document written on: its lines, numbers off
    syntax = {i for i, line in enumerate(lines) if is_edit_syntax(line.rstrip("\n"))}
    echoes = {
        i: line.rstrip("\n")
        for i, line in enumerate(lines)
        if i not in syntax and echoes_request(line.rstrip("\n"))
    }
    if passages and echoes:
        checks = grounding.check_lines(
            list(echoes.values()), document=previous, kept={}, passages=passages
        )
        backed = {c.line for c in checks if c.evidence is not None and c.reason is None}
        echoes = {i: line for i, line in echoes.items() if line not in backed}
    if any(  # new lines beside the numbered document: its numbered lines are its own lines
        line.strip() and i not in syntax | echoes.keys() and fold_line(line) not in before
        for i, line in enumerate(lines)
    ):
        for i in sorted(syntax):
            own = shown_line(lines[i], previous_lines)
            if own is not None:
                lines[i] = own + "\n"
                syntax.discard(i)
    gone = {i for i in syntax | echoes.keys() if fold_line(lines[i].rstrip("\n")) not in before}
    kept = "".join(line for i, line in enumerate(lines) if i not in gone)
    return kept, tuple(lines[i].rstrip("\n") for i in sorted(gone))


def _has_words(reply: str) -> bool:
    """Whether a reply says anything outside code-fence lines (an empty fence says nothing)."""
    return any(
        char.isalnum()
        for line in reply.splitlines()
        if not line.lstrip().startswith(("```", "~~~"))
        for char in line
    )
