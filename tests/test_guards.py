"""The rewrite guards (docs/memory.md, "The memory document"): cleaning, normalization
and the verdict.

Each refusal is shown beside the reply that passes, so a guard that refuses everything fails.
"""

from __future__ import annotations

import pytest

from yak.domain import RefreshStatus
from yak.memory.forms.text import clean_reply
from yak.memory.judging.guards import (
    check_rewrite,
    find_placeholder,
    normalize_document,
)
from yak.memory.judging.pipeline import judge_proposal


def doc(lines: int, *, width: int = 40, prefix: str = "fact") -> str:
    """A document of ``lines`` distinct non-blank lines of about ``width`` characters."""
    return "".join(f"- {prefix} {i:03d} " + "x" * (width - 12) + "\n" for i in range(lines))


# --- clean_reply -------------------------------------------------------------------------------


def test_clean_reply_strips_outer_fence_and_chatter_around_it():
    """'Here is…' + fenced document + 'Let me know…' leaves exactly the document."""
    reply = (
        "Here is the updated memory:\n\n```text\nProject: yak\n- lint with ruff\n```\n\n"
        "Let me know if you want any changes."
    )
    assert clean_reply(reply) == "Project: yak\n- lint with ruff"


def test_clean_reply_leaves_a_plain_document_alone():
    """A reply that is only the document comes back as is (minus outer blank lines)."""
    body = "Project: yak\n\nConventions\n- lint with ruff\n- pin Python 3.12"
    assert clean_reply("\n\n" + body + "\n\n") == body


def test_clean_reply_keeps_an_inner_fence_that_does_not_wrap_the_document():
    """A fence in the middle of content is content: nothing is removed around it."""
    body = "Project: yak\n```\nmake test\n```\n- pin Python 3.12"
    assert clean_reply(body) == body


def test_clean_reply_strips_leading_sure_line_and_trailing_changes_paragraph():
    """'Sure! …' before and an 'I have updated…' paragraph after the document go away."""
    reply = (
        "Sure! Here is the document:\nProject: yak\n- lint with ruff\n\n"
        "I have updated the lint decision and removed the flake8 note."
    )
    assert clean_reply(reply) == "Project: yak\n- lint with ruff"


def test_clean_reply_keeps_a_last_paragraph_that_is_content():
    """A closing section of the document is not mistaken for chatter."""
    body = "Project: yak\n\nKnown issues\n- the cache is not invalidated on rename"
    assert clean_reply(body) == body


def test_clean_reply_of_only_chatter_is_empty():
    """A reply that is only a fence with nothing inside leaves nothing."""
    assert clean_reply("```\n```") == ""
    assert clean_reply("   \n") == ""


# --- normalize_document ------------------------------------------------------------------------


def test_normalize_document_changes_only_line_endings_trailing_space_and_control_characters():
    """CRLF → LF, trailing spaces gone, control characters gone, blank lines at either end
    gone, one final newline; blank lines between lines stay as typed, runs included;
    Markdown-looking characters of a line are content and stay."""
    raw = (
        "\n\n## Conventions  \r\n* **ruff** for lint\t \r\n\r\n\r\n \r\nDecisions\x07\n"
        "- pin 3.12\n\n"
    )
    assert normalize_document(raw) == (
        "## Conventions\n* **ruff** for lint\n\n\n\nDecisions\n- pin 3.12\n"
    )


@pytest.mark.parametrize(
    "line", ["**Never** force-push", "# of workers: 4", "+ 1 retry on 502", "* star: kept", "__x__"]
)
def test_normalize_document_never_edits_a_content_line(line):
    """The issue's lines: a reply repeating them word for word keeps them byte for byte (a
    bold marker, a leading '#' or '+' is content: '+ 1' must not become '- 1')."""
    reply = f"Project: yak\n{line}\n- lint with ruff\n"
    assert normalize_document(clean_reply(reply)).encode() == reply.encode()


def test_normalize_document_keeps_every_line_of_a_long_reply():
    """Normalization never truncates: 250 lines in, 250 lines out."""
    raw = doc(250)
    assert normalize_document(raw) == raw


def test_normalize_document_keeps_python_dunder_names_verbatim():
    """``__init__.py`` and ``__main__`` are code, not Markdown bold: a memory that says where the
    entry point is must keep saying it."""
    raw = "- entry point: yak/__main__.py\n- packages need __init__.py; see __all__\n"
    assert normalize_document(raw) == raw


