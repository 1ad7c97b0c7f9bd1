"""A rewrite decided per line (``yak.memory.judging.per_line``), pure: what is applied now, what
waits on top of it and why, and which lines of Yak's own request are dropped. Each hold has a case
beside it where the same shape is applied."""

from __future__ import annotations

from datetime import UTC, datetime

from yak.domain import LineOrigin, ReviewMode, RevisionSource
from yak.evidence import Speaker
from yak.memory.forms.edits import EXAMPLE, number_lines
from yak.memory.forms.profiles import SMALL_LOCAL
from yak.memory.forms.text import without_request_lines
from yak.memory.history.provenance import fold_line
from yak.memory.judging.per_line import decide_lines
from yak.memory.judging.said import Passage
from yak.memory.prompts.rewrite import condense_message, system_prompt

DOC = (
    "Project\n- orders-api: a FastAPI service.\n- Python 3.12.\n- Lint with ruff.\n"
    "- Postgres 16 holds the orders.\n- Tests run with pytest.\n"
)


def said(*texts: str, speaker: Speaker = Speaker.USER) -> list[Passage]:
    return [
        Passage("ses_1", f"msg_{i}", speaker, text, wondering=text.rstrip().endswith("?"))
        for i, text in enumerate(texts)
    ]


def origin(line: int, text: str, *, by_person: bool) -> LineOrigin:
    return LineOrigin(
        line=line,
        text=text,
        version=1,
        source=RevisionSource.HAND if by_person else RevisionSource.REFRESH,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        revision_id="rev_1",
        by_person=by_person,
    )


def decide(new: str, *passages: Passage, **kwargs):
    kwargs.setdefault("origins", [])
    kwargs.setdefault("tombstones", set())
    return decide_lines(DOC, new, passages=list(passages), **kwargs)


def test_a_rewrite_that_changes_nothing_applies_nothing_and_holds_nothing():
    decision = decide(DOC)
    assert (decision.applied, decision.held, decision.reasons) == (DOC, None, ())


def test_a_supported_line_is_applied_with_its_evidence():
    new = DOC + "- Deploys go to Fly.io.\n"
    decision = decide(new, *said("We deploy to Fly.io now."))
    assert decision.applied == new and decision.held is None
    [evidence] = decision.evidence
    assert evidence.line == "- Deploys go to Fly.io." and "Fly.io" in evidence.quote


def test_an_invented_path_waits_on_top_of_the_supported_line():
    new = DOC + "- Deploys go to Fly.io.\n- Notes live in ~/vaults/Dev.\n"
    decision = decide(new, *said("We deploy to Fly.io now.", "Could a notes vault help?"))
    assert decision.applied == DOC + "- Deploys go to Fly.io.\n"
    assert decision.held == new
    assert decision.reasons == (
        "\"- Notes live in ~/vaults/Dev.\": '~/vaults/Dev' was not said in the conversations",
    )


def test_a_hunk_that_changes_a_hand_line_waits_whole():
    new = DOC.replace("pytest.", "pytest -q.")
    origins = [origin(n, t, by_person=(n == 6)) for n, t in enumerate(DOC.splitlines(), 1)]
    decision = decide(new, *said("Run pytest with -q."), origins=origins)
    assert decision.applied == DOC and decision.held == new
    assert decision.reasons[-1].startswith("it removes or changes 1 line you wrote")
    refreshed = [origin(n, t, by_person=False) for n, t in enumerate(DOC.splitlines(), 1)]
    assert decide(new, *said("Run pytest with -q."), origins=refreshed).applied == new


def test_a_deleted_line_coming_back_waits_and_the_new_one_beside_it_is_applied():
    new = DOC + "- Deploys go to Fly.io.\n- Deploy on Fridays.\n"
    decision = decide(
        new,
        *said("We deploy to Fly.io now.", "Deploy on Fridays."),
        tombstones={fold_line("- deploy on fridays")},
    )
    assert decision.applied == DOC + "- Deploys go to Fly.io.\n"
    assert decision.reasons == ('"- Deploy on Fridays.": you deleted or rejected this line before',)


