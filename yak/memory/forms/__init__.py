"""The rewrite forms: how the memory model is asked to answer a refresh, and how its reply is
read ("The rewrite forms" in docs/refresh.md). Pure.

A form owns its answer instructions, how the document is shown, its reader and its retry
message. The reader turns a model's reply into a :class:`Candidate` (the document the reply
makes, with what the reader saw on the way) or a :class:`FormError` (why the reply cannot be
read, in one sentence: the retry says it back). Every rule about a reply's *shape* (code
fences, chatter, tags, numbered lines, edit commands, a tool call's input) lives in a reader;
what a candidate document may be (not a document, placeholders, the ceiling, the floor, each
line's support) is judged after it, the same for every form (``yak.memory.judging.pipeline``,
``yak.memory.judging.per_line``).

Forms, in order of preference: ``tool`` (:mod:`yak.memory.forms.tool`), ``edits`` and
``whole`` (:mod:`yak.memory.forms.text`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Quote:
    """What the model says supports one line of a tool-form reply: the conversation (its
    number in the request, 1-based) and the words it quotes. Never trusted, only checked
    (``yak.memory.judging.quotes``)."""

    line: str
    conversation: int
    quote: str


@dataclass(frozen=True)
class Candidate:
    """A reply read into a candidate document (not yet redacted, normalized or judged).

    Attributes:
        text: the document the reply makes.
        flags: what the reader saw (``whole_reply``, ``request_text_dropped``,
            ``tool_text_reply``, …).
        unchanged: the reply says nothing changes (an empty block of edits; a tool call with
            both lists empty): ``up_to_date``.
        dropped: the reply's lines that were Yak's own request text or edit syntax, dropped.
        not_document: why the reply is not a memory document (an echo of the request, Yak's
            own retry message), else ``None``.
        talk: the reply's own words when reading left no document (remarks to the user), for
            the floor's sentence; ``""`` otherwise.
        quotes: a tool-form reply's claimed support, one per fact line.
        record: the reply as it is kept with the attempt (a tool call's input as JSON).
    """

    text: str
    flags: tuple[str, ...] = ()
    unchanged: bool = False
    dropped: tuple[str, ...] = ()
    not_document: str | None = None
    talk: str = ""
    quotes: tuple[Quote, ...] = ()
    record: str = ""


@dataclass(frozen=True)
class FormError:
    """Why a reply cannot be read in its form (one sentence, without a final period), for the
    form's retry message and the attempt's record."""

    reason: str
    record: str = ""
