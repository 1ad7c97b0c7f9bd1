"""How the tool form reads what a small model puts in its ``update_memory`` call: the habits of
the ``small-local`` profile (``yak.memory.forms.profiles``), each read only where the profile
asks for it ("The rewrite forms" in docs/refresh.md). Pure.

The schema holds a call's shape; these readers deal with what a small model writes inside it:
a fact drawn from a whole message (:func:`split_run_on`), a text that strays from its quote
(:func:`quote_sentences`, :func:`echoes`, :func:`is_label`, :func:`text_as_quote`), chatter
and acknowledgements listed as facts (:func:`is_chatter`, :func:`is_acknowledgement`), and
requests to forget listed as facts or aimed at the wrong line (:func:`asks_to_forget`,
:func:`aim_forgets`, :func:`requests_to_forget`). Each reads the conversations, never trusts
the call: a sentence counts only where a person said it in the conversation it is read from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from yak.evidence import Speaker
from yak.memory.history.provenance import fold_line
from yak.memory.judging.kinds import is_structure, says_nothing
from yak.memory.judging.quotes import quote_speaker, without_speaker
from yak.memory.judging.removals import ended_names, names_line, restated, says_change
from yak.memory.judging.said import Passage, is_wondering
from yak.memory.judging.words import details, split_sentences
from yak.memory.lines import LIST_MARKER


def split_run_on(fact: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``fact`` as one fact per sentence of its quote that its text draws on (shares a
    detail with, :func:`yak.memory.judging.words.details`), when it draws on two or more;
    else, when its text is several sentences, one fact per sentence of the text (each its own
    quote unless the fact's quote holds it); else ``[fact]``. Each part's text is its sentence,
    as a list item. A fact that names lines it replaces is left whole (which part would replace
    them is not known)."""
    if fact.get("replaces"):
        return [fact]
    keys = details(str(fact["text"]))
    sentences = split_sentences(str(fact.get("quote", "")))
    drawn = [s for s in sentences if keys & details(s)]
    if len(drawn) >= 2:
        return [{**fact, "text": f"- {s.rstrip(';').strip()}", "quote": s} for s in drawn]
    text = re.sub(rf"^\s*(?:{LIST_MARKER})\s+", "", str(fact["text"]))
    parts = split_sentences(text)
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
    sentences = split_sentences(without_speaker(str(fact.get("quote", ""))))
    conversation = fact["conversation"]
    return [
        {**fact, "text": f"- {_capital(clause)}", "quote": s, "replaces": []}
        for s in sentences
        for clause in _clauses(_current(_without_preamble(s)))
        if not s.endswith("?")
        and not is_wondering(s)
        and not says_nothing(s)
        and not _chatty(s)
        and "[REDACTED:" not in s
        and not _FORGET.match(s)
        and quote_speaker(s, conversation, sessions, said) is Speaker.USER
    ]


def text_as_quote(
    fact: Mapping[str, Any], *, said: Sequence[Passage], sessions: Sequence[str]
) -> Mapping[str, Any] | None:
    """``fact`` with its own text as its quote, when its quote is not found but its text is
    words a person said in one of the conversations (the first that holds them), else
    ``None``: the 0.5B model quoted a conversation's title from a conversation the request
    does not hold and wrote the person's "Quick hello before lunch." as the text. Read then
    like any quote (:func:`quote_sentences`), so a remark adds nothing."""
    text = re.sub(rf"^\s*(?:{LIST_MARKER})\s+", "", str(fact["text"])).strip()
    for number in range(1, len(sessions) + 1):
        if quote_speaker(text, number, sessions, said) is Speaker.USER:
            return {**fact, "conversation": number, "quote": text}
    return None


def _current(sentence: str) -> str:
    """``sentence`` without its clauses that only say what ended ("We upgraded to Python 3.12
    today; 3.11 is no longer supported here." gives "We upgraded to Python 3.12 today"): the
    line says what holds now, and the ended clause still takes the old line's place
    (the merge, ``yak.memory.forms.merge``). A sentence of only such clauses is kept whole."""
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
    if len(parts) < 2 or any(len(p.split()) < 3 for p in parts) or not any(map(details, parts)):
        return [sentence]
    return [p.rstrip(".!?,") for p in parts]


# A clause the model quoted from the middle of a sentence ("and the app's dev config has …").
_JOINED = re.compile(r"^(?:and|but|so|or|also|plus)\s+(?=\S)", re.IGNORECASE)


def _capital(clause: str) -> str:
    """A sentence as said, or a clause cut from one made a sentence ("Deploys now go to …"):
    a leading "and", "but"… taken off (the 1.5B model quoted "and the app's dev config has
    REDIS_URL=…" from the middle of a sentence)."""
    bare = _JOINED.sub("", clause)
    if bare != clause:
        clause = bare[0].upper() + bare[1:]
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
    return bool(_REMARK.match(sentence)) and not details(sentence)


def echoes(
    fact: Mapping[str, Any], previous: str, said: Sequence[Passage], sessions: Sequence[str]
) -> bool:
    """Whether a fact restates a line of the document (the same subject both ways) with a quote
    not found in the conversation it names: the 1.5B model rewrote "- DAGs live in dags/ …
    models in models/." as "DAGs live in dags/ … models in models." quoting an earlier
    conversation, and the changed line lost its path."""
    text = str(fact["text"])
    if quote_speaker(str(fact.get("quote", "")), fact["conversation"], sessions, said) is not None:
        return False
    return any(
        restated(line, [text]) and restated(text, [line])
        for line in previous.splitlines()
        if line.strip() and not is_structure(line)
    )


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
    quote = without_speaker(str(item.get("quote", ""))).strip()
    return bool(_FORGET.match(quote)) and (
        quote_speaker(quote, item["conversation"], sessions, said) is Speaker.USER
    )


def aim_forgets(
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


def requests_to_forget(said: Sequence[Passage], sessions: Sequence[str]) -> list[Mapping[str, Any]]:
    """Each request to forget a person made in the conversations, as a forget without its
    line (:func:`aim_forgets` aims it): the 1.5B model answered "Forget the S3 bucket name, it
    changes per environment." with the fact "Removed." quoting the conversation's title."""
    return [
        {"conversation": sessions.index(p.session_id) + 1, "quote": p.text}
        for p in said
        if p.speaker is Speaker.USER
        and not p.quoted
        and p.session_id in sessions
        and _FORGET.match(p.text.strip())
    ]


# Chatter: a sentence of at most this many words that gives no detail ("No, just venting.").
_CHATTER_WORDS = 3


def is_chatter(text: str) -> bool:
    """Whether ``text`` is a short remark with no detail (``details`` in
    :mod:`yak.memory.judging.words`): at most three words, no name, number or path ("No, just
    venting.", "Dropped."). A fact whose text is one is dropped under
    :attr:`Habit.CHATTER_AS_FACT`; "- Python 3.12." or "- No deploys on Fridays." give a detail
    and stay."""
    words = re.sub(r"^\s*[-*+]\s+", "", text).split()
    return len(words) <= _CHATTER_WORDS and not details(text)