def test_review_mode_and_a_large_removal_hold_the_whole_rewrite():
    new = DOC + "- Deploys go to Fly.io.\n"
    passages = said("We deploy to Fly.io now.")
    held = decide(new, *passages, mode=ReviewMode.REVIEW)
    assert held.applied == DOC and held.held == new
    assert held.reasons[0].startswith("this workspace is in review mode")
    gone = said(
        "We deploy to Fly.io now.",
        "orders-api on FastAPI, Python 3.12, ruff, Postgres 16 and the pytest tests are gone.",
    )
    cut = decide("Project\n- Deploys go to Fly.io.\n", *gone)
    assert cut.applied == DOC and cut.reasons[0].startswith("it removes 5 of 6 lines")


def test_blank_lines_and_moved_lines_pass_as_they_are():
    new = DOC.replace("- Lint with ruff.\n", "").replace(
        "Project\n", "Project\n\n\n- Lint with ruff.\n"
    )
    decision = decide(new)
    assert decision.applied == new and decision.held is None


def test_a_value_changed_in_two_lines_of_seven_is_a_change_not_a_removal_of_a_quarter():
    """The 1.5B model moved Redis to port 6380 in two lines of a seven-line document, as the
    person said: a changed value is not a removal, so the rewrite is applied instead of
    waiting whole; two lines deleted outright still count."""
    doc = (
        "Project\n- kite is an iOS app.\n- Sources are in Sources/Kite.\n"
        "- We lint with SwiftLint.\n- The dev backend caches in Redis on port 6379.\n"
        "- The dev config has REDIS_URL=redis://localhost:6379/0.\n- Releases ship on Fridays.\n"
    )
    moved = doc.replace("6379", "6380")
    news = said("Redis on the dev backend moved to port 6380.")
    decision = decide_lines(doc, moved, origins=[], tombstones=set(), passages=news)
    assert (decision.applied, decision.held) == (moved, None)
    gone = "".join(line + "\n" for line in doc.splitlines() if "REDIS" not in line.upper())
    forget = said("Forget Redis, we dropped it from the dev backend and its config.")
    dropped = decide_lines(doc, gone, origins=[], tombstones=set(), passages=forget)
    assert dropped.applied == doc and dropped.held == gone
    assert dropped.reasons[0].startswith("it removes 2 of 7 lines")


def test_when_only_structure_would_change_nothing_is_applied():
    """The 1.5B model's edits deleted a run of lines after "Let me grab a coffee first.": their
    removal waited, and the blank line among them alone went, one revision for nothing. Now
    the document stays byte for byte (a blank line or a heading is no news) and the whole
    deletion waits; beside it, a supported line applied with the same blank line gone is
    applied as written."""
    doc = DOC + "\nDeploys\n- Deploys go to Heroku.\n"
    chat = said("Let me grab a coffee first.", "Sure, take your time.")
    deleted = "".join(f"{line}\n" for line in doc.splitlines()[:4])
    decision = decide_lines(doc, deleted, origins=[], tombstones=set(), passages=chat)
    assert decision.applied.encode() == doc.encode()
    assert decision.held == deleted and len(decision.reasons) == 3  # each line removed
    blank_only = doc.replace("\n\n", "\n")
    quiet = decide_lines(doc, blank_only, origins=[], tombstones=set(), passages=chat)
    assert (quiet.applied.encode(), quiet.held) == (doc.encode(), None)
    added = blank_only + "- Tests run in CI.\n"
    news = said("Tests run in CI now.")
    decided = decide_lines(doc, added, origins=[], tombstones=set(), passages=news)
    assert decided.applied == added and decided.held is None


