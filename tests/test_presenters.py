"""The one table of words for states and outcomes (``yak.presenters``) and the export formats of
the document rules: what the window and the command line show is read from one place."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from yak.domain import (
    DEFAULT_SESSION_TITLE,
    STORE_ERROR,
    Proposal,
    ProposalStatus,
    QueueState,
    RefreshOutcome,
    RefreshState,
    RefreshStatus,
    ReviewMode,
    RevisionSource,
    Workspace,
)
from yak.evidence import EVIDENCE_QUOTE_CHARS, Evidence, Speaker
from yak.memory.document import (
    EXPORT_FORMATS,
    EXPORT_SUFFIXES,
    default_export_name,
    export_format_for,
)
from yak.presenters import (
    Colour,
    StatusAction,
    StatusKind,
    action_words,
    change_words,
    describe_outcome,
    evidence_words,
    list_colour,
    mode_words,
    outcome_label,
    proposal_outcome,
    refresh_status,
    refresh_summary,
    source_label,
    source_text,
    status_colour,
    turn_refresh_line,
)


def outcome(status: RefreshStatus, reason: str = "", **fields) -> RefreshOutcome:
    return RefreshOutcome(
        status=status, reason=reason, workspace_id="ws_x", version=4, lines=57, **fields
    )


def test_status_kinds_are_enums_with_their_colour():
    """A status line's kind and action are enum members; alarms are red, refusals and waiting
    proposals amber, work under way blue, the advice about a missing key plain."""
    line = refresh_status(RefreshState("ws_x", state=QueueState.RUNNING))
    assert line.kind is StatusKind.RUNNING and line.action is StatusAction.STOP
    assert status_colour(StatusKind.FAILED) is Colour.ALARM
    assert status_colour(StatusKind.REFUSED) is Colour.WARNING
    assert status_colour(StatusKind.REVIEW) is Colour.WARNING
    assert status_colour(StatusKind.PENDING) is Colour.BUSY
    assert status_colour(StatusKind.PAUSED) is None
    assert status_colour(StatusKind.NO_KEY) is None
    assert status_colour(StatusKind.UP_TO_DATE) is None


def test_every_action_has_a_button_text_and_tooltip():
    assert action_words(StatusAction.ADD_KEY) == (
        "Add key…",
        "Open Settings › Provider to add an Anthropic API key",
    )
    assert all(all(action_words(action)) for action in StatusAction)


@pytest.mark.parametrize(
    ("status", "label", "colour"),
    [
        (RefreshStatus.REFUSED_FLOOR, "refused: too short", Colour.WARNING),
        (RefreshStatus.REFUSED_NOT_DOCUMENT, "refused: not a document", Colour.WARNING),
        (RefreshStatus.FAILED, "failed", Colour.ALARM),
        (RefreshStatus.SUPERSEDED, "superseded", Colour.WARNING),
        (RefreshStatus.NEEDS_REVIEW, "awaiting review", None),
        (RefreshStatus.UP_TO_DATE, "up to date", None),
        (RefreshStatus.PAUSED, "paused", None),
    ],
)
def test_outcome_labels_and_their_list_colours(status, label, colour):
    """The memory list shows an outcome by its label and colours it by the label's first word."""
    assert outcome_label(status) == label
    assert list_colour(label) is colour


def test_an_unknown_outcome_code_reads_with_spaces():
    assert outcome_label("some_new_code") == "some new code"
    assert list_colour("paused") is None


@pytest.mark.parametrize(
    ("source", "label", "sentence", "change"),
    [
        (RevisionSource.REFRESH, "refresh", "a memory refresh", "memory refresh"),
        (RevisionSource.HAND, "hand edit", "a hand edit", "hand edit"),
        (RevisionSource.IMPORT, "import", "an import", "import"),
        (RevisionSource.RESTORE, "restore", "a restore", "restore"),
        (RevisionSource.CLEAR, "cleared", "a delete", "cleared"),
        (
            RevisionSource.COPY,
            "copy",
            "a copy of the enclosing workspace's memory",
            "copied from the enclosing workspace",
        ),
        (
            "external",
            "external",
            "another program (such as the yak command)",
            "changed by another program",
        ),
        (RevisionSource.PROPOSAL, "proposal", "proposal", "proposal"),
    ],
)
def test_source_words(source, label, sentence, change):
    """A revision's source as a History cell, inside a sentence, and in the status bar."""
    assert (source_label(source), source_text(source), change_words(source)) == (
        label,
        sentence,
        change,
    )


