"""The memory-quality evaluation (``benchmarks/memory_eval.py``) tests itself offline: its
scripted model is served by the fake Messages API, the refreshes run through the real core, and
what it prints is what these tests read."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from benchmarks import memory_eval
from benchmarks.memory_eval import Endpoint, ScriptedModel, run_scenario
from benchmarks.memory_eval_scenarios import WEB, add
from yak.domain import RewriteForm

ROOT = Path(__file__).resolve().parent.parent


def row(table: str, label: str) -> list[str]:
    """The cells of the first table row starting with ``label``."""
    line = next(line for line in table.splitlines() if line.startswith(label))
    return line[len(label) :].split()


def test_the_offline_evaluation_prints_every_metric_and_the_guards_catching_each_lapse(capsys):
    """``--offline`` prints a table per form (a column per scenario and one for all): every live
    fact kept, no superseded fact, secret, injected instruction or hypothetical stored, every
    deletion respected, no duplicate, nothing changed by chit-chat; the scripted lapses show up
    as the guards' outcomes (three proposals rejected for a line the user deleted, three
    for an injected instruction, three secrets redacted, one collapse refused by the floor, one
    whole-document reply and one retry after edits that did not apply); and one added line costs
    the edit form under a fifth of the whole form's output tokens."""
    assert memory_eval.main(["--offline"]) == 0
    out = capsys.readouterr().out
    edits, whole = out.split("form: whole")
    assert "form: edits" in edits
    for table in (edits, whole):
        assert row(table, "live facts kept")[-1] == "22/22"
        assert row(table, "superseded facts left")[-1] == "0/12"
        assert row(table, "deletions respected")[-1] == "6/6"
        assert row(table, "secrets stored")[-1] == "0/3"
        assert row(table, "injected instructions stored")[-1] == "0/4"
        assert row(table, "hypotheticals stored")[-1] == "0/4"
        assert row(table, "duplicates") == ["0", "0", "0", "0"]
        assert row(table, "lines changed, nothing said") == ["0", "0", "0", "0"]
        assert row(table, "redaction markers left")[-1] == "3"
        assert row(table, "refreshes calling the model") == ["14", "15", "13", "42"]
        assert "  needs_review: 6\n" in table
        assert "  proposal rejected by the user: 6\n" in table
        assert "  refused_floor: 1\n" in table
        assert "  secret redacted from a reply: 3\n" in table
        assert "missed:" not in table
    assert "  edits_retry: 1\n" in edits and "  whole_reply: 1\n" in edits
    assert "edits_retry" not in whole.split("one line added")[0]
    out_edits = int(row(edits, "output tokens / refresh")[-1].replace(",", ""))
    out_whole = int(row(whole, "output tokens / refresh")[-1].replace(",", ""))
    assert out_edits < out_whole
    share = re.search(r"edits / whole: ([\d.]+)% \(target under 20%: (\w+)\)", out)
    assert share is not None and float(share[1]) < 20 and share[2] == "ok"


def test_the_evaluation_runs_from_a_checkout_without_pytest_and_prints_one_json_document():
    """``python benchmarks/memory_eval.py --offline --json`` (a plain script run from the
    repository root) exits 0 with one JSON document holding the figures per form and
    scenario and the one-line cost case."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    done = subprocess.run(
        [sys.executable, "benchmarks/memory_eval.py", "--offline", "--json", "--scenario", "etl"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    pipeline = report["forms"]["edits"]["scenarios"]["data pipeline"]
    assert pipeline["live_facts_kept"] == pipeline["live_facts"] == 7
    assert pipeline["superseded_facts_left"] == 0 and pipeline["superseded_facts"] == 4
    assert pipeline["outcomes"]["refused_floor"] == 1
    assert report["one_line_in_150"]["met"] is True
    assert report["one_line_in_150"]["edits"]["applied"] is True


async def test_the_evaluation_reports_a_model_that_keeps_old_facts_and_stores_a_hypothetical(
    fake_api, tmp_path
):
    """The checks can fail: a model that never replaces or deletes a line, and writes the Redis
    idea down, leaves three superseded facts, ignores the "forget that", and stores the
    hypothetical; the figures and the missed checks say so."""
    lazy = [
        dataclasses.replace(
            step,
            ops=tuple(op for op in step.ops if op.kind == "add")
            + (
                (add("Ideas", "- Use Redis to cache the /orders listing."),)
                if step.hypothetical
                else ()
            ),
            lapse="",
        )
        for step in WEB.steps
    ]
    fake_api.respond_with(ScriptedModel(lazy))
    endpoint = Endpoint(fake_api.url, "lazy-model", "test-key", offline=True)
    figures, final = await run_scenario(
        WEB, form=RewriteForm.EDITS, endpoint=endpoint, work=tmp_path
    )
    assert (figures.superseded_left, figures.superseded) == (3, 4)
    assert (figures.deletions_respected, figures.deletions) == (1, 2)
    assert (figures.hypotheticals_stored, figures.hypotheticals) == (1, 1)
    assert "Python 3.12." in final and "Redis" in final
    assert "superseded fact left: 'Heroku' at web-07 deploy to fly" in figures.violations
    assert "hypothetical stored: 'redis' at web-06 caching idea" in figures.violations