def test_a_second_copy_of_a_line_the_document_keeps_is_a_duplicate_not_a_move():
    """Seen with the 0.5B model: "@@ insert after 9" on a 2-line document appended a copy of
    line 2 word for word. A copy is not a move: the document stays as it was, the copy waits
    naming the line that already says it, and the edits retry is asked to name it too."""
    line = "- Postgres 16 holds the orders."
    new = DOC + line + "\n"
    decision = decide(new, *said("Postgres 16 holds the orders."))
    assert decision.applied == DOC and decision.held == new
    assert decision.reasons == (f'"{line}": line 5 already says this',)
    assert decision.duplicates == ((5, line),)


def test_the_requests_own_lines_are_dropped_unless_a_person_said_them():
    example_line = EXAMPLE.splitlines()[2]  # "- Python 3.13."
    rule = system_prompt().splitlines()[-3]
    reply = f"{DOC}<edits>\n@@ replace 3\n{example_line}\n{rule}\n{condense_message(230, 26_000)}\n"
    kept, dropped = without_request_lines(DOC, reply)
    assert kept == DOC
    assert dropped == ("<edits>", "@@ replace 3", example_line, rule, condense_message(230, 26_000))
    backed, gone = without_request_lines(
        DOC, DOC + example_line + "\n", said("We moved to Python 3.13.")
    )
    assert backed == DOC + example_line + "\n" and gone == ()


def test_a_line_the_document_already_had_is_never_dropped():
    """Earlier garbage is the document's: dropping it would be a silent cut."""
    document = DOC + "- Python 3.13.\n"
    assert without_request_lines(document, document) == (document, ())


def test_numbered_lines_beside_new_lines_are_the_documents_own_lines():
    """A numbered line showing the document's own line under its number is that line kept when
    the reply holds new lines too; a numbered line with other text, or under another number, is
    dropped; the numbered document alone, with nothing new, is dropped whole. A habit of the
    0.5B model: read back only in its profile (``small-local``); under the plain profile the
    numbered lines are dropped."""
    numbered = number_lines(DOC) + "\n"
    new_line = "- CI runs on GitHub Actions.\n"
    assert without_request_lines(
        DOC, numbered + "@@ insert after 9\n" + new_line, profile=SMALL_LOCAL
    ) == (
        DOC + new_line,
        ("@@ insert after 9",),
    )
    assert without_request_lines(
        DOC, "9| - Go 1.22.\n2| - Lint with ruff.\n" + new_line, profile=SMALL_LOCAL
    ) == (
        new_line,
        ("9| - Go 1.22.", "2| - Lint with ruff."),
    )
    kept, dropped = without_request_lines(DOC, numbered, profile=SMALL_LOCAL)
    assert kept == "" and len(dropped) == len(DOC.splitlines())
    plain = without_request_lines(DOC, numbered + "@@ insert after 9\n" + new_line)
    assert plain[0] == new_line  # the numbered lines are edit syntax, dropped


def test_lines_replaced_by_lines_about_something_else_stay_and_their_removal_waits():
    """Seen with the 0.5B model: "@@ replace 1" aimed at the wrong line put the new fact in
    the place of the project's first line. Nothing said touches the lines it removes and the
    new line does not restate them: they stay, the new fact is applied, and the removal waits
    naming each line. Beside it, a line the conversation supersedes (a new version) or says to
    forget is replaced or removed at once."""
    new = "Project\n- Deploys go to Fly.io.\n"
    decision = decide(new, *said("We deploy to Fly.io now."))
    assert decision.applied == DOC + "- Deploys go to Fly.io.\n" and decision.held == new
    assert decision.reasons == tuple(
        f'"{line}": removed, though nothing in the conversations says it is wrong'
        for line in DOC.splitlines()[1:]
    )
    bumped = DOC.replace("- Python 3.12.", "- Python 3.13.")
    upgrade = decide(bumped, *said("We moved to 3.13 last week."))
    assert upgrade.applied == bumped and upgrade.held is None
    forgotten = DOC.replace("- Lint with ruff.\n", "")
    forget = decide(forgotten, *said("Forget the linting with ruff, we dropped it."))
    assert forget.applied == forgotten and forget.held is None