def test_the_command_line_refresh_lines_use_the_windows_words():
    """``yak memory refresh`` and ``yak ask``'s line after its turn begin as the window's
    status bar does (one table, ``outcome_lead``): no status code such as ``up_to_date``."""
    applied = outcome(RefreshStatus.APPLIED, added=2, removed=1)
    assert describe_outcome(applied) == "Refreshed: version 4, 57 lines"
    assert refresh_summary(applied) == "Refreshed: version 4, 57 lines, +2 −1"
    fresh = outcome(RefreshStatus.UP_TO_DATE, "no conversation since the last refresh")
    assert refresh_summary(fresh) == (
        "Up to date: no conversation since the last refresh; version 4, 57 lines"
    )
    refused = outcome(RefreshStatus.REFUSED_FLOOR, "the reply kept 12 of 150 lines.")
    assert describe_outcome(refused).startswith("Refresh refused: ")
    assert refresh_summary(refused) == (
        "Refresh refused: the reply kept 12 of 150 lines; the document is unchanged "
        "(version 4, 57 lines)."
    )
    waits = outcome(RefreshStatus.NEEDS_REVIEW, "waits for review: 3 lines removed")
    assert refresh_summary(waits).startswith(
        "Refresh waits for your review: waits for review: 3 lines removed; the document is "
        "unchanged (version 4, 57 lines). See it with 'yak memory review "
    )
    broken = outcome(RefreshStatus.FAILED, "the database is locked", flags=(STORE_ERROR,))
    assert refresh_summary(broken) == "Refresh failed: the database is locked; nothing was changed."
    assert turn_refresh_line(applied) == "Memory refreshed: version 4, 57 lines"
    assert turn_refresh_line(fresh) == "Memory up to date: version 4, 57 lines"
    assert turn_refresh_line(outcome(RefreshStatus.FAILED, "rate limited.")) == (
        "yak: memory refresh failed: rate limited; the memory document is unchanged."
    )
    assert turn_refresh_line(waits) == (
        "yak: memory refresh waits for your review: waits for review: 3 lines removed; the "
        "memory document is unchanged."
    )
    for status in RefreshStatus:  # every status has its words; none shows its code
        said = refresh_summary(outcome(status, "why"))
        assert "_" not in said.split(":")[0] and said[0].isupper(), said


def test_mode_words():
    assert (
        mode_words(ReviewMode.AUTO) == "auto (supported lines apply; doubtful ones wait for review)"
    )
    assert mode_words(ReviewMode.REVIEW) == "review (every rewrite waits for review)"


def test_export_formats_and_suffixes_have_one_home():
    """The document rules name the formats, their suffixes, the default file name and the
    format a file's name asks for."""
    assert EXPORT_FORMATS == ("text", "markdown", "json")
    assert EXPORT_SUFFIXES == {"text": ".txt", "markdown": ".md", "json": ".json"}
    workspace = Workspace(id="ws_x", path="/src/proj", created_at=datetime(2025, 6, 1, tzinfo=UTC))
    assert default_export_name(workspace, "markdown") == "proj-memory.md"
    assert default_export_name(workspace, "unknown") == "proj-memory.txt"
    assert [export_format_for(name) for name in ("a.JSON", "a.md", "a.markdown", "a", "-")] == [
        "json",
        "markdown",
        "markdown",
        "text",
        "text",
    ]


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({}, "waiting for review"),
        ({"conflicts_with": 6}, "waiting for review; conflicts with version 6"),
        ({"status": "accepted", "result_version": 7}, "accepted → version 7"),
        ({"status": "edited", "result_version": 7}, "edited and accepted → version 7"),
        ({"status": "rejected"}, "rejected"),
        (
            {"status": "superseded", "superseded_by": "01ABCDEFGHJKMN"},
            "superseded by proposal 01ABCDEFGHJK",
        ),
        ({"status": "superseded"}, "superseded by a refresh that applied"),
        ({"status": "withdrawn"}, "withdrawn"),
    ],
)
def test_a_proposal_says_where_it_stands(changes, words):
    """The review inbox's words for each outcome ("The inbox" in docs/memory.md)."""
    proposal = Proposal(
        id="01P",
        workspace_id="ws",
        base_version=5,
        content="",
        reasons=(),
        added=0,
        removed=0,
        status=ProposalStatus(changes.pop("status", "pending")),
        created_at=datetime(2026, 12, 3, tzinfo=UTC),
        **changes,
    )
    assert proposal_outcome(proposal) == words