def test_normalize_document_of_blank_is_empty():
    assert normalize_document("\n \n") == ""


# --- placeholders ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "rest unchanged",
        "- … omitted …",
        "(unchanged)",
        "...",
        "…",
        "[previous content]",
        "same as before",
        "- Deployment: same as before",
        "The rest of the document remains unchanged.",
        "(other sections unchanged)",
        "[... rest of the memory ...]",
        "Previous content",
        "- Remaining sections as before",
        "[Rest of the existing content remains unchanged]",
        "Rest of the existing content remains unchanged",
        "(previous sections omitted for brevity)",
        "- [remaining entries unchanged]",
        "<rest of the document as before>",
    ],
)
def test_placeholder_lines_are_found(line):
    """Lines standing for content instead of containing it are found."""
    text = f"Project: yak\n{line}\n- lint with ruff\n"
    assert find_placeholder(text) == (2, line.strip())


@pytest.mark.parametrize(
    "line",
    [
        "- The public API stays unchanged",
        "- Known issue: the cache remains unchanged after reload",
        "- Other tools: ruff, mypy",
        "- Existing migrations must stay unchanged",
        "- Previous decision: use tox",
        "- Run make ... to build",
        "- [auth] the token refresh remains unchanged when offline",
        "(Python 3.12)",
        "[tool] section of pyproject",
    ],
)
def test_real_sentences_with_such_words_are_not_placeholders(line):
    """A fact that uses 'unchanged' or '...' in a sentence is content."""
    assert find_placeholder(f"Project: yak\n{line}\n") is None


# --- check_rewrite -----------------------------------------------------------------------------


def test_empty_reply_is_refused_and_a_real_one_passes():
    previous = doc(10)
    assert check_rewrite(previous, "").status is RefreshStatus.REFUSED_EMPTY
    assert check_rewrite(previous, "  \n").status is RefreshStatus.REFUSED_EMPTY
    assert check_rewrite(previous, previous + "- new fact\n").ok


def test_placeholder_reply_is_refused_with_the_line_in_the_reason():
    previous = doc(20)
    new = doc(19) + "- rest unchanged\n"
    verdict = check_rewrite(previous, new)
    assert verdict.status is RefreshStatus.REFUSED_PLACEHOLDER
    assert "line 20" in verdict.reason and "rest unchanged" in verdict.reason
    assert check_rewrite(previous, doc(19) + "- lint with ruff\n").ok


def test_a_placeholder_like_line_the_document_already_had_is_kept():
    """A lone "..." typed between two lists was accepted before; a rewrite that keeps it is
    applied, and one that adds another such line is refused, naming that one."""
    previous = "## Build\n- make\n...\n## Test\n- pytest\n"
    assert check_rewrite(previous, previous + "- lint with ruff\n").ok
    verdict = check_rewrite(previous, previous + "- rest unchanged\n")
    assert verdict.status is RefreshStatus.REFUSED_PLACEHOLDER
    assert "line 6" in verdict.reason and "rest unchanged" in verdict.reason


def test_a_reply_echoing_the_request_names_the_phrase_it_echoes():
    verdict = check_rewrite(doc(10), doc(10) + "Here is the CURRENT memory document:\n")
    assert verdict.status is RefreshStatus.REFUSED_NOT_DOCUMENT
    assert '("here is the current memory document")' in verdict.reason


def test_ceiling_refuses_over_200_lines_and_passes_200():
    """201 lines is refused with both numbers in the reason; 200 lines is applied."""
    verdict = check_rewrite(doc(180), doc(201))
    assert verdict.status is RefreshStatus.REFUSED_CEILING
    assert "201 lines" in verdict.reason and "200" in verdict.reason
    assert check_rewrite(doc(180), doc(200)).ok


def test_ceiling_refuses_over_25000_characters_and_passes_25000():
    """Few lines but too many characters is over the ceiling too."""
    over = doc(100, width=251)  # 100 lines, 25,100 characters
    verdict = check_rewrite(doc(100), over)
    assert verdict.status is RefreshStatus.REFUSED_CEILING
    assert "25,100 characters" in verdict.reason and "25,000" in verdict.reason
    assert check_rewrite(doc(100), doc(100, width=250)).ok