def test_a_one_word_line_copied_word_for_word_is_a_duplicate():
    """Seen with the 0.5B model: "- pytest." written a second time. Too short for the
    content-word share, it is still the same line word for word."""
    document = DOC + "- pytest.\n"
    new = document + "- pytest.\n"
    decision = decide_lines(
        document, new, origins=(), tombstones=(), passages=said("We use pytest.")
    )
    assert decision.applied == document and decision.held == new
    assert decision.reasons == ('"- pytest.": line 7 already says this',)


def test_a_line_of_several_facts_replaced_by_one_of_them_stays():
    """Seen with the 0.5B model: "@@ replace 1" put the new PgBouncer fact in the place of a
    line holding the framework, the test runner, the Python version and the database URL. The
    conversation touches the line (its port) but says nothing of the rest, and the new line
    does not carry it: the line stays and its removal waits. Beside it, the dependent line
    rewritten with the new port is a change with cause, applied."""
    first = "- FastAPI in src/orders_api, pytest, Python 3.11, Postgres on localhost:5432."
    document = DOC.replace("Project\n", f"Project\n{first}\n")
    pgbouncer = "- Postgres sits behind PgBouncer on port 6432."
    passages = said("Postgres now sits behind PgBouncer on port 6432; nothing uses 5432 directly.")
    decision = decide_lines(
        document, document.replace(first, pgbouncer), origins=(), tombstones=(), passages=passages
    )
    assert decision.applied == document.replace(first, f"{first}\n{pgbouncer}")
    assert decision.reasons == (
        f'"{first[:59]}…": removed, though nothing in the conversations says it is wrong',
    )
    moved = document.replace("localhost:5432", "localhost:6432")
    followed = decide_lines(document, moved, origins=(), tombstones=(), passages=passages)
    assert followed.applied == moved and followed.held is None


def test_the_numbered_document_written_on_is_read_with_its_new_lines():
    """Seen with the 0.5B model, asked for the whole document: the document under its numbers,
    then its new facts numbered on after it. The numbers come off and the new lines are the
    rewrite's; a gap in the numbering, or a document line left out, and the numbered lines are
    dropped as before. Read back only in the
    ``small-local`` profile."""
    numbered = number_lines(DOC) + "\n"
    written_on = f"<current-memory>\n{numbered}7| - No deploys on Fridays.\n8|\n</current-memory>"
    assert without_request_lines(DOC, written_on, profile=SMALL_LOCAL) == (
        f"{DOC}- No deploys on Fridays.\n\n",
        ("<current-memory>", "</current-memory>"),
    )
    gap = numbered + "9| - No deploys on Fridays.\n"
    assert without_request_lines(DOC, gap, profile=SMALL_LOCAL)[0] == ""
    left_out = numbered.replace("4| - Lint with ruff.\n", "") + "7| - No deploys on Fridays.\n"
    assert without_request_lines(DOC, left_out, profile=SMALL_LOCAL)[0] == ""
    assert without_request_lines(DOC, written_on)[0].strip() == ""  # plain: numbered lines go


def test_a_line_rewritten_elsewhere_is_not_kept_beside_its_rewording():
    """Seen with the 0.5B model in a chit-chat refresh: a line shortened and moved to the top.
    The rewording, in another hunk than the removal, is its cause: the document never holds
    both."""
    old = DOC + "- The API listens on port 8080, behind nginx.\n"
    new = DOC.replace("Project\n", "Project\n- The API listens on port 8080.\n")
    decision = decide_lines(old, new, origins=(), tombstones=(), passages=said("Thanks, bye!"))
    assert decision.applied == new and decision.held is None


def test_a_retry_message_copied_with_its_ending_changed_is_still_dropped():
    """Seen with the 0.5B model: the whole-document retry's message sent back with its end
    reworded ("every line in full, plain text."). Its opening is Yak's own: it is dropped,
    never proposed."""
    message = (
        "Those edits cannot be applied: '@@ replace 1,2,3,4,7' is not an edit. Write the "
        "complete updated memory document instead: every line in full, plain text."
    )
    assert without_request_lines(DOC, DOC + message + "\n") == (DOC, (message,))
