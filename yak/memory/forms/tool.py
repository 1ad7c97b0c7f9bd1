"""The ``tool`` rewrite form: the memory model calls one tool, ``update_memory``, forced with
``tool_choice`` and held to a strict input schema, listing what the conversations established;
Yak merges it into the document itself ("The rewrite forms" in docs/refresh.md). Pure.

The model never writes the document: it lists facts (each one line, with the conversation and
the words that support it, and the lines it makes outdated) and lines to forget. The merge is
deterministic: a fact that replaces lines takes the place of the first of them, a new fact joins
its section (``yak.memory.history.placement``), a fact the document already holds word for word
changes nothing. Whatever the merge gives is judged like any other candidate: a line removed without
cause stays, an unsupported line waits, a quote is checked before it counts as evidence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from yak.evidence import Speaker
from yak.memory.forms import Candidate, FormError
from yak.memory.forms.habits import (
    aim_forgets,
    asks_to_forget,
    echoes,
    is_acknowledgement,
    is_chatter,
    is_label,
    quote_sentences,
    requests_to_forget,
    split_run_on,
    text_as_quote,
)
from yak.memory.forms.merge import merge, with_cause
from yak.memory.forms.profiles import PLAIN, Habit, Profile
from yak.memory.judging.quotes import quote_speaker
from yak.memory.judging.said import Passage

TOOL_NAME = "update_memory"
TOOL_CHOICE: dict[str, str] = {"type": "tool", "name": TOOL_NAME}

_REFERENCE = {
    "conversation": {
        "type": "integer",
        "description": "The number of the conversation that says it (conversation 1 is the "
        "first in the request).",
    },
    "quote": {
        "type": "string",
        "description": "One sentence of that conversation that says it, copied exactly.",
    },
}

TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": (
        "Record what the conversations established in the project's memory document. List "
        "each durable fact the document does not already say, and each line of the document "
        "a conversation says is wrong or asks to remove. Both lists empty when nothing "
        "durable was said."
    ),
    "strict": True,
    "input_schema": {
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "description": "New or changed facts, one line of the document each.",
                "items": {
                    "type": "object",
                    "properties": {
                        **_REFERENCE,
                        "text": {
                            "type": "string",
                            "description": "The fact, written from the quote as one line of "
                            "the document: a dash, then a full sentence that names what it is "
                            "about.",
                        },
                        "section": {
                            "type": "string",
                            "description": "The title of the document's section it belongs "
                            'in, such as "Conventions"; a new section is started when the '
                            "document has none with that title.",
                        },
                        "replaces": {
                            "type": "array",
                            "items": {"type": "integer"},
                            "description": "Numbers of the document's lines this fact makes "
                            "outdated; empty when it only adds.",
                        },
                    },
                    "required": ["text", "conversation", "quote", "replaces"],
                    "additionalProperties": False,
                },
            },
            "forget": {
                "type": "array",
                "description": "Lines of the document a conversation says are wrong or asks "
                "to remove.",
                "items": {
                    "type": "object",
                    "properties": {
                        "line": {"type": "integer", "description": "The line's number."},
                        **_REFERENCE,
                    },
                    "required": ["line", "conversation", "quote"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["facts", "forget"],
        "additionalProperties": False,
    },
}


def tool_call(content: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The reply's ``update_memory`` call (its ``tool_use`` block), or ``None``."""
    for block in content:
        if block.get("type") == "tool_use" and block.get("name") == TOOL_NAME:
            return block
    return None


