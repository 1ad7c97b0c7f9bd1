"""Pure rules for the text of a memory document: line endings, the ceiling, decoding imported
bytes, and export formats ("The memory document" and "The command line" in
docs/cli.md). No I/O here; the memory service and the CLI call these so the same rule
holds on every path.
"""

from __future__ import annotations

import codecs
import json
import os
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, BinaryIO

from yak.domain import (
    MAX_CHARS,
    MAX_LINES,
    MemoryDocument,
    RefreshAttempt,
    Revision,
    Workspace,
    count_lines,
)
from yak.errors import CeilingExceeded, UsageError

# Export formats and the file suffix each gets by default (``yak memory export`` and Settings'
# Export…); a file named ``*.json`` or ``*.md``/``*.markdown`` asks for that format.
EXPORT_SUFFIXES = {"text": ".txt", "markdown": ".md", "json": ".json"}
EXPORT_FORMATS = tuple(EXPORT_SUFFIXES)
MARKDOWN_SUFFIXES = (".md", ".markdown")

# Byte-order marks, longest first: the UTF-32 LE mark starts with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Without a BOM, UTF-16/32 is only guessed when at least this share of the decoded characters
# look like text (letters, marks, numbers, punctuation, symbols, spaces, tab/newline).
_PLAUSIBLE_SHARE = 0.95


def normalize_newlines(text: str) -> str:
    """Return ``text`` with CRLF and lone CR turned into LF (the stored form)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check_text(text: str, *, what: str = "The memory document") -> None:
    """Refuse text a plain-text document cannot hold.

    Raises:
        UsageError: ``text`` contains a NUL character (a sign of binary data or a wrong encoding).
    """
    if "\0" in text:
        raise UsageError(
            f"{what} contains NUL characters, so it is not plain text; nothing was saved."
        )


def over_ceiling_words(lines: int, chars: int) -> str | None:
    """What of a document of ``lines`` lines and ``chars`` characters is over the ceiling
    (``MAX_LINES`` lines, ``MAX_CHARS`` characters), with the limit: ``212 lines (limit 200)``,
    ``26,100 characters (limit 25,000)``, or both joined by "and"; ``None`` when it fits. Every
    sentence about the ceiling (a hand save, a reply, a proposal) says it in these words."""
    over = [f"{lines:,} lines (limit {MAX_LINES:,})"] if lines > MAX_LINES else []
    over += [f"{chars:,} characters (limit {MAX_CHARS:,})"] if chars > MAX_CHARS else []
    return " and ".join(over) or None


def ceiling_message(lines: int, chars: int) -> str | None:
    """The sentence refusing a hand-written document over the ceiling
    (:func:`over_ceiling_words`), or ``None`` when it fits."""
    over = over_ceiling_words(lines, chars)
    if over is None:
        return None
    return f"The memory document has {over}. Nothing was saved — shorten it and save again."


def check_ceiling(text: str) -> None:
    """Refuse a document over the ceiling; nothing is ever cut.

    Args:
        text: the document with LF line endings.

    Raises:
        CeilingExceeded: more than ``MAX_LINES`` lines or more than ``MAX_CHARS`` characters.
    """
    lines, chars = count_lines(text), len(text)
    message = ceiling_message(lines, chars)
    if message:
        raise CeilingExceeded(message, lines=lines, chars=chars)


def prepare_hand_text(text: str) -> str:
    """Normalize and check text a human wrote: LF endings, no NUL, within the ceiling.

    Returns:
        The text as it will be stored.

    Raises:
        UsageError: NUL characters.
        CeilingExceeded: over ``MAX_LINES`` lines or ``MAX_CHARS`` characters.
    """
    text = normalize_newlines(text)
    check_text(text)
    check_ceiling(text)
    return text


def merge_flags(*groups: Sequence[str]) -> tuple[str, ...]:
    """A revision's, attempt's or proposal's flags from several groups: each flag once, in the
    order first given."""
    return tuple(dict.fromkeys(flag for group in groups for flag in group))


def decode_utf8(data: bytes, *, what: str = "The input") -> str:
    """Decode text given as UTF-8 (``yak memory set``, the editor's file); a leading UTF-8 BOM
    is dropped and line endings become LF.

    Raises:
        UsageError: the bytes are not valid UTF-8, or the text contains NUL characters.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{what} is not UTF-8 text (invalid byte at offset {exc.start}); nothing was saved."
        ) from None
    text = normalize_newlines(text)
    check_text(text, what=what)
    return text