def test_floor_refuses_150_to_12_lines_and_passes_155():
    """The issue's case: 150 → 12 lines is a collapse (reason gives 12 of 150, 8%);
    150 → 155 lines is applied."""
    verdict = check_rewrite(doc(150), doc(12))
    assert verdict.status is RefreshStatus.REFUSED_FLOOR
    assert verdict.reason.startswith("the reply kept 12 of 150 lines (8%")
    assert check_rewrite(doc(150), doc(155)).ok


def test_floor_refuses_under_100_characters_when_previous_had_more():
    previous = doc(3)  # 3 lines, 120 characters
    verdict = check_rewrite(previous, "Project: yak\n- uses ruff\n- 3.12\n")
    assert verdict.status is RefreshStatus.REFUSED_FLOOR
    assert "characters" in verdict.reason and "100" in verdict.reason
    assert check_rewrite(previous, doc(3, prefix="rule")).ok


def test_floor_refuses_keeping_under_half_the_characters():
    """Same line count but each line far shorter: under 50% of the characters."""
    previous = doc(20, width=100)
    verdict = check_rewrite(previous, doc(20, width=40))
    assert verdict.status is RefreshStatus.REFUSED_FLOOR
    assert "characters" in verdict.reason
    assert check_rewrite(previous, doc(20, width=60)).ok


def test_floor_ratio_is_configurable():
    """With a 0.9 ratio, keeping 80% of the lines is refused; with 0.5 it is applied."""
    assert check_rewrite(doc(100), doc(80), floor_ratio=0.9).status is RefreshStatus.REFUSED_FLOOR
    assert check_rewrite(doc(100), doc(80), floor_ratio=0.5).ok


def test_talk_about_the_document_trips_the_floor():
    """A reply describing the changes instead of being the document is refused."""
    verdict = check_rewrite(doc(40), "I added the decision to lint with ruff.\n")
    assert verdict.status is RefreshStatus.REFUSED_FLOOR


def test_no_floor_for_a_first_document():
    """With no previous document, a short first brief is applied."""
    assert check_rewrite("", "Project: yak\n").ok


# --- replies a tester found stored with their wrapping -----------------------------------------

_TESTER_DOC = "Project: yak\n- lint with ruff\n- pin Python 3.12\n"


def test_leading_chatter_fence_and_plain_i_added_closing_are_all_stripped():
    """'Here is…' + fence + 'I added…' leaves exactly the document, byte for byte."""
    new = _TESTER_DOC + "- tests run with pytest\n"
    reply = (
        f"Here is the updated memory:\n\n```\n{new}```\n\n"
        "I added the pytest fact and kept everything else."
    )
    assert normalize_document(clean_reply(reply)) == new


@pytest.mark.parametrize(
    "closing",
    [
        "I updated the lint rule.",
        "I kept the rest.",
        "I merged the two test notes.",
        "I included the new fact.",
    ],
)
def test_a_closing_paragraph_opening_with_plain_i_verb_is_dropped(closing):
    assert normalize_document(clean_reply(_TESTER_DOC + "\n" + closing)) == _TESTER_DOC


def test_a_closing_paragraph_that_is_content_is_kept():
    """Negative: a last paragraph that merely mentions 'I' later on is the document's."""
    body = _TESTER_DOC + "\nDecisions\n- I/O goes through the store\n"
    assert normalize_document(clean_reply(body)) == body


@pytest.mark.parametrize("tag", ["current-memory", "memory", "document", "MEMORY"])
def test_an_outer_memory_tag_is_stripped(tag):
    reply = f"<{tag}>\n{_TESTER_DOC}</{tag}>\n"
    assert normalize_document(clean_reply(reply)) == _TESTER_DOC


def test_a_tag_inside_a_fence_after_chatter_is_stripped():
    reply = f"Sure, here it is:\n```\n<current-memory>\n{_TESTER_DOC}</current-memory>\n```"
    assert normalize_document(clean_reply(reply)) == _TESTER_DOC


def test_unmatched_or_inner_tags_are_kept():
    """Negative: a tag that does not wrap the whole reply is content."""
    reply = f"<memory>\n{_TESTER_DOC}</document>\n"
    assert normalize_document(clean_reply(reply)) == reply
    inner = f"{_TESTER_DOC}<memory>\nx\n</memory>\n"
    assert normalize_document(clean_reply(inner)) == inner