def read_tool(
    call: Mapping[str, Any],
    previous: str,
    *,
    said: Sequence[Passage] = (),
    sessions: Sequence[str] = (),
    titles: Sequence[str] = (),
    profile: Profile = PLAIN,
) -> Candidate | FormError:
    """Read an ``update_memory`` call against the document it was shown.

    Args:
        call: the reply's ``tool_use`` block (``input`` already redacted).
        previous: the document the request showed (its lines are numbered from 1).
        said: the folded conversations: a line the call replaces or forgets stays unless they
            give a cause (:class:`yak.memory.judging.removals.Removals`; flag
            ``removal_without_cause``).
        sessions: the request's conversations in order (``Transcript.session_ids``): a forget
            counts only when its quote is found in the conversation it names and touches the
            line.
        titles: the conversations' titles as the request's labels showed them
            (``Transcript.titles``): a fact whose text is one of them copied the request and
            is dropped, or under :attr:`Habit.STRAY_TEXT` read from its quote
            (:func:`quote_sentences`), as is every fact whose quote a person said and any
            whose text is a label (:func:`is_label`) or a remark; a fact whose quote is not
            found but whose text a person said is read from its text
            (:func:`text_as_quote`).
        profile: the memory model's habits: under :attr:`Habit.RUN_ON_FACT` a fact drawn
            from several sentences of its quote becomes one line per sentence
            (:func:`split_run_on`); under :attr:`Habit.CHATTER_AS_FACT` a short fact with no
            detail is dropped (:func:`is_chatter`); under :attr:`Habit.FORGET_AS_FACT` a
            person's request to forget, listed as a fact or aimed at another line, forgets
            the one line it names (:func:`asks_to_forget`), as does one the call left out.

    Returns:
        The merged candidate (``unchanged`` when both lists are empty), with one
        :class:`~yak.memory.forms.Quote` per fact line, or a :class:`FormError` naming the
        first problem: a list missing, a fact that is not one line, a line number outside the
        document, a forget without a line, a conversation that is not a number.
    """
    given = call.get("input")
    record = json.dumps(given, ensure_ascii=False, sort_keys=True)
    if profile.tolerates(Habit.LINES_PAST_THE_END):
        given = _within(given, len(previous.splitlines()))
    problem = _problem(given, previous.splitlines())
    if problem is not None:
        return FormError(problem, record=record)
    assert isinstance(given, Mapping)  # checked by _problem
    # A fact with blank text says nothing, and a question decides nothing: each is skipped on
    # its own, never a retry (the 1.5B model padded a call with two empty facts, and listed
    # "Anything to change?" from a chat that decided nothing).
    facts = [fact for fact in given["facts"] if _says_something(str(fact["text"]))]
    forget = list(given["forget"])
    shown = {_folded_title(title) for title in titles if title.strip()}
    stray = profile.tolerates(Habit.STRAY_TEXT)
    kept_facts: list[Mapping[str, Any]] = []
    dropped: list[str] = []  # request text listed as a fact
    for fact in facts:
        text = str(fact["text"])
        title = _folded_title(text) in shown
        begins = any(_folded_title(text).startswith(f"{t} ") for t in shown)
        speaker = quote_speaker(str(fact.get("quote", "")), fact["conversation"], sessions, said)
        if (title and not stray) or _not_a_fact(text):
            dropped.append(text.strip())
        elif profile.tolerates(Habit.FORGET_AS_FACT) and asks_to_forget(fact, said, sessions):
            forget.append({k: fact[k] for k in ("conversation", "quote")})
        elif stray and (echoes(fact, previous, said, sessions) or speaker is Speaker.ASSISTANT):
            dropped.append(text.strip())
        elif stray and (
            title or begins or is_label(text) or is_chatter(text) or speaker is Speaker.USER
        ):
            kept_facts += quote_sentences(fact, said=said, sessions=sessions)
        elif (
            stray
            and speaker is None
            and (spoken := text_as_quote(fact, said=said, sessions=sessions))
        ):
            kept_facts += quote_sentences(spoken, said=said, sessions=sessions)
        elif not (
            profile.tolerates(Habit.CHATTER_AS_FACT)
            and (is_chatter(text) or is_acknowledgement(text))
        ):
            kept_facts.append(fact)
    facts = kept_facts
    if profile.tolerates(Habit.RUN_ON_FACT):
        facts = [part for fact in facts for part in split_run_on(fact)]
    if profile.tolerates(Habit.FORGET_AS_FACT):
        asked = requests_to_forget(said, sessions)
        forget = aim_forgets(previous.splitlines(), forget + asked, said, sessions)
    if not facts and not forget:
        return Candidate(text=previous, unchanged=True, record=record, dropped=tuple(dropped))
    facts, forget, spared = with_cause(previous, facts, forget, said, sessions)
    text, quotes = merge(previous, facts, forget)
    flags: tuple[str, ...] = ("removal_without_cause",) if spared else ()
    flags += ("request_text_dropped",) if dropped else ()
    return Candidate(text=text, quotes=quotes, record=record, flags=flags, dropped=tuple(dropped))


def _folded_title(text: str) -> str:
    """``text`` compared as a title: list marker, quotes, end punctuation and case folded
    away."""
    text = re.sub(r"^\s*(?:[-*+]\s+)?", "", text)
    return " ".join(text.strip().strip("\"'`").rstrip(".:;!").split()).casefold()