def decode_import(data: bytes, *, what: str = "The file") -> str:
    """Decode an imported file: UTF-8, UTF-16 or UTF-32, with or without a BOM; CRLF/CR → LF;
    a leading U+FEFF left after decoding (a doubled BOM) is dropped.

    With a BOM the encoding is the BOM's. Without one, valid UTF-8 without NUL characters is
    UTF-8; otherwise (ASCII-heavy UTF-16/32 is full of zero bytes) each of UTF-32 LE/BE and
    UTF-16 LE/BE is tried and the one whose characters look most like text wins, if at least
    ``_PLAUSIBLE_SHARE`` of them do and it has a space or a line break somewhere (binary data
    that decodes to valid characters makes one long run without any). Text without zero bytes
    that is not UTF-8 is not guessed at.
    Text read through a BOM must look like text too: binary data that happens to start with
    a BOM is refused.

    Args:
        data: the file's bytes.
        what: how to name the input in an error message.

    Returns:
        The text with LF line endings.

    Raises:
        UsageError: the bytes are not UTF-8/UTF-16/UTF-32 text, or decode to NUL characters.
    """
    refused = (
        f"{what} is not UTF-8/UTF-16/UTF-32 text (it looks like binary data or another "
        "encoding); nothing was imported."
    )
    with_bom = False
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            with_bom = True
            try:
                text = data[len(bom) :].decode(encoding)
            except UnicodeDecodeError:
                raise UsageError(refused) from None
            break
    else:
        guessed = _decode_without_bom(data)
        if guessed is None:
            raise UsageError(refused)
        text = guessed
    # A second BOM (an editor that added one to text that had one) is invisible junk.
    text = normalize_newlines(text.removeprefix("\ufeff"))
    if "\0" in text or (with_bom and text and _plausible_share(text) < _PLAUSIBLE_SHARE):
        raise UsageError(refused)
    return text


EMPTY_INPUT_MESSAGE = (
    "The input is empty; nothing was saved. To empty the memory, use yak memory delete."
)
EXPORT_JSON_FORMAT = "yak-memory/1"  # the "format" marker of a JSON export
# A Markdown export's title line starts with this, so an import tells it from a file's own title.
EXPORT_TITLE = "# Yak memory: "


def check_not_empty(text: str) -> None:
    """Refuse input that would silently wipe the document (``set``, ``import``).

    Args:
        text: the decoded input.

    Raises:
        UsageError: ``text`` is empty or only whitespace.
    """
    if not text.strip():
        raise UsageError(EMPTY_INPUT_MESSAGE)


MAX_INPUT_BYTES = 1 << 20  # 1 MiB: far more than MAX_CHARS characters take in any encoding


def read_capped(stream: BinaryIO, what: str) -> bytes:
    """At most ``MAX_INPUT_BYTES`` bytes of ``stream`` (a file, stdin), so a huge input (a
    runaway pipe, ``/dev/zero``) is refused before it fills the memory of the process.

    Raises:
        CeilingExceeded: there is more than that; nothing is read past it.
    """
    data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise CeilingExceeded(
            f"{what} is over {MAX_INPUT_BYTES // 1024:,} KiB, far more than a memory document "
            f"holds ({MAX_CHARS:,} characters); nothing was changed.",
            lines=0,
            chars=len(data),
        )
    return data