def test_a_leading_byte_order_mark_is_removed():
    assert normalize_document("\ufeff" + _TESTER_DOC) == _TESTER_DOC
    assert normalize_document(clean_reply("\ufeff# Project\n\n" + _TESTER_DOC)) == (
        "# Project\n\n" + _TESTER_DOC
    )
    # Negative: a U+FEFF inside the text is not a leading mark and stays.
    assert normalize_document("a\ufeffb\n") == "a\ufeffb\n"


def test_a_first_line_heading_stays_as_written():
    """'# Project' as the first line is content and stays, also before a fenced block."""
    assert normalize_document(clean_reply("# Project\n\n" + _TESTER_DOC)) == (
        "# Project\n\n" + _TESTER_DOC
    )
    assert normalize_document(clean_reply("# Project:\n\n```\nmake test\n```\n")) == (
        "# Project:\n\n```\nmake test\n```\n"
    )
    # Positive beside it: a plain remark ending in ':' above a fence is still chatter.
    assert normalize_document(clean_reply("Updated:\n\n```\nmake test\n```\n")) == "make test\n"


# --- not a document ----------------------------------------------------------------------------


def test_an_echo_of_the_request_is_not_a_document():
    """A small model echoed the request back: its tags, the transcript, its sentences."""
    echo = (
        "Here is the current memory document:\n<current-memory>\n(empty: this project has no "
        "memory yet)\n</current-memory>\n\n<conversations>\n--- conversation 1 ---\nuser: set "
        "up CI\nassistant: Done.\n</conversations>\n"
    )
    verdict = check_rewrite("", normalize_document(clean_reply(echo)))
    assert verdict.status is RefreshStatus.REFUSED_NOT_DOCUMENT
    assert "echoes the request" in verdict.reason
    assert check_rewrite("", "Project: yak\n- CI runs on push\n").ok


def test_a_transcript_is_not_a_document():
    """'user:'/'assistant:' lines and '[tool: …]' lines are the conversation, not the memory."""
    transcript = "user: add a linter\nassistant: I added ruff.\nuser: thanks\n"
    assert check_rewrite("", transcript).status is RefreshStatus.REFUSED_NOT_DOCUMENT
    tools = "Project: yak\n[tool: read_file a.py]\n[tool: edit_file a.py]\n"
    assert check_rewrite("", tools).status is RefreshStatus.REFUSED_NOT_DOCUMENT
    # Negative: one fact that mentions the user is content.
    assert check_rewrite("", "Project: yak\n- user: prefers tabs\n").ok


def test_mostly_code_listings_is_not_a_document_but_one_snippet_is_fine():
    code = "Project: yak\n```python\nimport os\nprint(os.getcwd())\nx = 1\n```\n"
    verdict = check_rewrite("", code)
    assert verdict.status is RefreshStatus.REFUSED_NOT_DOCUMENT
    assert "code" in verdict.reason
    fine = "Project: yak\n- lint with ruff\n- pin 3.12\n- tests: pytest\n```\nmake test\n```\n"
    assert check_rewrite("", fine).ok


def test_150_to_100_lines_with_a_bracketed_placeholder_is_refused():
    """The issue's case: 100 of 150 facts plus '[Rest of the existing content remains
    unchanged]' passes the floor but is refused as a placeholder."""
    new = doc(100) + "[Rest of the existing content remains unchanged]\n"
    verdict = check_rewrite(doc(150), new)
    assert verdict.status is RefreshStatus.REFUSED_PLACEHOLDER
    assert "line 101" in verdict.reason


def test_a_proposals_refusal_speaks_of_the_proposal_and_a_replys_of_the_reply():
    """The guards word the reason with what they judged: another agent's whole document is
    "the proposal" in every sentence, a memory model's answer "the reply"."""
    transcript = "user: what do we use?\nassistant: uv\n"
    refused = judge_proposal(doc(10), transcript, 0.5).verdict
    assert refused.reason == "the proposal is a transcript of the conversation, not the document"
    assert check_rewrite(doc(10), transcript).reason.startswith("the reply is a transcript")
    assert judge_proposal(doc(10), "  \n", 0.5).verdict.reason == "the proposal was empty"
