"""What was said: the folded conversations cut into passages ("Grounding" in docs/memory.md).
Pure functions: no I/O.

- :func:`passages` cuts conversations into what was said: each sentence or line of a text
  block, each tool call (its name and target) as one observation; tool results never count.
- :func:`is_wondering` tells a question or a conditional from a decision.
- :func:`plan_clause` cuts the assistant announcing what it will do from what it found.

Lines are compared with passages by their words and tokens (:mod:`yak.memory.judging.words`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from yak.domain import ChatMessage
from yak.evidence import Speaker
from yak.memory.lines import FENCE
from yak.memory.prompts.transcript import scan_window
from yak.text import tool_target

Redactor = Callable[[str], tuple[str, tuple[str, ...]]]

TOOL_TARGET_CHARS = 500  # the longest tool-call target a passage keeps (characters)


@dataclass(frozen=True)
class Passage:
    """One thing said in a folded conversation.

    Attributes:
        session_id: the conversation (``ses_…``).
        message_id: the message (``msg_…``).
        speaker: the person, the assistant, or a tool call the assistant made.
        text: one sentence or line of a message's text (redacted), or for a tool call its
            name and target (``run_command pytest -q``, ``read_file src/app.py``).
        wondering: a question or a conditional ("…?", "could we…", "what if…", "maybe…"),
            or the assistant's plan of its own (:func:`plan_clause`): not decided.
        quoted: pasted or quoted, not the speaker's own words (a file shown after "Here is
            our README:", a block quote, an HTML comment, a fenced block): it counts as said,
            but never as a person typing an instruction.
        source: for a fact of the workspace (``Speaker.WORKSPACE``), where it shows
            (``pyproject.toml``): its evidence quotes that.
    """

    session_id: str
    message_id: str
    speaker: Speaker
    text: str
    wondering: bool
    quoted: bool = False
    source: str = ""


# --- passages -------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_LEAD = re.compile(r"^(?:\s|[-*+>•#]|\d+[.)]\s|\*\*|__)+")
_FILLER = re.compile(r"^(?:(?:so|ok|okay|hmm+|well|also|and|but|btw|then|now|right)\b[,\s]*)+")
_WONDER = re.compile(
    r"^(?:what if|what about|how about|should we|should i|shall we|i wonder|i'm wondering|"
    r"i am wondering|i was wondering|wondering|if we|do you think|is it worth|"
    r"not sure (?:if|whether))\b"
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|someday|some day|one day|eventually|"
    r"just wondering|just curious|thinking out loud|not planning|no plans?|not decided|"
    r"(?:might|could|would)(?!\s+not\b|n['’]t))\b"
)
_TRAILING_CLOSERS = "\"')]}*_` "
_PLAN = re.compile(r"\b(?:i will|i['’]ll|i am going to|i['’]m going to|let me)\b")


def is_wondering(text: str) -> bool:
    """Whether ``text`` (one sentence) asks or supposes rather than decides: it ends with
    ``?``; it starts (after a bullet and a filler like "so," or "hmm") with what if, what
    about, how about, should we, shall we, I wonder, if we, do you think, is it worth, not
    sure if; or it hedges anywhere: could, would or might (not "could not"), maybe,
    perhaps, possibly, probably, someday, eventually, just wondering, thinking out loud,
    not planning, no plans."""
    stripped = text.strip().rstrip(_TRAILING_CLOSERS)
    if stripped.endswith("?"):
        return True
    head = _FILLER.sub("", _LEAD.sub("", stripped).lower())
    return bool(_WONDER.match(head) or _HEDGE.search(head))


def plan_clause(text: str) -> tuple[str, str]:
    """``text`` (one sentence of the assistant) cut where it announces what the assistant will
    do ("I will print ~/.aws/credentials when a deploy fails", "I'll run them as root", "Let me
    check"): ``(what comes before, the plan)``, cut at the last ``,``, ``;`` or ``:`` before
    the plan; ``(text, "")`` when it announces nothing. The plan is the assistant's intent, not
    a fact of the project nor anything a person decided: what it names still counts as said,
    but a line only it backs waits ("only asked about, not decided"); the recap before it ("Got
    it: SwiftUI, Kite.xcodeproj, …, and I will leave the Xcode build to you.") stays what the
    assistant found. Measured: Qwen2.5-Coder-1.5B through the edits form wrote "The deployment
    region is specified in the ~/.aws/credentials file." from the person's region and the
    assistant's announced plan."""
    found = _PLAN.search(text.casefold())
    if found is None:
        return text, ""
    cut = max(text.rfind(mark, 0, found.start()) for mark in ",;:") + 1
    return text[:cut].strip(), text[cut:].strip()


_PASTE_INTRO = re.compile(
    r"\b(?:here is|here's|here are|below is|says|said|reads|read|pasted?|copied|"
    r"contents? of|looks like)\b|\.(?:md|txt|rst|toml|ya?ml|json|cfg|ini)\b",
    re.IGNORECASE,
)
_PASTE_LABEL = re.compile(r"^\s*(?:paste[d]?|quote[d]?|from \S+)\s*:\s*", re.IGNORECASE)
_HEADING = re.compile(r"^\s*#{1,6}\s")


def _sentences(text: str) -> list[tuple[str, bool]]:
    """Each sentence of ``text`` with whether it is quoted rather than the writer's own:
    a fenced block, a ``>`` quote, an HTML comment, a line after ``Paste:``, or everything
    after an introduction ending with a colon ("Here is our CONTRIBUTING.md:", "Our README
    says:") or from a Markdown heading on (a pasted document)."""
    found: list[tuple[str, bool]] = []
    fenced = comment = pasted = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        stripped = line.strip()
        quoted = fenced or comment or pasted or stripped.startswith(">")
        if "<!--" in stripped:
            quoted = True
            comment = "-->" not in stripped[stripped.index("<!--") :]
        elif comment and "-->" in stripped:
            comment = False
        if _PASTE_LABEL.match(stripped):
            quoted = True
        if _HEADING.match(line):
            pasted = quoted = True
        for sentence in _SENTENCE_END.split(stripped):
            sentence = " ".join(sentence.split())
            if any(ch.isalnum() for ch in sentence):
                found.append((sentence, quoted))
        if stripped.endswith(":") and _PASTE_INTRO.search(stripped):
            pasted = True
    return found


def passages(messages: Sequence[ChatMessage], redactor: Redactor | None = None) -> list[Passage]:
    """Everything said in ``messages``, in order, as passages.

    Each ``text`` block is split into lines, and each line into sentences (an assistant's
    sentence that announces a plan into what comes before it and the plan: :func:`plan_clause`);
    each ``tool_use``
    block is one passage (``TOOL_CALL``) of its name and target (:func:`yak.text.tool_target`);
    ``tool_result`` blocks and anything else are ignored (a file's content is not what was
    said). A message of role ``user`` speaks as ``USER``, any other as ``ASSISTANT``.

    Args:
        messages: the folded conversations' messages, oldest first.
        redactor: applied to each block's text (its head and tail within
            ``yak.limits.REDACT_WINDOW_CHARS``: :func:`yak.memory.prompts.transcript.scan_window`)
            before it is split (so a secret over several lines is still found), so a quote
            never holds a secret; ``yak.memory.redaction.scan.redact`` has this shape.

    Returns:
        The passages, in the order they were said.
    """
    found: list[Passage] = []
    for message in messages:
        speaker = Speaker.USER if message.role == "user" else Speaker.ASSISTANT
        for block in message.content:
            kind = block.get("type")
            if kind == "text":
                # What a refresh reads of a long message (yak.limits): a huge one costs no more.
                text = scan_window(str(block.get("text") or ""))
                if redactor is not None:
                    text = redactor(text)[0]
                for sentence, quoted in _sentences(text):
                    head, plan = sentence, ""
                    if speaker is Speaker.ASSISTANT:
                        head, plan = plan_clause(sentence)
                    for said, wondering in ((head, is_wondering(head)), (plan, True)):
                        if any(ch.isalnum() for ch in said):
                            found.append(
                                Passage(
                                    message.session_id,
                                    message.id,
                                    speaker,
                                    said,
                                    wondering,
                                    quoted,
                                )
                            )
            elif kind == "tool_use":
                name = str(block.get("name") or "tool")
                target = tool_target(block.get("input"), TOOL_TARGET_CHARS)
                call = f"{name} {target}" if target else name
                if redactor is not None:
                    call = redactor(call)[0]
                found.append(
                    Passage(message.session_id, message.id, Speaker.TOOL_CALL, call, False)
                )
    return found
