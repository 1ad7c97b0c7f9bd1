"""The size limits on what Yak sends and stores, in one place, each with its reason ("Size
limits" in docs/agent.md; the README states them).

Every limit is checked *before* the work it bounds: a chat message over its limit is refused
with one sentence before anything is stored or sent; a file the agent reads is read up to a
bound and cut with a marker the model sees; a conversation folded into a refresh is cut before
the secret scan, so no single message can make a refresh spend more than a moment redacting.
Sizes are in characters (Python ``str`` length) unless the name says bytes.
"""

from __future__ import annotations

from yak.errors import UsageError

CHAT_MESSAGE_CHARS = 100_000
"""A message typed in the window, given to ``yak ask`` (argument or stdin) or sent to the model
by any front end. About 25,000 tokens: a pasted log or a long source file fits, an eighth of a
200,000-token context window, so a conversation still holds several such messages, the memory and
the replies."""

DISPLAY_MESSAGE_CHARS = 20_000
"""What the window renders of one message at once; a longer one shows its first part, with Show
more (another part, up to ``CHAT_MESSAGE_CHARS``) and Copy whole message. Laying out text is
what stalls the window: 20,000 characters take a few tens of milliseconds, one line of 100,000
half a second, 20 MB minutes."""

FILE_READ_BYTES = 10_000_000
"""What ``read_file`` takes from disk at most. Enough for any source file; a larger file (a
database dump, a log) is read only this far, so one call never loads gigabytes."""

TOOL_OUTPUT_CHARS = 50_000
"""What any tool result (a file read included) gives the model at most, its head and tail
around a ``[… N characters cut …]`` marker; about 12,500 tokens."""

READ_LINES = 2_000
"""Lines returned by one ``read_file`` call; the result says how to read on (``offset``)."""

FOLD_MESSAGE_CHARS = 4_000
"""What a refresh keeps of one message: its head and tail around a ``[… N characters cut …]``
marker. Memory is a brief: the start and end of a long message carry what it was about."""

FOLD_BUDGET_CHARS = 48_000
"""What a refresh sends of all its conversations together; the oldest messages are dropped
beyond it (with a marker). About 12,000 tokens: a small memory model's window holds it, the
document and the instructions."""

REDACT_WINDOW_CHARS = 4 * FOLD_MESSAGE_CHARS
"""What of a long message the secret scan reads before the refresh cuts it to
``FOLD_MESSAGE_CHARS``: its head and tail, this much together. The scan takes time in proportion
to its input (about a second per megabyte), so a 50 MB message would otherwise cost a minute at
every refresh; the margin around the part the model gets is far wider than any secret (a
private key block is under 4,000 characters), so no secret is left half-visible at a cut."""

AGENT_REASON_CHARS = 2_000
"""What of an agent's reason for a memory proposal (MCP ``memory_propose``) is read; it is shown
shortened to 300 characters, and its text or document is refused over the memory ceiling before
any scan (``yak.memory.inbox.review``)."""

SEARCH_QUERY_CHARS = 1_000
"""A memory search's query (MCP ``memory_search``). A line of a memory document is far
shorter, so a longer query can match nothing; it is refused before the document is read, and
never echoed back."""


class TooLong(UsageError):
    """Input over one of the limits above; nothing was stored or sent.

    Attributes:
        chars: the input's size in characters.
        limit: the limit it is over, in characters.
    """

    def __init__(self, sentence: str, *, chars: int, limit: int) -> None:
        super().__init__(sentence)
        self.chars = chars
        self.limit = limit


def check_chat_message(text: str, *, noun: str = "message") -> None:
    """Refuse a chat message over ``CHAT_MESSAGE_CHARS`` characters.

    Args:
        text: the message as the user gave it.
        noun: what the front end calls it (``"message"``, ``"prompt"``).

    Raises:
        TooLong: the sentence says the size, the limit and that nothing was sent.
    """
    if len(text) > CHAT_MESSAGE_CHARS:
        raise TooLong(
            too_long_sentence(noun, len(text), CHAT_MESSAGE_CHARS),
            chars=len(text),
            limit=CHAT_MESSAGE_CHARS,
        )


def too_long_sentence(noun: str, chars: int, limit: int) -> str:
    """``"The message has 52,428,800 characters; the limit is 100,000 (about 25,000 tokens):
    nothing was sent or stored. Attach less, or point the agent at a file to read instead."``"""
    return (
        f"The {noun} has {chars:,} characters; the limit is {limit:,} (about "
        f"{limit // 4:,} tokens): nothing was sent or stored. Send a shorter {noun}, or save the "
        "text in a file of the workspace and ask the agent to read it."
    )


def paste_too_long_sentence(pasted: int, total: int) -> str:
    """The window's sentence for a paste (or drop) of ``pasted`` characters that would make the
    message ``total`` characters, over ``CHAT_MESSAGE_CHARS``: it was not inserted."""
    return (
        f"The pasted text ({pasted:,} characters) would make the message {total:,} characters; "
        f"the limit is {CHAT_MESSAGE_CHARS:,} (about {CHAT_MESSAGE_CHARS // 4:,} tokens), so it "
        "was not pasted. Save the text in a file of the workspace and ask the agent to read it."
    )