SESSION = "01JDX3K8ABCDEFGHJKMNPQRSTV"


@pytest.mark.parametrize(
    ("speaker", "titles", "words"),
    [
        (Speaker.USER, {SESSION: "Packaging"}, 'you said in "Packaging": "use uv"'),
        (Speaker.ASSISTANT, {SESSION: "Packaging"}, 'the assistant said in "Packaging": "use uv"'),
        (Speaker.TOOL_CALL, {}, 'seen in a tool call in conversation 01JDX3K8: "use uv"'),
        (
            Speaker.USER,
            {SESSION: DEFAULT_SESSION_TITLE},
            'you said in conversation 01JDX3K8: "use uv"',
        ),
    ],
)
def test_a_lines_evidence_in_words(speaker, titles, words):
    """Who said it, where (the conversation's title, else its short id), and the quote."""
    evidence = Evidence("- use uv", SESSION, "01JDX3K9MESSAGE00000000000", speaker, "use uv")
    assert evidence_words(evidence, titles=titles) == words
    assert evidence_words(evidence, by_person=True, titles=titles) == words


def test_a_line_without_evidence_is_typed_by_you_or_has_none_recorded():
    """A person's line is "typed by you"; a refresh's without a passage "no evidence
    recorded"; a long quote on several lines is one line, at most 200 characters."""
    assert evidence_words(None, by_person=True) == "typed by you"
    assert evidence_words(None) == "no evidence recorded"
    long = Evidence("- x", SESSION, "m", Speaker.USER, "word\nword " * 60)
    quote = evidence_words(long).split(": ", 1)[1]
    assert "\n" not in quote and len(quote) == EVIDENCE_QUOTE_CHARS + 2  # with its quotes


def test_a_refresh_applied_in_part_says_where_its_held_lines_wait():
    """Applied with a proposal of the lines it held back: the command line names the proposal
    to review; the panel reads the change and the review together."""
    reason = 'folded 2 messages; 1 line waits for review: "- x": nothing in the conversations…'
    part = outcome(RefreshStatus.APPLIED, reason, added=1, proposal_id="01JPROPOSAL")
    assert refresh_summary(part) == (
        f"Refreshed: version 4, 57 lines, +1 −0 ({reason}). See what waits with "
        "'yak memory review 01JPROPOSAL'."
    )
    assert turn_refresh_line(part) == (
        "Memory refreshed: version 4, 57 lines; some lines wait for review "
        "('yak memory review 01JPROPOSAL')"
    )


def test_a_paused_run_is_worded_as_paused_never_as_up_to_date():
    """An automatic run held back for want of a key (``RefreshStatus.PAUSED``) reads as paused
    in the window, ``yak memory refresh`` and ``yak ask``, gives no size (the document was not
    read), and exits 4 like a missing key, not 0."""
    paused = RefreshOutcome(
        status=RefreshStatus.PAUSED,
        reason="no API key is available; nothing was sent",
        workspace_id="ws_x",
        version=0,
        lines=0,
        missing_key=True,
    )
    waits = "no API key; its conversations wait until one is added, and nothing was sent."
    assert describe_outcome(paused) == f"Refresh paused: {waits}"
    assert refresh_summary(paused) == f"Refresh paused: {waits}"
    assert turn_refresh_line(paused) == f"yak: memory refresh paused: {waits}"
    assert RefreshStatus.PAUSED.exit_code == 4
