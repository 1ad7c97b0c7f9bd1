"""Pure text rules of the memory document: line endings, the ceiling, decoding imports, exports."""

from __future__ import annotations

import codecs
import json
import random
from datetime import UTC, datetime

import pytest

from yak.domain import (
    MemoryDocument,
    RefreshAttempt,
    RefreshStatus,
    Revision,
    RevisionSource,
    TokenUsage,
    Workspace,
)
from yak.errors import CeilingExceeded, UsageError
from yak.memory.document import (
    attempt_json,
    check_ceiling,
    decode_import,
    decode_utf8,
    export_document,
    normalize_newlines,
)

TEXT = "Project: yak — a café 中文 🦬\r\n- tabs\tand spaces\r\n\r\nlast line\r\n"
EXPECTED = "Project: yak — a café 中文 🦬\n- tabs\tand spaces\n\nlast line\n"


def test_crlf_and_lone_cr_become_lf():
    assert normalize_newlines("a\r\nb\rc\n") == "a\nb\nc\n"
    assert normalize_newlines("\r\n\r\n") == "\n\n"


@pytest.mark.parametrize(
    "text",
    [
        "x\n" * 200,  # 200 lines with a final newline
        "x\n" * 199 + "x",  # 200 lines without one
        "y" * 25_000,  # exactly the character limit
    ],
)
def test_the_ceiling_accepts_exactly_the_limit(text):
    check_ceiling(text)  # no exception


def test_the_ceiling_refuses_201_lines_with_a_message():
    with pytest.raises(CeilingExceeded) as caught:
        check_ceiling("x\n" * 200 + "x")
    assert str(caught.value) == (
        "The memory document has 201 lines (limit 200). "
        "Nothing was saved — shorten it and save again."
    )
    assert (caught.value.lines, caught.value.status, caught.value.exit_code) == (
        201,
        "refused_ceiling",
        3,
    )


def test_the_ceiling_refuses_25001_characters_with_a_message():
    with pytest.raises(CeilingExceeded) as caught:
        check_ceiling("y" * 25_001)
    assert "25,001 characters (limit 25,000)" in str(caught.value)
    assert caught.value.chars == 25_001


@pytest.mark.parametrize(
    "encoding",
    [
        "utf-8",
        "utf-8-sig",
        "utf-16",
        "utf-16-le",
        "utf-16-be",
        "utf-32",
        "utf-32-le",
        "utf-32-be",
    ],
)
def test_import_decodes_unicode_with_or_without_bom(encoding):
    """UTF-8/16/32, with a BOM (``utf-16``/``utf-32``/``utf-8-sig`` write one) or without, decode
    to the same text with LF endings."""
    assert decode_import(TEXT.encode(encoding)) == EXPECTED


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_bomless_utf16_of_short_ascii_lines_is_not_mistaken_for_utf32(encoding):
    """``a\\nb\\n`` in UTF-16 LE is also valid UTF-32 LE (unassigned code points): the guess
    picks the reading that looks like text."""
    assert decode_import("a\nb\nc\nd\n".encode(encoding)) == "a\nb\nc\nd\n"


@pytest.mark.parametrize("boms", [codecs.BOM_UTF16_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF8])
def test_a_bom_followed_by_bytes_of_another_encoding_is_refused(boms):
    with pytest.raises(UsageError, match="is not UTF-8/UTF-16/UTF-32 text"):
        decode_import(boms + b"\xff\xfe\xfd\xd8\x00\xdc\x00\xd8\x00")


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)) * 4,
        random.Random(7).randbytes(4096),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00",
        "café latin-1\n".encode("latin-1"),
        b"text with a NUL\x00 inside\n",
        b"\x00\x01\x02\xff" * 100,  # valid UTF-16 LE of letters and symbols, but no space
    ],
)
def test_bytes_that_are_not_text_are_refused(data):
    """Binary data, another encoding, or NUL characters: refused with a sentence."""
    with pytest.raises(UsageError) as caught:
        decode_import(data, what="notes.bin")
    assert str(caught.value).startswith("notes.bin is not UTF-8/UTF-16/UTF-32 text")
    assert caught.value.exit_code == 2


