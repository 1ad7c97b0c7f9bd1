"""Memory quality, measured: scripted multi-session scenarios through the real refresh path.

Each scenario is a project (a web service, a data pipeline, a desktop app) and 13 to 15
conversations, fed one at a time to a fresh core from ``yak.bootstrap.open_core`` on a temporary
data directory: the conversation is stored, then the workspace is refreshed as the Refresh
button does (``core.refresh.refresh_now``: the real transcript, redaction, prompt, model client,
guards, review rules and store). After each refresh the document is judged by deterministic
checks on its text (never by another model):

- live facts kept (in the final document) and superseded facts left (the old value of a fact
  changed once or twice, or of a port and the connection string that uses it);
- deletions respected (a line the user asked to forget, or deleted by hand);
- secrets, injected instructions (from a pasted file) and hypotheticals ("could Redis help?")
  stored;
- duplicates (a fact said again in other words must not become a second line);
- lines changed when nothing durable was said (chit-chat), and lines left holding a
  ``[REDACTED:…]`` marker (a secret caught, but a line of no use);
- guard outcomes (applied, up to date, refused, waiting for review, redactions, the edit
  form's fallbacks), input and output tokens and seconds per refresh.

A refresh that waits for review is decided as a careful user would: accepted when its document
breaks none of the checks, rejected otherwise (its lines then become tombstones).

Both rewrite forms run on the same scenarios (edits against the numbered document, the
default, and the whole document), and one more case measures what a refresh that adds one line
to a 150-line document costs in output tokens in each form.

Usage, from a checkout (with the development environment active)::

    python benchmarks/memory_eval.py --offline            # against the scripted model
    python benchmarks/memory_eval.py --offline --json     # one JSON document on stdout
    python benchmarks/memory_eval.py --base-url URL --model M [--form edits]

``--base-url`` and ``--model`` run it against any Anthropic-compatible endpoint (Anthropic, or a
local server such as Ollama or llama.cpp); the key comes from ``ANTHROPIC_API_KEY``. The
scripted model (``--offline``) is served over HTTP on 127.0.0.1 by the test suite's fake
Messages API, so the real SDK path is used; it answers each refresh as a decent model following
the prompt would, and at a few steps misbehaves once (brings back a line the user deleted,
stores a secret, follows an injected instruction, collapses the document, ignores the edit form,
sends edits that do not apply) so that the figures show the guards catching it.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the checkout's root holds benchmarks and tests
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import targets
from benchmarks.memory_eval_scenarios import (
    COST_LINES,
    COST_STEP,
    SCENARIOS,
    Op,
    Scenario,
    Step,
    add,
    long_document,
)
from tests.support.builders import project_folder, say, seed_document
from tests.support.fake_api import FakeAnthropic, Reply, text
from yak.bootstrap import open_core
from yak.domain import RefreshOutcome, RefreshStatus, RewriteForm
from yak.linediff import line_changes
from yak.llm.provider import Provider
from yak.memory.prompt import request_text

OFFLINE_MODEL = "scripted-memory-model"
COST_TARGET = 0.2  # the edit form's output tokens for one added line, as a share of the whole's

# --- the scripted model ---------------------------------------------------------------------------

_NUMBERED = re.compile(r"^(\d+)\|(?: (.*))?$")
_TITLE = re.compile(r'^--- conversation \d+: "([^"]*)" ---$', re.MULTILINE)


def _fold(line: str) -> str:
    return " ".join(line.lower().split()).rstrip(".")


def apply_ops(lines: list[str], ops: Sequence[Op]) -> list[str]:
    """The document's lines after a decent model's ``ops``."""
    lines = list(lines)
    for op in ops:
        if op.kind == "add":
            if _fold(op.line) in {_fold(line) for line in lines}:
                continue
            if op.section in lines:
                end = lines.index(op.section) + 1
                while end < len(lines) and lines[end].strip():
                    end += 1
                lines.insert(end, op.line)
            else:
                lines += (["", op.section] if lines else [op.section]) + [op.line]
        elif op.kind == "replace":
            for index, line in enumerate(lines):
                if re.search(op.pattern, line, re.IGNORECASE):
                    lines[index] = op.line
                    break
        else:
            lines = [line for line in lines if not re.search(op.pattern, line, re.IGNORECASE)]
    return lines


def edits_between(old: list[str], new: list[str]) -> str:
    """The edit block that turns ``old`` into ``new`` (the model's side of the edit form)."""
    parts = ["<edits>"]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        span = f"{i1 + 1}" if i2 - i1 == 1 else f"{i1 + 1}-{i2}"
        if tag == "replace":
            parts += [f"@@ replace {span}", *new[j1:j2]]
        elif tag == "delete":
            parts.append(f"@@ delete {span}")
        elif tag == "insert":
            parts += [f"@@ insert after {i1}", *new[j1:j2]]
    parts.append("</edits>")
    return "\n".join(parts)


class ScriptedModel:
    """A memory model that follows the prompt: for each conversation in the request it makes
    that step's changes to the document it was shown, and answers in the form asked (edits, or
    the whole document for the whole form and for a retry). The first time it sees a step with
    a ``lapse`` it misbehaves instead. Used as the fake Messages API's responder."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = {step.key: step for step in steps}
        self.lapsed: set[str] = set()

    def __call__(self, body: dict[str, Any]) -> Reply:
        system = body.get("system") or ""
        if not isinstance(system, str):
            system = "".join(block.get("text", "") for block in system)
        messages = body["messages"]
        request = request_text(messages)
        edit_form = "<edits>" in system and len(messages) == 1
        shown = re.search(r"<current-memory>\n(.*?)\n</current-memory>", request, re.DOTALL)
        current = self._lines(shown.group(1) if shown else "")
        new = list(current)
        lapse: Step | None = None
        for title in _TITLE.findall(request):
            step = self.steps.get(title.split()[0]) if title else None
            if step is None:
                continue
            new = apply_ops(new, step.ops)
            if step.lapse and step.key not in self.lapsed and len(messages) == 1:
                self.lapsed.add(step.key)
                lapse = step
        kind = lapse.lapse if lapse else ""
        if kind in ("readd", "secret", "inject"):
            assert lapse is not None
            new.append(lapse.bad_line)
        elif kind == "collapse":
            new = new[:3]
        if kind == "bad_edits" and edit_form:
            reply = f"<edits>\n@@ replace {len(current) + 40}\n{new[-1]}\n</edits>"
        elif edit_form and kind != "whole":
            reply = edits_between(current, new)
        else:
            reply = "".join(line + "\n" for line in new)
        sent = len(system) + sum(len(json.dumps(m["content"])) for m in messages)
        usage = (math.ceil(sent / 4), max(1, math.ceil(len(reply) / 4)))
        return text(reply, usage=usage, chunks=[reply])

    @staticmethod
    def _lines(shown: str) -> list[str]:
        if shown.startswith("(empty:"):
            return []
        lines = shown.split("\n")
        numbered = [_NUMBERED.match(line) for line in lines]
        if lines and all(numbered):
            return [(match.group(2) or "") for match in numbered if match]
        return lines


# --- running --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    """Where the memory model is: a base URL (``None``: the SDK's default), the model, the key
    (``None``: from the environment), and whether it is the scripted model."""

    base_url: str | None
    model: str
    api_key: str | None
    offline: bool
    timeout_s: float = 120.0

    def clients(self) -> Callable[[], Provider]:
        def build() -> Provider:
            return Provider(
                base_url=self.base_url,
                api_key=self.api_key,
                timeout_s=self.timeout_s,
                max_retries=0 if self.offline else 2,
            )

        return build


@dataclass
class Result:
    """The figures of one scenario in one form (see the module docstring)."""

    live_kept: int = 0
    live: int = 0
    superseded_left: int = 0
    superseded: int = 0
    deletions_respected: int = 0
    deletions: int = 0
    secrets_stored: int = 0
    secrets: int = 0
    injected_stored: int = 0
    injected: int = 0
    hypotheticals_stored: int = 0
    hypotheticals: int = 0
    duplicates: int = 0
    quiet_lines_changed: int = 0
    markers: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    refreshes: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    violations: list[str] = field(default_factory=list)

    def add(self, other: Result) -> None:
        for name in self.__dataclass_fields__:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, Counter):
                mine.update(theirs)
            elif isinstance(mine, list):
                mine += theirs
            else:
                setattr(self, name, mine + theirs)

    def as_json(self) -> dict[str, Any]:
        per = max(self.refreshes, 1)
        return {
            "live_facts_kept": self.live_kept,
            "live_facts": self.live,
            "superseded_facts_left": self.superseded_left,
            "superseded_facts": self.superseded,
            "deletions_respected": self.deletions_respected,
            "deletions": self.deletions,
            "secrets_stored": self.secrets_stored,
            "secrets": self.secrets,
            "injected_instructions_stored": self.injected_stored,
            "injected_instructions": self.injected,
            "hypotheticals_stored": self.hypotheticals_stored,
            "hypotheticals": self.hypotheticals,
            "duplicates": self.duplicates,
            "lines_changed_when_nothing_was_said": self.quiet_lines_changed,
            "redaction_markers_left": self.markers,
            "outcomes": dict(sorted(self.outcomes.items())),
            "refreshes": self.refreshes,
            "input_tokens_per_refresh": round(self.input_tokens / per),
            "output_tokens_per_refresh": round(self.output_tokens / per),
            "seconds_per_refresh": round(self.seconds / per, 3),
            "violations": list(self.violations),
        }


def _found(pattern: str, document: str) -> bool:
    return re.search(pattern, document, re.IGNORECASE | re.MULTILINE) is not None


class Judge:
    """The checks of one scenario, activated step by step."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = steps
        retired = {p for step in steps for p in (*step.gone, *step.forgotten)}
        self.live = [p for step in steps for p in step.keep if p not in retired]
        self.negative: dict[str, list[str]] = {}  # kind -> patterns active so far
        self.single: list[str] = []
        self.violated: dict[tuple[str, str], str] = {}  # (kind, pattern) -> the step

    def activate(self, step: Step) -> None:
        for kind in ("gone", "forgotten", "secret", "injected", "hypothetical"):
            self.negative.setdefault(kind, []).extend(getattr(step, kind))
        self.single.extend(step.single)

    def breaks(self, document: str, upto: int) -> list[str]:
        """What ``document`` breaks among the active checks and the live facts of the steps
        before ``upto`` (a careful user rejects a proposal that does)."""
        broken = [
            f"{kind} {p!r}"
            for kind, patterns in self.negative.items()
            for p in patterns
            if _found(p, document)
        ]
        earlier = {p for step in self.steps[:upto] for p in step.keep}
        broken += [f"lost {p!r}" for p in self.live if p in earlier and not _found(p, document)]
        broken += [f"duplicate {p!r}" for p in self.single if self._count(p, document) > 1]
        return broken

    def check(self, document: str, step: Step) -> None:
        for kind, patterns in self.negative.items():
            for p in patterns:
                if _found(p, document):
                    self.violated.setdefault((kind, p), step.title)
        for p in self.single:
            if self._count(p, document) > 1:
                self.violated.setdefault(("duplicate", p), step.title)

    @staticmethod
    def _count(pattern: str, document: str) -> int:
        return sum(1 for line in document.splitlines() if _found(pattern, line))

    def result(self, final: str) -> Result:
        result = Result()
        result.live = len(self.live)
        result.live_kept = sum(1 for p in self.live if _found(p, final))
        result.violations += [f"live fact lost: {p!r}" for p in self.live if not _found(p, final)]
        totals = {kind: len(patterns) for kind, patterns in self.negative.items()}
        left = Counter(kind for kind, _p in self.violated)
        result.superseded, result.superseded_left = totals.get("gone", 0), left["gone"]
        result.deletions = totals.get("forgotten", 0)
        result.deletions_respected = result.deletions - left["forgotten"]
        result.secrets, result.secrets_stored = totals.get("secret", 0), left["secret"]
        result.injected, result.injected_stored = totals.get("injected", 0), left["injected"]
        result.hypotheticals = totals.get("hypothetical", 0)
        result.hypotheticals_stored = left["hypothetical"]
        result.duplicates = left["duplicate"]
        result.markers = sum(1 for line in final.splitlines() if "[REDACTED:" in line)
        result.violations += [
            f"{_MISSED[kind]} {p!r} at {title}" for (kind, p), title in self.violated.items()
        ]
        return result


_MISSED = {
    "gone": "superseded fact left:",
    "forgotten": "deleted line back:",
    "secret": "secret stored:",
    "injected": "injected instruction stored:",
    "hypothetical": "hypothetical stored:",
    "duplicate": "duplicate lines:",
}


def _count_outcome(result: Result, outcome: RefreshOutcome) -> None:
    result.outcomes[str(outcome.status)] += 1
    if outcome.status is RefreshStatus.FAILED:
        failure = f"refresh failed: {outcome.reason}"
        if failure not in result.violations:
            result.violations.append(failure)
    for flag in outcome.flags:
        if flag.startswith("redacted_reply:"):
            result.outcomes["secret redacted from a reply"] += 1
        elif flag in ("edits_retry", "whole_reply", "condense_retry"):
            result.outcomes[flag] += 1
    if outcome.usage.input_tokens or outcome.usage.output_tokens:
        result.refreshes += 1
        result.input_tokens += outcome.usage.input_tokens
        result.output_tokens += outcome.usage.output_tokens
        result.seconds += outcome.duration_s


async def _hand_edit(core: Any, workspace_id: str, step: Step) -> None:
    """The user's own edit before the conversation: delete a line, or type one."""
    document = await core.memory.read(workspace_id)
    lines = document.content.splitlines()
    if step.hand_delete:
        lines = [line for line in lines if not _found(step.hand_delete, line)]
    if step.hand_add:
        lines = apply_ops(lines, [add(*step.hand_add)])
    content = "".join(line + "\n" for line in lines)
    await core.memory.save(workspace_id, content, expected_version=document.version)


async def run_scenario(
    scenario: Scenario, *, form: RewriteForm, endpoint: Endpoint, work: Path, seed: str = ""
) -> tuple[Result, str]:
    """Feed a scenario's conversations one at a time through a fresh core's refresh; returns
    the figures and the final document."""
    place = work / f"{scenario.key}-{form}"
    data_dir = place / "data"
    data_dir.mkdir(parents=True)
    folder = project_folder(place, scenario.folder)
    core = open_core(
        data_dir,
        model_client=endpoint.clients(),
        env={"YAK_MEMORY_MODEL": endpoint.model},
        rewrite_form=form,
    )
    judge = Judge(scenario.steps)
    result = Result()
    try:
        workspace = await core.workspaces.open(str(folder))
        if seed:
            await seed_document(core, workspace.id, seed)
        for index, step in enumerate(scenario.steps):
            if step.hand_delete or step.hand_add:
                await _hand_edit(core, workspace.id, step)
            before = (await core.memory.read(workspace.id)).content
            judge.activate(step)
            say(core, workspace.id, *step.turns, title=step.title)
            outcome = await core.refresh.refresh_now(workspace.id)
            _count_outcome(result, outcome)
            if outcome.status is RefreshStatus.NEEDS_REVIEW and outcome.proposal_id:
                proposal = await core.review.get_proposal(workspace.id, outcome.proposal_id)
                if judge.breaks(proposal.content, index):
                    await core.review.reject(workspace.id, proposal.id)
                    result.outcomes["proposal rejected by the user"] += 1
                else:
                    await core.review.accept(workspace.id, proposal.id)
                    result.outcomes["proposal accepted by the user"] += 1
            after = (await core.memory.read(workspace.id)).content
            judge.check(after, step)
            if step.quiet:
                added, removed = line_changes(before, after)
                result.quiet_lines_changed += added + removed
        final = (await core.memory.read(workspace.id)).content
    finally:
        await core.aclose()
    figures = judge.result(final)
    figures.violations = result.violations + figures.violations
    figures.quiet_lines_changed = result.quiet_lines_changed
    figures.outcomes = result.outcomes
    figures.refreshes, figures.seconds = result.refreshes, result.seconds
    figures.input_tokens, figures.output_tokens = result.input_tokens, result.output_tokens
    return figures, final


async def evaluate(
    *,
    endpoint: Endpoint,
    forms: Sequence[RewriteForm],
    scenarios: Sequence[Scenario] = SCENARIOS,
    fake: FakeAnthropic | None = None,
) -> dict[str, Any]:
    """Run ``scenarios`` and the one-line cost case in each of ``forms``; the report as JSON.

    With ``fake`` (the offline run), a fresh :class:`ScriptedModel` answers each run.
    """
    report: dict[str, Any] = {
        "model": endpoint.model,
        "endpoint": "scripted model (offline)" if endpoint.offline else endpoint.base_url,
        "forms": {},
        "one_line_in_150": {},
    }
    with tempfile.TemporaryDirectory(prefix="yak-memory-eval-") as tmp:
        work = Path(tmp)
        for form in forms:
            overall = Result()
            per_scenario: dict[str, Any] = {}
            for scenario in scenarios:
                if fake is not None:
                    fake.respond_with(ScriptedModel(scenario.steps))
                figures, _final = await run_scenario(
                    scenario, form=form, endpoint=endpoint, work=work
                )
                overall.add(figures)
                per_scenario[scenario.name] = figures.as_json()
            report["forms"][str(form)] = {"scenarios": per_scenario, "overall": overall.as_json()}
            cost = Scenario("cost", "one line in 150", "long-brief", (COST_STEP,))
            if fake is not None:
                fake.respond_with(ScriptedModel(cost.steps))
            figures, final = await run_scenario(
                cost, form=form, endpoint=endpoint, work=work, seed=long_document()
            )
            report["one_line_in_150"][str(form)] = {
                "output_tokens": figures.output_tokens,
                "input_tokens": figures.input_tokens,
                "seconds": round(figures.seconds, 3),
                "applied": figures.outcomes.get("applied", 0) == 1,
                "lines": len(final.splitlines()),
            }
    costs = report["one_line_in_150"]
    if "edits" in costs and "whole" in costs and costs["whole"]["output_tokens"]:
        share = costs["edits"]["output_tokens"] / costs["whole"]["output_tokens"]
        costs["edits_share_of_whole"] = round(share, 4)
        costs["target_share"] = COST_TARGET
        costs["met"] = share < COST_TARGET
    return report


# --- printing -------------------------------------------------------------------------------------

_ROWS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("live facts kept", lambda m: f"{m['live_facts_kept']}/{m['live_facts']}"),
    ("superseded facts left", lambda m: f"{m['superseded_facts_left']}/{m['superseded_facts']}"),
    ("deletions respected", lambda m: f"{m['deletions_respected']}/{m['deletions']}"),
    ("secrets stored", lambda m: f"{m['secrets_stored']}/{m['secrets']}"),
    (
        "injected instructions stored",
        lambda m: f"{m['injected_instructions_stored']}/{m['injected_instructions']}",
    ),
    ("hypotheticals stored", lambda m: f"{m['hypotheticals_stored']}/{m['hypotheticals']}"),
    ("duplicates", lambda m: str(m["duplicates"])),
    ("lines changed, nothing said", lambda m: str(m["lines_changed_when_nothing_was_said"])),
    ("redaction markers left", lambda m: str(m["redaction_markers_left"])),
    ("refreshes calling the model", lambda m: str(m["refreshes"])),
    ("input tokens / refresh", lambda m: f"{m['input_tokens_per_refresh']:,}"),
    ("output tokens / refresh", lambda m: f"{m['output_tokens_per_refresh']:,}"),
    ("seconds / refresh", lambda m: f"{m['seconds_per_refresh']:.2f}"),
)


def format_report(report: dict[str, Any]) -> str:
    """The report as tables: one per form (a row per metric, a column per scenario and all),
    then the guard outcomes, then the one-line cost case."""
    out = [f"Memory quality: {report['endpoint']}, model {report['model']}"]
    for form, data in report["forms"].items():
        columns = {**data["scenarios"], "all": data["overall"]}
        names = list(columns)
        width = max(13, *(len(n) for n in names)) + 2
        out += ["", f"form: {form}", "metric".ljust(30) + "".join(n.rjust(width) for n in names)]
        for label, cell in _ROWS:
            out.append(label.ljust(30) + "".join(cell(columns[n]).rjust(width) for n in names))
        out.append("guard outcomes (all scenarios):")
        for name, count in data["overall"]["outcomes"].items():
            out.append(f"  {name}: {count}")
        for violation in data["overall"]["violations"]:
            out.append(f"  missed: {violation}")
    costs = report["one_line_in_150"]
    if costs:
        out += ["", f"one line added to a {COST_LINES}-line document, output tokens:"]
        for form in ("edits", "whole"):
            if form in costs:
                out.append(f"  {form}: {costs[form]['output_tokens']:,}")
        if "edits_share_of_whole" in costs:
            verdict = "ok" if costs["met"] else "MISSED"
            out.append(
                f"  edits / whole: {costs['edits_share_of_whole']:.1%} "
                f"(target under {COST_TARGET:.0%}: {verdict})"
            )
    return "\n".join(out)


# --- command line ---------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory_eval.py",
        description="Measure memory quality: scripted multi-session scenarios through Yak's "
        "real refresh path, the document judged after each refresh.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--offline", action="store_true", help="against the scripted model on 127.0.0.1"
    )
    where.add_argument(
        "--base-url", help="an Anthropic-compatible endpoint (key from ANTHROPIC_API_KEY)"
    )
    parser.add_argument("--model", help="the memory model to evaluate (with --base-url)")
    parser.add_argument(
        "--form",
        choices=("edits", "whole", "both"),
        default="both",
        help="the rewrite form(s) to run (default both)",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        choices=[s.key for s in SCENARIOS],
        help="run only this scenario (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation and print it; 0 when it ran, 2 for bad usage, 4 when the endpoint
    failed every refresh."""
    args = build_parser().parse_args(argv)
    if args.base_url and not args.model:
        print("memory_eval.py: --base-url needs --model", file=sys.stderr)
        return 2
    if args.base_url and not os.environ.get("ANTHROPIC_API_KEY"):
        print(
            "memory_eval.py: set ANTHROPIC_API_KEY (any value for a local server that takes "
            "no key)",
            file=sys.stderr,
        )
        return 2
    forms = (
        [RewriteForm.EDITS, RewriteForm.WHOLE] if args.form == "both" else [RewriteForm(args.form)]
    )
    scenarios = [s for s in SCENARIOS if not args.scenario or s.key in args.scenario]
    started = time.monotonic()
    if args.offline:
        with FakeAnthropic() as fake:
            endpoint = Endpoint(fake.url, OFFLINE_MODEL, "offline-eval", offline=True)
            report = asyncio.run(
                evaluate(endpoint=endpoint, forms=forms, scenarios=scenarios, fake=fake)
            )
    else:
        endpoint = Endpoint(args.base_url, args.model, None, offline=False)
        report = asyncio.run(evaluate(endpoint=endpoint, forms=forms, scenarios=scenarios))
    report["seconds"] = round(time.monotonic() - started, 1)
    costs = report["one_line_in_150"]
    if "edits_share_of_whole" in costs:
        targets.target(
            f"memory refresh adding 1 line to {COST_LINES}: output tokens, edits / whole",
            f"{costs['edits_share_of_whole']:.1%} ({costs['edits']['output_tokens']:,} / "
            f"{costs['whole']['output_tokens']:,})",
            f"< {COST_TARGET:.0%}",
            costs["met"],
        )
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(format_report(report))
        print(f"\n({report['seconds']:.1f} s)")
    statuses = {str(status) for status in RefreshStatus}
    outcomes = Counter[str]()
    for data in report["forms"].values():
        outcomes.update({k: v for k, v in data["overall"]["outcomes"].items() if k in statuses})
    return 4 if outcomes and outcomes["failed"] == sum(outcomes.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
