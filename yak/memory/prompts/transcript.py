"""Format unfolded conversation messages into the input of a memory rewrite ("The refresh" in
docs/refresh.md).

Pure: no I/O. The rules:

- every message given, oldest first across all sessions; each session is labelled where its
  messages start (``--- conversation 2: "Fix the lint setup" ---``);
- user and assistant text are kept; each tool call becomes one short line
  (``[tool: read_file src/app.py]``); tool results are never included;
- a message over ``MESSAGE_LIMIT`` characters keeps its head and tail around
  ``[… N characters cut …]``; before the secret scan, a message is first cut to its head and
  tail within ``REDACT_WINDOW_CHARS`` (:func:`scan_window`), so a huge message costs the scan no
  more than a long one (``yak.limits``);
- over a total budget of ``BUDGET`` characters the **oldest** messages are dropped and a
  ``[… N earlier messages dropped …]`` line says so.

Watermarks: the result names, per session, the last message it covers. Messages dropped over the
budget count as covered: the newest facts matter most, and leaving them unfolded would make every
later refresh drop them again while they block nothing; the outcome carries the flag
``dropped_over_budget`` so the user can see it happened. Messages with nothing to say (a user
message made only of tool results) are covered too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from yak.domain import ChatMessage
from yak.limits import FOLD_BUDGET_CHARS, FOLD_MESSAGE_CHARS, REDACT_WINDOW_CHARS
from yak.text import head_and_tail, plural, tool_target

MESSAGE_LIMIT = FOLD_MESSAGE_CHARS  # characters per message before head-and-tail cutting
BUDGET = FOLD_BUDGET_CHARS  # characters for the whole transcript
TOOL_TARGET_LIMIT = 80  # characters of a tool call's target

Redactor = Callable[[str], tuple[str, tuple[str, ...]]]


@dataclass(frozen=True)
class Transcript:
    """The rewrite input and what it covers.

    Attributes:
        text: the formatted conversation ("" when no message has anything to say).
        watermarks: ``{session_id: id of the last message covered}``, every message given
            included (kept, cut, dropped or empty); advance these when the rewrite is applied.
        session_ids: the sessions covered, in order of their first message.
        titles: each covered session's title as its label shows it (redacted, white space
            folded; ``""`` for none), in the order of ``session_ids``: a tool call that writes
            one as a fact's text copied the request, not the conversation.
        included: messages whose text is in ``text``.
        dropped: oldest messages left out over the budget.
        cut: messages shortened head-and-tail.
        flags: ``dropped_over_budget``, ``cut_long_message`` and the redactor's findings.
    """

    text: str
    watermarks: dict[str, str]
    session_ids: tuple[str, ...]
    included: int
    dropped: int
    cut: int
    flags: tuple[str, ...]
    titles: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when there is nothing to send to the model."""
        return not self.text


def tool_call_line(block: Mapping[str, object]) -> str:
    """One short line for a ``tool_use`` block: ``[tool: read_file src/app.py]``.

    The target is :func:`yak.text.tool_target` of the input, at most ``TOOL_TARGET_LIMIT``
    characters (longer targets end with ``…``).
    """
    name = str(block.get("name") or "tool")
    target = tool_target(block.get("input"), TOOL_TARGET_LIMIT)
    return f"[tool: {name} {target}]" if target else f"[tool: {name}]"


def message_body(message: ChatMessage) -> str:
    """The text of a message as the rewrite sees it: text blocks, tool calls as one line each,
    no tool results. ``""`` when nothing is left."""
    parts: list[str] = []
    for block in message.content:
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text") or "").strip()
            if text:
                parts.append(text)
        elif kind == "tool_use":
            parts.append(tool_call_line(block))
        # tool_result, images and anything else are never sent
    return "\n".join(parts)


HEAD_SHARE = 0.6  # of a long message kept, the share from its head


def scan_window(text: str) -> str:
    """The part of ``text`` the secret scan reads: all of it up to ``REDACT_WINDOW_CHARS``
    characters, else its head and tail (in the same shares as :func:`cut_long`) around a
    ``[… N characters cut …]`` marker.

    The later cut to ``MESSAGE_LIMIT`` falls well inside both kept ends, so a secret that
    straddles this cut is never in what the model gets."""
    return head_and_tail(text, REDACT_WINDOW_CHARS, head_share=HEAD_SHARE)


def cut_long(text: str, limit: int = MESSAGE_LIMIT) -> tuple[str, bool]:
    """Keep the head and tail of ``text`` around a ``[… N characters cut …]`` marker.

    Args:
        text: a message body.
        limit: the most characters to keep, marker included.

    Returns:
        ``(text, was_cut)``; the result is at most ``limit`` characters.
    """
    if len(text) <= limit:
        return text, False
    return head_and_tail(text, limit, head_share=HEAD_SHARE), True