def unwrap_export(text: str, source_name: str | None = None) -> str:
    """The document inside one of Yak's own exports, or ``text`` itself.

    A JSON export (an object whose ``"format"`` is ``EXPORT_JSON_FORMAT``) gives its ``content``.
    A Markdown export gives what follows its title: only when ``source_name`` ends in ``.md`` or
    ``.markdown`` and the text starts with Yak's export title line (``# Yak memory: <folder>``)
    followed by a blank line. Anything else is returned unchanged: another Markdown file's own
    ``# Title`` (an ``AGENTS.md``) is part of what it says.

    Args:
        text: the decoded file, LF line endings.
        source_name: the imported file's name, if any.

    Returns:
        The document to store, LF line endings.

    Raises:
        UsageError: a ``.json`` file that is not one of Yak's JSON exports (another tool's
            JSON, or an export damaged by hand): its raw text would replace the memory with
            something no one meant as a document. From stdin or under another name, it
            is kept as text.
    """
    if text.lstrip().startswith("{"):
        try:
            payload = json.loads(text)
        except ValueError:
            payload = None
        if (
            isinstance(payload, dict)
            and payload.get("format") == EXPORT_JSON_FORMAT
            and isinstance(payload.get("content"), str)
        ):
            return normalize_newlines(payload["content"])
    name = (source_name or "").lower()
    if name.endswith(".json"):
        raise UsageError(
            f"{source_name} is not a Yak JSON export (an object with "
            f'"format": "{EXPORT_JSON_FORMAT}" and the document as "content"); nothing was '
            "changed. To keep its raw text as the document, import it from stdin or under a "
            "name not ending in .json."
        )
    if name.endswith(MARKDOWN_SUFFIXES) and text.startswith(EXPORT_TITLE):
        title, newline, rest = text.partition("\n")
        if newline and rest.startswith("\n") and title[len(EXPORT_TITLE) :].strip():
            return rest[1:]
    return text


def _decode_without_bom(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and "\0" not in text:
        return text
    if b"\0" not in data:
        return None
    best: tuple[float, str] | None = None
    for encoding in ("utf-32-le", "utf-32-be", "utf-16-le", "utf-16-be"):
        try:
            candidate = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if not candidate or "\0" in candidate:
            continue
        share = _plausible_share(candidate)
        if best is None or share > best[0]:
            best = (share, candidate)
    if best is None or best[0] < _PLAUSIBLE_SHARE:
        return None
    if not any(ch.isspace() for ch in best[1]):  # binary noise decodes to one long "word"
        return None
    return best[1]


def _plausible_share(text: str) -> float:
    """The share of characters that look like text rather than noise (controls, unassigned,
    private use, surrogates)."""
    good = sum(1 for ch in text if ch in "\t\n\r" or unicodedata.category(ch)[0] in "LMNPSZ")
    return good / len(text)


# --- export ---------------------------------------------------------------------------------
def iso_utc(moment: datetime | None) -> str | None:
    """ISO-8601 UTC with a ``Z`` (``2026-11-30T03:09:18Z``), or ``None``."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def default_export_name(workspace: Workspace, fmt: str) -> str:
    """A file name for exporting ``workspace``'s memory as ``fmt``, e.g. ``proj-memory.md``
    (``.txt`` for an unknown format)."""
    return f"{workspace.name}-memory{EXPORT_SUFFIXES.get(fmt, '.txt')}"


def export_format_for(file_name: str) -> str:
    """The export format a file's name asks for: ``json`` for ``*.json`` (what ``import``
    reads back as an export), ``markdown`` for ``*.md`` and ``*.markdown``, else ``text``
    (also for ``-``, standard output)."""
    suffix = os.path.splitext(file_name)[1].lower() if file_name != "-" else ""
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    return "json" if suffix == EXPORT_SUFFIXES["json"] else "text"


def export_text(document: MemoryDocument) -> bytes:
    """Exactly the document: UTF-8 without BOM, LF endings."""
    return document.content.encode("utf-8")


def export_markdown(workspace: Workspace, document: MemoryDocument) -> bytes:
    """A ``# Yak memory: <folder name>`` title line, a blank line, then the document, UTF-8."""
    return f"{EXPORT_TITLE}{workspace.name}\n\n{document.content}".encode()


