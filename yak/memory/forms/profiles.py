"""A memory model's habits, as data ("The rewrite forms" in docs/refresh.md). Pure.

Some models mis-write a free-text reply in ways one can read back safely; reading them back is
a tolerance, and a tolerance for one model's habit is never on for every model. Each tolerance
here names the habit, why reading it back is safe, and the model it was measured on; a
:class:`Profile` lists the tolerances a model gets. The free-text readers
(``yak.memory.forms.text``) apply a tolerance only where the profile asks for it; the tool form
needs none for the reply's shape (the schema holds it), only for what a small model puts in it
(:attr:`Habit.RUN_ON_FACT`, :attr:`Habit.STRAY_TEXT`, :attr:`Habit.CHATTER_AS_FACT`,
:attr:`Habit.FORGET_AS_FACT`).

The profile comes from the setting ``memory_profile`` (``YAK_MEMORY_PROFILE``): ``auto`` (the
default) picks it by the memory model's name (:data:`SMALL_MODELS`), or a profile by its name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Habit(StrEnum):
    """A way a model mis-writes a free-text reply that Yak can read back."""

    NUMBERED_LINES_KEPT = "numbered_lines_kept"
    DOCUMENT_WRITTEN_ON = "document_written_on"
    RUN_ON_FACT = "run_on_fact"
    STRAY_TEXT = "stray_text"
    CHATTER_AS_FACT = "chatter_as_fact"
    FORGET_AS_FACT = "forget_as_fact"
    RUNAWAY_CALL = "runaway_call"
    LINES_PAST_THE_END = "lines_past_the_end"


@dataclass(frozen=True)
class Tolerance:
    """One habit read back: why it is safe, and the model it was seen with."""

    habit: Habit
    reason: str
    measured_on: str


TOLERANCES: tuple[Tolerance, ...] = (
    Tolerance(
        Habit.NUMBERED_LINES_KEPT,
        "Asked for the whole document, the model sent the numbered document back with a new "
        "fact below it; a numbered line showing the document's own line under its own number "
        "is that line kept (never new content), so the fact is not lost to the floor.",
        "Qwen2.5-Coder-0.5B-Instruct (llama.cpp), edits form, four refreshes of one scenario",
    ),
    Tolerance(
        Habit.DOCUMENT_WRITTEN_ON,
        "The model wrote the whole numbered document, then its new facts numbered on after it; "
        "read only when the numbered lines are exactly the document (no line left out, no "
        "gap), the numbers taken off, each new line then checked like any other.",
        "Qwen2.5-Coder-0.5B-Instruct (llama.cpp), edits form",
    ),
    Tolerance(
        Habit.RUN_ON_FACT,
        "Asked for one fact per sentence, the model quoted a whole message of six sentences "
        'and wrote one fact listing the details of all of them ("FastAPI in src/orders_api, '
        'pytest, Python 3.11, the API on 8080, …"); a fact whose details come from several '
        "sentences of its quote becomes one line per such sentence, each the sentence as "
        "said (so each is grounded and verified on its own), never a word the quote lacks.",
        "Qwen2.5-Coder-1.5B-Instruct (llama.cpp, schema held), tool form, web scenario",
    ),
    Tolerance(
        Habit.STRAY_TEXT,
        "The model's quotes were a person's sentences, copied exactly, while its texts strayed "
        "from them: the conversation's title ('etl-01 setup', so a pipeline's setup formed no "
        "line in eight refreshes), a label ('Fly.io' for 'We moved deploys from Heroku to "
        "Fly.io.'), a one-word remark ('Updated.'), a line the document already holds (quoting "
        "'You may push to main directly'), the assistant's reply, or a paraphrase that turned "
        "'Do not run the Xcode build; I run it myself.' into 'Xcode build is run by me.'. A "
        "fact whose quote a person said is read from its quote: each of its sentences that "
        "states something becomes a line as said, checked like any other; a fact quoting only "
        "the assistant's words (an offer the model turned into a standing rule, 'Welcome "
        "back.' beside a copy of a document line) and a title or label whose quote is no "
        "person's add nothing (for every other model a title listed as a "
        "fact is only dropped). The 0.5B model also swapped them: the person's 'Quick hello "
        "before lunch.' as the text, the title of a conversation the request did not hold as "
        "the quote; a fact whose quote is not found but whose text a person said is read from "
        "its text the same way.",
        "Qwen2.5-Coder-1.5B-Instruct (llama.cpp, schema held), tool form, all six scenarios; "
        "Qwen2.5-Coder-0.5B-Instruct, the drift case",
    ),
    Tolerance(
        Habit.CHATTER_AS_FACT,
        'From chats that decided nothing the model listed remarks as facts ("No, just '
        'venting.", "Dropped."), quoted word for word and so grounded; a fact of at most three '
        "words with no name, number or path is dropped (read from its quote when a person "
        "said the quote).",
        "Qwen2.5-Coder-1.5B-Instruct (llama.cpp, schema held), tool form, web scenario and "
        "the drift case",
    ),
    Tolerance(
        Habit.FORGET_AS_FACT,
        'Asked to forget a line ("Forget what I said about SQLAlchemy async sessions"), the '
        'model listed the request as a fact ("Dropped.") and aimed its forget at another line '
        "with the document's own words as the quote; a person's request to forget, verified "
        "in the conversation, is aimed at the one line it names (none or several: left as "
        "it was, and a removal still needs its cause).",
        "Qwen2.5-Coder-1.5B-Instruct (llama.cpp, schema held), tool form, web scenario",
    ),
    Tolerance(
        Habit.RUNAWAY_CALL,
        "Held to the schema, the model once kept listing facts until the 8,192-token output "
        "limit: ten minutes of both cores for one refresh. Its tool calls are asked for at "
        "most TOOL_MAX_TOKENS_SMALL tokens (a call of 40 facts with their quotes fits); a "
        "call cut there stores nothing and its conversations wait for the next refresh. "
        'The 0.5B model\'s edits ran away the same way ("@@ delete 1131", "@@ delete 1133"… '
        "for a 12-line document; the document written out again and again): five to six "
        "minutes of both cores, three times in 30 refreshes. Its edits replies are asked for "
        "at most EDITS_MAX_TOKENS_SMALL tokens, room for the whole numbered document at the "
        "ceiling (read back under DOCUMENT_WRITTEN_ON); a reply cut there stores nothing. "
        "Its whole document, asked after refused edits, ran to the 8,192-token limit for a "
        "short document (twelve minutes): a whole reply gets the same limit, or twice the "
        "document's estimated tokens when that is more.",
        "Qwen2.5-Coder-1.5B-Instruct (llama.cpp, schema held), tool form, web scenario; "
        "Qwen2.5-Coder-0.5B-Instruct, edits form, web, pipeline and desktop scenarios",
    ),
    Tolerance(
        Habit.LINES_PAST_THE_END,
        "On an empty document the model named line 1 as replaced and forgotten, and its retry "
        "did the same; the fallback's edits then stored the assistant's words. A line number "
        "outside the document names no line: it is left out and the rest of the call read "
        "(for every other model the call gets one retry naming the problem).",
        "Qwen2.5-Coder-0.5B-Instruct (llama.cpp, schema held), tool form, a real folder "
        "through yak ask and yak memory refresh",
    ),
)

# The output limits under RUNAWAY_CALL (tokens): a tool call (40 facts with their quotes fit),
# and an edits or whole reply (the numbered document at the 200-line ceiling, about 3,000 tokens,
# fits; a longer document gets twice its estimated tokens, up to REWRITE_MAX_TOKENS).
TOOL_MAX_TOKENS_SMALL = 2048
EDITS_MAX_TOKENS_SMALL = 4096


@dataclass(frozen=True)
class Profile:
    """The tolerances a memory model gets (``habits``)."""

    name: str
    habits: frozenset[Habit] = frozenset()

    def tolerates(self, habit: Habit) -> bool:
        """Whether this profile reads ``habit`` back."""
        return habit in self.habits


PLAIN = Profile("plain")
SMALL_LOCAL = Profile("small-local", frozenset(t.habit for t in TOLERANCES))
PROFILES = {profile.name: profile for profile in (PLAIN, SMALL_LOCAL)}

# Memory model names that get ``small-local`` under ``auto``: the small models the tolerances
# were measured on, by their file or served names (and the local server's own example names).
SMALL_MODELS = re.compile(r"qwen2\.5-coder-(?:0\.5|1\.5)b|^local-(?:small|medium)$", re.IGNORECASE)


def profile_for(setting: str, model: str) -> Profile:
    """The profile of the setting ``memory_profile`` for the memory ``model``: a profile by
    name, or under ``auto`` (and any unknown name) ``small-local`` for a model
    :data:`SMALL_MODELS` names, else ``plain``."""
    if setting in PROFILES:
        return PROFILES[setting]
    return SMALL_LOCAL if SMALL_MODELS.search(model) else PLAIN