def format_transcript(
    messages: Iterable[ChatMessage],
    *,
    session_titles: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
    message_limit: int = MESSAGE_LIMIT,
    budget: int = BUDGET,
) -> Transcript:
    """Format messages into the conversation part of a rewrite's input.

    Args:
        messages: the unfolded messages of one workspace (any order; sorted by id here, which
            is creation order across sessions).
        session_titles: ``{session_id: title}`` for the session labels.
        redactor: applied to each message body (and title) *before* cutting, so a secret is
            never left half-visible at a cut; its findings become flags.
        message_limit: characters per message before head-and-tail cutting.
        budget: characters for the whole transcript; the oldest messages are dropped beyond it.

    Returns:
        A :class:`Transcript`.
    """
    ordered = sorted(messages, key=lambda m: m.id)
    titles = dict(session_titles or {})
    flags: list[str] = []

    def clean(text: str) -> str:
        if redactor is None:
            return text
        redacted, found = redactor(scan_window(text))
        for flag in found:
            if flag not in flags:
                flags.append(flag)
        return redacted

    watermarks: dict[str, str] = {}
    session_order: list[str] = []
    for message in ordered:
        if message.session_id not in watermarks:
            session_order.append(message.session_id)
        watermarks[message.session_id] = message.id  # ascending ids: the last one wins

    numbers = {sid: i for i, sid in enumerate(session_order, start=1)}
    bodies = [(m.session_id, m.role, body) for m in ordered if (body := message_body(m))]
    labels = {sid: _session_label(numbers[sid], titles.get(sid, "")) for sid in numbers}
    # Choose the kept messages on the raw sizes first, so a long history (``--rebuild``) is not
    # redacted in full only to be dropped; redaction changes sizes a little, so the choice is
    # made again on the redacted entries below.
    rough = [(sid, f"{role}: {cut_long(body, message_limit)[0]}") for sid, role, body in bodies]
    start = max(_first_kept(rough, labels, budget) - 1, 0)
    entries: list[tuple[str, str]] = []  # (session_id, formatted message)
    cut_flags: list[bool] = []
    for session_id, role, body in bodies[start:]:
        text, was_cut = cut_long(clean(body), message_limit)
        entries.append((session_id, f"{role}: {text}"))
        cut_flags.append(was_cut)
    shown = {sid: " ".join(clean(titles.get(sid, "")).split()) for sid in numbers}
    headers = {sid: _session_label(numbers[sid], shown[sid]) for sid in numbers}
    kept_from = _first_kept(entries, headers, budget, already_dropped=start)
    entries = entries[kept_from:]
    cut_count = sum(cut_flags[kept_from:])
    dropped = start + kept_from
    parts: list[str] = []
    if dropped:
        parts.append(f"[… {plural(dropped, 'earlier message')} dropped …]")
    previous_session = None
    for session_id, entry in entries:
        if session_id != previous_session:
            parts.append(headers[session_id])
            previous_session = session_id
        parts.append(entry)
    if cut_count:
        flags.append("cut_long_message")
    if dropped:
        flags.append("dropped_over_budget")
    return Transcript(
        text="\n\n".join(parts),
        watermarks=watermarks,
        session_ids=tuple(session_order),
        included=len(entries),
        dropped=dropped,
        cut=cut_count,
        flags=tuple(flags),
        titles=tuple(shown[sid] for sid in session_order),
    )


def _session_label(number: int, title: str) -> str:
    title = " ".join(title.split())
    if title:
        return f'--- conversation {number}: "{title}" ---'
    return f"--- conversation {number} ---"


def _first_kept(
    entries: list[tuple[str, str]],
    headers: Mapping[str, str],
    budget: int,
    *,
    already_dropped: int = 0,
) -> int:
    """Index of the oldest entry kept so that the newest entries fit the budget.

    The kept entries are always a suffix; the newest one is always kept. ``already_dropped``
    older messages are not in ``entries`` but count in the drop marker.
    """
    separator = 2  # "\n\n" between parts
    total = 0
    for index in range(len(entries) - 1, -1, -1):
        session_id, entry = entries[index]
        size = len(entry) + separator
        # A label precedes this entry when the next newer kept one is in another session,
        # and this entry's own label is needed if it ends up first: count both conservatively.
        if index + 1 < len(entries) and entries[index + 1][0] != session_id:
            size += len(headers[entries[index + 1][0]]) + separator
        head_label = len(headers[session_id]) + separator
        dropped = already_dropped + index
        marker = len(f"[… {dropped} earlier messages dropped …]") + separator if dropped else 0
        if index < len(entries) - 1 and total + size + head_label + marker > budget:
            return index + 1
        total += size
    return 0