def document_json(workspace: Workspace, document: MemoryDocument) -> dict[str, Any]:
    """The ``show --json`` object: workspace path and id, version, lines, chars, tokens (an
    estimate: ``MemoryDocument.tokens``), flags, updated_at (ISO-8601 UTC or null) and
    content."""
    return {
        "workspace": workspace.path,
        "workspace_id": workspace.id,
        "version": document.version,
        "lines": document.lines,
        "chars": document.chars,
        "tokens": document.tokens,
        "flags": list(document.flags),
        "updated_at": iso_utc(document.updated_at),
        "content": document.content,
    }


def revision_json(revision: Revision, *, with_content: bool = False) -> dict[str, Any]:
    """A revision as ``history --json`` shows it (``id`` is what ``restore`` takes)."""
    item: dict[str, Any] = {
        "id": revision.id,
        "version": revision.version,
        "source": str(revision.source),
        "lines": revision.lines,
        "chars": revision.chars,
        "added": revision.added,
        "removed": revision.removed,
        "flags": list(revision.flags),
        "created_at": iso_utc(revision.created_at),
    }
    if with_content:
        item.update(
            model=revision.model,
            session_ids=list(revision.session_ids),
            restored_from=revision.restored_from,
            content=revision.content,
        )
    return item


def attempt_json(attempt: RefreshAttempt) -> dict[str, Any]:
    """A refresh attempt as ``history --refreshes --json`` shows it, without the reply itself
    (``has_reply``: a non-empty reply was kept, which ``show --reply ID`` prints). An attempt
    that waited for review and was decided since has its proposal's outcome as ``status``
    (``accepted``, ``edited_accepted``, ``rejected``, ``superseded``, ``withdrawn``; "The
    inbox" in docs/memory.md), ``result_version`` the version it became when accepted, and
    ``superseded_by`` the newer proposal that superseded it. ``forms`` are the rewrite forms its
    replies were read in, in order (``["tool", "edits"]`` after a fallback; ``[]`` with no
    model call)."""
    outcome = attempt.outcome
    return {
        "id": attempt.id,
        "status": str(attempt.status) if outcome is None else outcome.outcome_code,
        "waited_for_review": attempt.proposal_id is not None,
        "reason": attempt.reason,
        "base_version": attempt.base_version,
        "result_version": attempt.result_version,
        "model": attempt.model,
        "input_tokens": attempt.usage.input_tokens,
        "output_tokens": attempt.usage.output_tokens,
        "duration_s": round(attempt.duration_s, 3),
        "flags": list(attempt.flags),
        "forms": [str(form) for form in attempt.forms],
        "created_at": iso_utc(attempt.created_at),
        "has_reply": bool(attempt.reply),
        "added": attempt.added,
        "removed": attempt.removed,
        "proposal": attempt.proposal_id,
        "superseded_by": attempt.superseded_by,
    }


def export_json(
    workspace: Workspace,
    document: MemoryDocument,
    history: Sequence[Revision],
    *,
    exported_at: datetime,
) -> bytes:
    """The document with its metadata and its history (revisions newest first, with content),
    as indented UTF-8 JSON ending with a newline."""
    payload = {
        "format": EXPORT_JSON_FORMAT,
        "exported_at": iso_utc(exported_at),
        **document_json(workspace, document),
        "memory_enabled": workspace.memory_enabled,
        "history": [revision_json(r, with_content=True) for r in history],
    }
    return (json.dumps(payload, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def export_document(
    workspace: Workspace,
    document: MemoryDocument,
    history: Sequence[Revision],
    fmt: str,
    *,
    exported_at: datetime,
) -> bytes:
    """Format a document for export as ``text``, ``markdown`` or ``json``.

    Raises:
        UsageError: another format.
    """
    if fmt == "text":
        return export_text(document)
    if fmt == "markdown":
        return export_markdown(workspace, document)
    if fmt == "json":
        return export_json(workspace, document, history, exported_at=exported_at)
    raise UsageError(f"Unknown export format {fmt!r}; use one of: {', '.join(EXPORT_FORMATS)}.")