def test_decode_utf8_drops_a_bom_and_reports_the_bad_offset():
    assert decode_utf8(codecs.BOM_UTF8 + b"a\r\nb") == "a\nb"
    with pytest.raises(UsageError, match=r"is not UTF-8 text \(invalid byte at offset 3\)"):
        decode_utf8(b"abc\xff")
    with pytest.raises(UsageError, match="NUL"):
        decode_utf8(b"a\x00b")


def _fixture():
    moment = datetime(2026, 11, 30, 3, 9, 18, tzinfo=UTC)
    workspace = Workspace(id="ws_" + "0" * 32, path="/home/me/proj", created_at=moment)
    document = MemoryDocument(
        workspace_id=workspace.id,
        content="- one\n- two\n",
        version=2,
        updated_at=moment,
        flags=("redacted",),
    )
    history = [
        Revision(
            id=f"01ABCDEFGHJKMNPQRSTVWXYZ0{i}",
            workspace_id=workspace.id,
            version=i,
            source=RevisionSource.HAND,
            content=text,
            lines=text.count("\n"),
            chars=len(text),
            flags=(),
            created_at=moment,
        )
        for i, text in ((2, "- one\n- two\n"), (1, "- one\n"))
    ]
    return workspace, document, history, moment


def test_export_formats():
    """text is the exact bytes; markdown adds a title line and a blank line; json parses and
    carries metadata and the history with content."""
    workspace, document, history, moment = _fixture()
    assert export_document(workspace, document, history, "text", exported_at=moment) == (
        b"- one\n- two\n"
    )
    assert export_document(workspace, document, history, "markdown", exported_at=moment) == (
        b"# Yak memory: proj\n\n- one\n- two\n"
    )
    data = json.loads(export_document(workspace, document, history, "json", exported_at=moment))
    assert data["content"] == "- one\n- two\n"
    assert (data["workspace"], data["version"], data["lines"], data["flags"]) == (
        "/home/me/proj",
        2,
        2,
        ["redacted"],
    )
    assert data["updated_at"] == "2026-11-30T03:09:18Z"
    assert [r["version"] for r in data["history"]] == [2, 1]
    assert data["history"][1]["content"] == "- one\n"
    with pytest.raises(UsageError, match="Unknown export format 'pdf'"):
        export_document(workspace, document, history, "pdf", exported_at=moment)


@pytest.mark.parametrize("reply, has_reply", [("- kept\n", True), ("", False), (None, False)])
def test_attempt_json_is_the_history_refreshes_contract(reply, has_reply):
    """``history --refreshes --json``: the agreed keys, times in UTC with Z, no reply text, and
    the rewrite forms from the ``form:*`` flags."""
    moment = datetime(2026, 11, 30, 3, 9, 18, tzinfo=UTC)
    attempt = RefreshAttempt(
        id="01ABCDEFGHJKMNPQRSTVWXYZ00",
        workspace_id="ws_x",
        status=RefreshStatus.REFUSED_FLOOR,
        reason="kept 3 of 40 lines",
        base_version=7,
        result_version=None,
        model="m",
        reply=reply,
        usage=TokenUsage(10, 20),
        duration_s=1.23456,
        session_ids=("S",),
        flags=("form:tool", "tool_fallback", "form:edits", "redacted_reply:aws"),
        created_at=moment,
    )
    assert attempt_json(attempt) == {
        "id": "01ABCDEFGHJKMNPQRSTVWXYZ00",
        "status": "refused_floor",
        "waited_for_review": False,
        "reason": "kept 3 of 40 lines",
        "base_version": 7,
        "result_version": None,
        "model": "m",
        "input_tokens": 10,
        "output_tokens": 20,
        "duration_s": 1.235,
        "flags": ["form:tool", "tool_fallback", "form:edits", "redacted_reply:aws"],
        "forms": ["tool", "edits"],  # the forms its replies were read in, in order
        "created_at": "2026-11-30T03:09:18Z",
        "has_reply": has_reply,
        "added": 0,
        "removed": 0,
        "proposal": None,
        "superseded_by": None,
    }


def test_binary_data_behind_a_utf16_bom_is_refused():
    """Bytes that start with a UTF-16 byte-order mark but decode to noise are not text."""
    with pytest.raises(UsageError, match="is not UTF-8/UTF-16/UTF-32 text"):
        decode_import(b"\xff\xfe\x00bad\x80\n", what="bad.bin")
    assert decode_import("- café ✓\n".encode("utf-16")) == "- café ✓\n"