_TRANSCRIPT_LINE = re.compile(
    r"^\s*(?:user|assistant|human)\s*:|^\s*---\s*conversation\s+\d+", re.I
)


def _says_something(text: str) -> bool:
    """Whether a fact's text could be a fact: not blank, not a question."""
    return bool(text.strip()) and not text.rstrip().endswith("?")


def _not_a_fact(text: str) -> bool:
    """Whether a fact's text is a line of the transcript as the request showed it (``user: …``,
    a ``--- conversation 2 ---`` label) rather than a fact. Such a fact is dropped on its own,
    the rest of the call kept (the 1.5B model listed "user: ok, calling it a day." beside real
    facts, and the whole call was refused as a transcript). Anything else is judged as a line
    (grounding), whatever words it shares with the request."""
    return bool(_TRANSCRIPT_LINE.match(text))


def retry_request(
    messages: list[dict[str, Any]], *, call: Mapping[str, Any], reason: str
) -> list[dict[str, Any]]:
    """The messages of the one retry after an ``update_memory`` call that cannot be read: the
    call as the assistant turn, and its ``tool_result`` marked as an error that names the
    problem (the API's way to say a tool call failed), asking for the call again."""
    return [
        *messages,
        {"role": "assistant", "content": [dict(call)]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": call.get("id", ""),
                    "is_error": True,
                    "content": retry_message(reason),
                }
            ],
        },
    ]


def retry_message(reason: str) -> str:
    """The tool form's retry message for a call that cannot be read."""
    return (
        f"That update_memory call cannot be applied: {reason}. Call update_memory again with "
        "valid input: line numbers of the document as you received it, each fact one line."
    )


def _within(given: object, count: int) -> object:
    """``given`` without the line numbers outside a document of ``count`` lines
    (:attr:`Habit.LINES_PAST_THE_END`): a fact's ``replaces`` keeps those inside, a forget
    naming a line outside is left out. Anything else is left for :func:`_problem`."""
    if not isinstance(given, Mapping):
        return given

    def inside(number: object) -> bool:
        return isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= count

    facts = given.get("facts")
    if isinstance(facts, list):
        facts = [
            {**f, "replaces": [n for n in f["replaces"] if inside(n)]}
            if isinstance(f, Mapping) and isinstance(f.get("replaces"), list)
            else f
            for f in facts
        ]
    forget = given.get("forget")
    if isinstance(forget, list):
        forget = [
            i
            for i in forget
            if not (isinstance(i, Mapping) and _is_int(i.get("line"))) or inside(i["line"])
        ]
    return {**given, "facts": facts, "forget": forget}


def _problem(given: object, lines: Sequence[str]) -> str | None:
    """The first thing wrong with a call's input, in words, or ``None``."""
    if not isinstance(given, Mapping):
        return "its input is not an object with facts and forget"
    count = len(lines)
    for key in ("facts", "forget"):
        if not isinstance(given.get(key), list):
            return f"its input has no {key} list"
    for number, fact in enumerate(given["facts"], start=1):
        if not isinstance(fact, Mapping):
            return f"fact {number} is not an object"
        text = fact.get("text")
        if not isinstance(text, str):
            return f"fact {number} has no text"
        if "\n" in text.strip():
            return f"fact {number} is not one line (it holds a line break)"
        wrong = _reference_problem(fact, f"fact {number}")
        if wrong is not None:
            return wrong
        replaces = fact.get("replaces", [])
        if not isinstance(replaces, list) or not all(_is_int(n) for n in replaces):
            return f"fact {number}'s replaces is not a list of line numbers"
        outside = [n for n in replaces if not 1 <= n <= count]
        if outside:
            return f"fact {number} replaces line {outside[0]}, but the document has {_lines(count)}"
    for number, item in enumerate(given["forget"], start=1):
        if not isinstance(item, Mapping) or not _is_int(item.get("line")):
            return f"forget {number} names no line"
        if not 1 <= item["line"] <= count:
            return (
                f"forget {number} names line {item['line']}, but the document has {_lines(count)}"
            )
        wrong = _reference_problem(item, f"forget {number}")
        if wrong is not None:
            return wrong
    return None


def _reference_problem(item: Mapping[str, Any], name: str) -> str | None:
    if not _is_int(item.get("conversation")):
        return f"{name} names no conversation by its number"
    if not isinstance(item.get("quote", ""), str):
        return f"{name}'s quote is not text"
    return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _lines(count: int) -> str:
    return "no lines" if count == 0 else f"{count} line{'s' if count != 1 else ''}"
