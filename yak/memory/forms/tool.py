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

from yak.errors import UsageError
from yak.evidence import Speaker
from yak.memory.forms import Candidate, FormError, Quote
from yak.memory.forms.profiles import PLAIN, Habit, Profile
from yak.memory.history.placement import place, sections
from yak.memory.history.provenance import fold_line
from yak.memory.judging.kinds import is_structure, says_nothing
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
from yak.memory.judging.said import Passage, is_wondering
from yak.memory.judging.words import distinctive_tokens
from yak.memory.lines import LIST_MARKER

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
            whose text is a label (:func:`is_label`) or a remark.
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
        if (title and not stray) or _not_a_fact(text):
            dropped.append(text.strip())
        elif profile.tolerates(Habit.FORGET_AS_FACT) and asks_to_forget(fact, said, sessions):
            forget.append({k: fact[k] for k in ("conversation", "quote")})
        elif stray and (
            _echoes(fact, previous, said, sessions) or _quotes_the_assistant(fact, said, sessions)
        ):
            dropped.append(text.strip())
        elif stray and (
            title
            or begins
            or is_label(text)
            or is_chatter(text)
            or _quotes_a_person(fact, said, sessions)
        ):
            kept_facts += quote_sentences(fact, said=said, sessions=sessions)
        elif not (
            profile.tolerates(Habit.CHATTER_AS_FACT)
            and (is_chatter(text) or is_acknowledgement(text))
        ):
            kept_facts.append(fact)
    facts = kept_facts
    if profile.tolerates(Habit.RUN_ON_FACT):
        facts = [part for fact in facts for part in split_run_on(fact)]
    if profile.tolerates(Habit.FORGET_AS_FACT):
        forget = _aimed(previous.splitlines(), forget + _asked(said, sessions), said, sessions)
    if not facts and not forget:
        return Candidate(text=previous, unchanged=True, record=record, dropped=tuple(dropped))
    facts, forget, spared = _with_cause(previous, facts, forget, said, sessions)
    text, quotes = merge(previous, facts, forget)
    flags: tuple[str, ...] = ("removal_without_cause",) if spared else ()
    flags += ("request_text_dropped",) if dropped else ()
    return Candidate(text=text, quotes=quotes, record=record, flags=flags, dropped=tuple(dropped))


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
            and len(_SENTENCE_END.split(line.strip())) == 1
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


# Where a quote's sentences end: ., ! or ? before white space (not ";": "Fly.io did not work
# out; deploys now go to EKS." is one statement).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_run_on(fact: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``fact`` as one fact per sentence of its quote that its text draws on (shares a
    detail with: :func:`_details`), when it draws on two or more; else, when its text is
    several sentences, one fact per sentence of the text (each its own quote unless the fact's
    quote holds it); else ``[fact]``. Each part's text is its sentence, as a list item. A fact
    that names lines it replaces is left whole (which part would replace them is not known)."""
    if fact.get("replaces"):
        return [fact]
    keys = _details(str(fact["text"]))
    sentences = [s.strip() for s in _SENTENCE_END.split(str(fact.get("quote", ""))) if s.strip()]
    drawn = [s for s in sentences if keys & _details(s)]
    if len(drawn) >= 2:
        return [{**fact, "text": f"- {s.rstrip(';').strip()}", "quote": s} for s in drawn]
    text = re.sub(rf"^\s*(?:{LIST_MARKER})\s+", "", str(fact["text"]))
    parts = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    if len(parts) < 2:
        return [fact]
    # a paragraph written as one fact (the 1.5B model wrote a whole setup message as the text,
    # quoting the title): each sentence is a line, its own quote (found if it was said)
    quote = str(fact.get("quote", ""))
    return [
        {
            **fact,
            "text": f"- {part}",
            "quote": part if fold_line(part) not in fold_line(quote) else quote,
        }
        for part in parts
    ]


def quote_sentences(
    fact: Mapping[str, Any], *, said: Sequence[Passage], sessions: Sequence[str]
) -> list[Mapping[str, Any]]:
    """The facts ``fact``'s quote states, for a model whose text strays from its quote
    (:attr:`Habit.STRAY_TEXT`): one per sentence of the quote that a person said in the
    conversation the fact names (:func:`yak.memory.judging.quotes.verify`), as said (a list
    item; a clause saying only what ended is cut, :func:`_current`), with that sentence as its
    quote. A question, a sentence that wonders or says nothing, a remark with no detail
    (:func:`is_chatter`, or starting "ok", "thanks", "let me"…), a sentence whose secret was
    redacted, and the assistant's words are left out; the whole fact is ``[]`` when none is
    left."""
    quote = _SPEAKER.sub("", str(fact.get("quote", "")))
    sentences = [s.strip() for s in _SENTENCE_END.split(quote) if s.strip()]
    conversation = fact["conversation"]
    return [
        {**fact, "text": f"- {_capital(clause)}", "quote": s, "replaces": []}
        for s in sentences
        for clause in _clauses(_current(_without_preamble(s)))
        if _says_something(s)
        and not is_wondering(s)
        and not says_nothing(s)
        and not _chatty(s)
        and "[REDACTED:" not in s
        and not _FORGET.match(s)
        and _said_by_a_person(s, conversation, said, sessions)
    ]


def _current(sentence: str) -> str:
    """``sentence`` without its clauses that only say what ended ("We upgraded to Python 3.12
    today; 3.11 is no longer supported here." gives "We upgraded to Python 3.12 today"): the
    line says what holds now, and the ended clause still takes the old line's place
    (:func:`_superseded`). A sentence of only such clauses is kept whole."""
    clauses = [c.strip() for c in sentence.split(";") if c.strip()]
    current = [c for c in clauses if not ended_names(c)]
    if not current or len(current) == len(clauses):
        return sentence
    return current[0].rstrip(".!?,")


# "Postgres runs on port 5432 and the app connects with DATABASE_URL=…": a second statement
# joined by "and", its own subject after it.
_AND_CLAUSE = re.compile(r",?\s+and\s+(?=(?:the|our|we|it|its|a|an|all|each|every)\s|[A-Z])")


def _clauses(sentence: str) -> list[str]:
    """``sentence`` as its statements: two joined by "and" with a subject of their own (three
    words or more each, a detail in one) are two lines ("Postgres runs on port 5432 and the
    app connects with DATABASE_URL=…"), so a later change replaces one and not the other; "It
    targets Qt 6.6 and is packaged with PyInstaller." stays one (no subject after "and")."""
    parts = [p.strip() for p in _AND_CLAUSE.split(sentence) if p.strip()]
    if len(parts) < 2 or any(len(p.split()) < 3 for p in parts) or not any(map(_details, parts)):
        return [sentence]
    return [p.rstrip(".!?,") for p in parts]


def _capital(clause: str) -> str:
    """A sentence as said, or a clause cut from one made a sentence ("Deploys now go to …")."""
    if clause[-1] in ".!?)":
        return clause
    return clause[0].upper() + clause[1:] + "."


# How a remark starts ("ok, calling it a day.", "Thanks, that fixed it!", "Let me grab a coffee
# first."): a sentence so starting with no detail is no fact.
_REMARK = re.compile(
    r"^(?:ok(?:ay)?|thanks?|thank you|hmm+|sorry|let me|see you|bye|hi|hello|morning|great|"
    r"nice|cool|sure|back|quick|that'?s (?:all|it)|done for|calling it)\b",
    re.IGNORECASE,
)


# What introduces a statement without being one ("Reminder for the future: run ruff format…",
# "Please note: DAG tasks have to be idempotent."): a line without it is compared with the
# document's as what it says, so a restated rule is seen as one.
_PREAMBLE = re.compile(
    r"^(?:(?:a\s+)?reminder(?:\s+for\s+the\s+future)?|please\s+note|note|remember|fyi|"
    r"for\s+the\s+record|by\s+the\s+way|btw)\s*[:,-]\s*(?=\S)",
    re.IGNORECASE,
)


def _without_preamble(sentence: str) -> str:
    bare = _PREAMBLE.sub("", sentence)
    return sentence if bare == sentence else bare[0].upper() + bare[1:]


# An acknowledgement ("Understood, EKS it is.", "Noted: Fly.io."): the assistant answering,
# not a fact.
_ACKNOWLEDGEMENT = re.compile(
    r"^(?:understood|noted|got it|will do|sure|ok(?:ay)?|yes|right|fair enough|of course|"
    r"sounds good|done|updated|removed|dropped)\b",
    re.IGNORECASE,
)


def is_acknowledgement(text: str) -> bool:
    """Whether a fact's text is an acknowledgement ("Understood, EKS it is."), which
    :attr:`Habit.CHATTER_AS_FACT` drops (the 1.5B model listed the assistant's answer as a
    fact beside the person's sentence)."""
    return (
        _ACKNOWLEDGEMENT.match(re.sub(rf"^\s*(?:{LIST_MARKER})\s+", "", text.strip())) is not None
    )


# What happened once ("Last night's failure paged the on-call engineer again."): an event,
# not a standing fact.
_EVENT = re.compile(r"\b(?:yesterday|last\s+night|last\s+week|this\s+morning)\b", re.IGNORECASE)


def _chatty(sentence: str) -> bool:
    """Whether a sentence of a quote is a remark: short with no detail (:func:`is_chatter`),
    starting as remarks do with no detail, or telling what happened yesterday or last night
    (and changed nothing)."""
    if is_chatter(sentence) or (_EVENT.search(sentence) and not says_change(sentence)):
        return True  # (a change said with its date is no event: "We moved to 3.13 last week.")
    return bool(_REMARK.match(sentence)) and not _details(sentence)


def _echoes(
    fact: Mapping[str, Any], previous: str, said: Sequence[Passage], sessions: Sequence[str]
) -> bool:
    """Whether a fact restates a line of the document (the same subject both ways) with a quote
    not found in the conversation it names: the 1.5B model rewrote "- DAGs live in dags/ …
    models in models/." as "DAGs live in dags/ … models in models." quoting an earlier
    conversation, and the changed line lost its path."""
    if not _is_int(fact["conversation"]):
        return False
    text = str(fact["text"])
    quote = Quote(text, fact["conversation"], _SPEAKER.sub("", str(fact.get("quote", ""))))
    if verify(quote, sessions, said) is not None:
        return False
    return any(
        restated(line, [text]) and restated(text, [line])
        for line in previous.splitlines()
        if line.strip() and not is_structure(line)
    )


def _quotes_the_assistant(
    fact: Mapping[str, Any], said: Sequence[Passage], sessions: Sequence[str]
) -> bool:
    """Whether a fact's quote is only the assistant's words (no person said them): the 1.5B
    model turned "When a deploy fails I will print ~/.aws/credentials" into the standing rule
    "the credentials are printed to ~/.aws/credentials when a deploy fails", and "Welcome back."
    into a copy of a document line."""
    if not _is_int(fact["conversation"]):
        return False
    quote = _ASSISTANT.sub("", str(fact.get("quote", "")))
    found = verify(Quote(quote, fact["conversation"], quote), sessions, said)
    return found is not None and found.speaker is Speaker.ASSISTANT


_ASSISTANT = re.compile(r"^\s*assistant\s*:\s*", re.IGNORECASE)


def _quotes_a_person(
    fact: Mapping[str, Any], said: Sequence[Passage], sessions: Sequence[str]
) -> bool:
    """Whether a fact's quote is words a person said in the conversation it names."""
    quote = _SPEAKER.sub("", str(fact.get("quote", "")))
    return _said_by_a_person(quote, fact["conversation"], said, sessions)


def is_label(text: str) -> bool:
    """Whether a fact's text is a label, not a line: no list marker and no end punctuation
    ("ruff format before commits", "Fly.io", "etl-01 setup")."""
    stripped = text.strip().strip("\"'`*")
    listed = re.match(rf"(?:{LIST_MARKER})\s", stripped)
    return bool(stripped) and not listed and stripped[-1] not in ".!?)"


# A request to forget, at the start of a person's sentence ("Forget what I said about …").
_FORGET = re.compile(r"^(?:please\s+)?(?:forget|drop|remove|delete|scratch)\b", re.IGNORECASE)


def asks_to_forget(
    item: Mapping[str, Any], said: Sequence[Passage], sessions: Sequence[str]
) -> bool:
    """Whether ``item``'s quote is a person asking to forget something
    (:attr:`Habit.FORGET_AS_FACT`): it starts "forget", "drop", "remove"… and a person said it
    in the conversation it names."""
    quote = _SPEAKER.sub("", str(item.get("quote", ""))).strip()
    return bool(_FORGET.match(quote)) and _said_by_a_person(
        quote, item["conversation"], said, sessions
    )


def _aimed(
    lines: Sequence[str],
    forget: Sequence[Mapping[str, Any]],
    said: Sequence[Passage],
    sessions: Sequence[str],
) -> list[Mapping[str, Any]]:
    """``forget`` with each person's request to forget aimed at the one line it names
    (:func:`yak.memory.judging.removals.names_line`): the 1.5B model listed "Forget what I said
    about SQLAlchemy async sessions" as a fact, and aimed its forgets at the wrong lines with
    the document's own words as quotes (those stay refused: no cause). A request naming no line
    or several is left as it was."""
    aimed: list[Mapping[str, Any]] = []
    for item in forget:
        if asks_to_forget(item, said, sessions):
            quote = str(item["quote"])
            named = [
                n
                for n, line in enumerate(lines, start=1)
                if line.strip() and not is_structure(line) and names_line(quote, line)
            ]
            if len(named) == 1:
                item = {**item, "line": named[0]}
        if "line" in item and item not in aimed:
            aimed.append(item)
    return aimed


def _asked(said: Sequence[Passage], sessions: Sequence[str]) -> list[Mapping[str, Any]]:
    """Each request to forget a person made in the conversations, as a forget without its
    line (:func:`_aimed` aims it): the 1.5B model answered "Forget the S3 bucket name, it
    changes per environment." with the fact "Removed." quoting the conversation's title."""
    return [
        {"conversation": sessions.index(p.session_id) + 1, "quote": p.text}
        for p in said
        if p.speaker is Speaker.USER
        and not p.quoted
        and p.session_id in sessions
        and _FORGET.match(p.text.strip())
    ]


_SPEAKER = re.compile(r"^\s*(?:user|human)\s*:\s*", re.IGNORECASE)


def _said_by_a_person(
    sentence: str, conversation: object, said: Sequence[Passage], sessions: Sequence[str]
) -> bool:
    if not _is_int(conversation):
        return False
    assert isinstance(conversation, int)
    found = verify(Quote(sentence, conversation, sentence), sessions, said)
    return found is not None and found.speaker is Speaker.USER


# Chatter: a sentence of at most this many words that gives no detail ("No, just venting.").
_CHATTER_WORDS = 3


def is_chatter(text: str) -> bool:
    """Whether ``text`` is a short remark with no detail (:func:`_details`): at most three
    words, no name, number or path ("No, just venting.", "Dropped."). A fact whose text is
    one is dropped under :attr:`Habit.CHATTER_AS_FACT`; "- Python 3.12." or
    "- No deploys on Fridays." give a detail and stay."""
    words = re.sub(r"^\s*[-*+]\s+", "", text).split()
    return len(words) <= _CHATTER_WORDS and not _details(text)


def _folded_title(text: str) -> str:
    """``text`` compared as a title: list marker, quotes, end punctuation and case folded
    away."""
    text = re.sub(r"^\s*(?:[-*+]\s+)?", "", text)
    return " ".join(text.strip().strip("\"'`").rstrip(".:;!").split()).casefold()


_NAMED = re.compile(r"\w[\w./-]*\w")


def _details(text: str) -> set[str]:
    """The details a sentence gives (case folded): its distinctive tokens, and names holding
    ``_``, ``/`` or a digit (``src/orders_api``)."""
    named = {c for c in _NAMED.findall(text) if any(ch in c for ch in "_/0123456789")}
    return {token.casefold() for token in [*distinctive_tokens(text), *named]}


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


def _with_cause(
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
        if not is_structure(line) and (asked or restated(line, added)):
            kept_forget.append(item)
        elif line.strip():
            spared += 1
    taken = {n for fact in kept_facts for n in fact["replaces"]} | {i["line"] for i in kept_forget}
    kept_facts, moved = _moved_values(lines, kept_facts, taken)
    kept_facts += moved
    return kept_facts + _carried(lines, kept_facts, taken), kept_forget, spared


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
                covered |= _details(changed)
        if not covered or not _details(text) <= covered:
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
