"""The memory's upkeep in a human-paced session: what its refreshes cost beside the chat.

Runs the real core from ``open_core`` (the chat service and the agent loop, the refresh
scheduler with its queue, the refresher, the repositories on an SQLite file in a temporary
folder) and the real ``Provider`` (the anthropic SDK) against the scripted fake Messages API of
the test suite (``tests/support/fake_api.py``), whose prompt cache counts tokens as the API
would (prefixes up to each ``cache_control`` breakpoint, five minutes on the fake clock,
characters / 4 per block, here with the API's 1,024-token minimum). Nothing is timed: the figures
are counts, the same on every machine.

The session: a workspace with a 150-line memory document; 20 turns a person sends 30 to 120 s
apart (a seeded draw) on the fake clock. In every turn the agent reads a 120-line module, in
every other turn it then edits one function of it (``edit_file``), and answers in about 300
tokens; eight turns establish a decision worth remembering ("Decision: …") and the others do
not (questions, thanks). A light session for a coding agent: real ones read more and longer
files per turn, which only lowers the memory's share. The refresh queue runs on the same clock:
its timers fire as the session's time passes, and the conversation is closed after the last
turn. The memory model is scripted to follow its prompt (it adds each decision it reads that
the document lacks, with one line edit, and answers an empty block otherwise).

The same session runs with the idle timing (the default: a refresh waits for 120 s of quiet, at
most 900 s after the first unfolded turn, 10 s after the conversation is closed), with the timing
before it (a 10 s debounce) for comparison, and with other bounds than 900 s (each refresh
re-sends the rules and the document, so the bound sets what a long conversation costs).

Each run prints the chat's and the memory's model calls and tokens (uncached input, cache
writes, cache reads, output) and the memory's share of the session's cost. Cost is counted in
the chat model's input-token price: uncached input 1, cache writes 1.25, cache reads 0.1 (the
API's multipliers), output 5 (the output/input price ratio of both models), the memory model's
tokens multiplied by ``--memory-price-ratio`` (default 1/3: Claude Haiku 4.5 at $1/$5 per
million tokens against Claude Sonnet 4.5 at $3/$15, the list prices when this was written). The
fake reports 5 output tokens for every reply, so output tokens are counted here as the scripted
reply's characters / 4, like the input.

Targets (docs/performance.md): the memory's upkeep at most 5% of the session's cost, at most one
refresh call per five turns, and every decision of the session in the final document.

Usage, from the repository root: ``python -m benchmarks.bench_upkeep [--memory-price-ratio R]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmarks import targets
from tests.support import ManualTimers, ModelClients, project_folder
from tests.support import fake_api as fake_api_module
from tests.support.fake_api import approx_tokens
from yak.agent.types import ApprovalDecision
from yak.bootstrap import open_core
from yak.config import DEFAULT_IDLE_S, MAX_WAIT_S, SETTLE_S
from yak.domain import TokenUsage, estimate_tokens
from yak.events import RefreshFinished
from yak.memory.prompts.rewrite import request_text

CHAT_MODEL = "bench-chat"
MEMORY_MODEL = "bench-memory"
TURNS = 20
GAPS_S = (30.0, 120.0)  # a person's pause between two turns
SEED = 23
MIN_CACHEABLE_TOKENS = 1024  # the real API's minimum prefix for most models
CACHE_WRITE, CACHE_READ, OUTPUT = 1.25, 0.1, 5.0  # prices relative to uncached input
DEFAULT_PRICE_RATIO = 1 / 3  # memory model / chat model (Haiku 4.5 $1/$5, Sonnet 4.5 $3/$15)
TODAY_DEBOUNCE_S = 10.0  # the timing before idle-based refreshes

DOCUMENT = "".join(
    f"- convention {i:03d}: module_{i % 10} keeps rule {i} for its inputs (see src/module_"
    f"{i % 10}.py)\n"
    for i in range(150)
)
FILES = {
    f"src/module_{i}.py": "".join(
        f"def step_{i}_{n}(value):\n    return value * {n} + {i}  # step {n} of module {i}\n"
        for n in range(60)
    )
    for i in range(10)
}
DECISIONS = {  # turn number -> the decision it establishes
    1: "tests run with pytest -x and never touch the network",
    3: "the CLI is built with argparse, not click",
    6: "configuration lives in the pyproject file only",
    8: "logging goes through the logging module with one logger per package",
    11: "releases are tagged from main with a version tag",
    13: "module_4 keeps its legacy API until 2027",
    16: "database migrations are written by hand with Alembic",
    18: "type checking runs mypy in strict mode on yak/ only",
}
CHATTER = (
    "What does module {n} do?",
    "Thanks, that helps.",
    "Can you explain step 3 of module {n} again?",
    "Ok. Where is module {n} used?",
    "Great, looks fine to me.",
)
ANSWER = (
    "Module {n} multiplies the value by the step number and adds the module number; every "
    "step follows the same convention, so a change to one is a change to all of them. "
) * 6


async def allow(_request) -> ApprovalDecision:
    return ApprovalDecision.ALLOW_ONCE


def prompt_of(turn: int) -> str:
    """What the person types in ``turn`` (0-based)."""
    n = turn % 10
    if turn in DECISIONS:
        return f"Let us settle this for module {n}. Decision: {DECISIONS[turn]}."
    return CHATTER[turn % len(CHATTER)].format(n=n)


class ScriptedModels:
    """The fake API's responder: the chat model reads a file on every other turn, then answers;
    the memory model adds each decision it reads that the document lacks. Keeps the output
    tokens of each reply (its characters / 4), in request order."""

    def __init__(self) -> None:
        self.output_tokens: list[int] = []

    def __call__(self, body: dict) -> fake_api_module.Reply:
        reply, out = self._reply(body)
        self.output_tokens.append(out)
        return reply

    def _reply(self, body: dict) -> tuple[fake_api_module.Reply, int]:
        if body["model"] == MEMORY_MODEL:
            return self._memory(body)
        messages = body["messages"]
        asked = max(
            i
            for i, m in enumerate(messages)
            if m["role"] == "user" and m["content"][-1].get("type") == "text"
        )
        turn = sum(
            1 for m in messages if m["role"] == "user" and m["content"][-1].get("type") == "text"
        )
        n = int(m.group(1)) if (m := re.search(r"module (\d)", str(messages[asked]))) else 0
        rounds = sum(
            1 for m in messages[asked:] for b in m["content"] if b.get("type") == "tool_use"
        )
        arguments: dict[str, str]
        if rounds == 0:  # look at the code first
            arguments = {"path": f"src/module_{n}.py"}
            return fake_api_module.tool_use("read_file", arguments), approx_tokens(arguments) + 20
        if rounds == 1 and turn % 2 == 0:  # then change one function
            step = turn // 10 + 20
            old = f"def step_{n}_{step}(value):\n    return value * {step} + {n}"
            new = (
                f"def step_{n}_{step}(value: int) -> int:\n"
                f'    """Step {step} of module {n}: scale, then shift."""\n'
                f"    scaled = value * {step}\n    return scaled + {n}"
            )
            arguments = {"path": f"src/module_{n}.py", "old_string": old, "new_string": new}
            return fake_api_module.tool_use("edit_file", arguments), approx_tokens(arguments) + 20
        answer = ANSWER.format(n=n)
        return fake_api_module.text(answer), approx_tokens(answer)

    @staticmethod
    def _memory(body: dict) -> tuple[fake_api_module.Reply, int]:
        request = request_text(body["messages"])
        shown = re.search(r"<current-memory>\n(.*?)\n</current-memory>", request, re.DOTALL)
        numbered = shown.group(1).splitlines() if shown else []
        conversations = request.split("<conversations>", 1)[-1]
        new = []
        for decision in re.findall(r"Decision: ([^.\n]+)\.", conversations):
            line = f"- {decision}."
            if line not in request.split("<conversations>", 1)[0] and line not in new:
                new.append(line)
        if not new:
            reply = "<edits></edits>"
        else:
            reply = "<edits>\n@@ insert after {}\n{}\n</edits>".format(
                len(numbered), "\n".join(new)
            )
        return fake_api_module.text(reply), approx_tokens(reply)


@dataclass
class Calls:
    """One model's calls and tokens (output as the scripted replies' characters / 4)."""

    calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)

    def add(self, reported: dict, output_tokens: int) -> None:
        self.calls += 1
        self.usage = self.usage + replace(TokenUsage(**reported), output_tokens=output_tokens)

    def cost(self, ratio: float = 1.0) -> float:
        """In uncached chat-model input tokens."""
        u = self.usage
        return ratio * (
            u.input_tokens
            + CACHE_WRITE * u.cache_creation_input_tokens
            + CACHE_READ * u.cache_read_input_tokens
            + OUTPUT * u.output_tokens
        )

    def cost_uncached(self, ratio: float = 1.0) -> float:
        """The same tokens as if the requests marked no cache breakpoint."""
        u = self.usage
        return ratio * (u.total_input_tokens + OUTPUT * u.output_tokens)


@dataclass
class Run:
    """What one session cost, and what the memory holds after it."""

    name: str
    chat: Calls
    memory: Calls
    refreshes: list[tuple[float, str, TokenUsage]]  # (minute, outcome, usage) per attempt
    document: str
    unfolded: int
    session_minutes: float


async def session(name: str, *, debounce_s: float, max_wait_s: float = MAX_WAIT_S) -> Run:
    """Run the 20-turn session with the refresh queue's quiet time ``debounce_s`` and its
    bound ``max_wait_s``."""
    gaps = random.Random(SEED)
    with (
        tempfile.TemporaryDirectory() as tmp,
        fake_api_module.FakeAnthropic(min_cacheable_tokens=MIN_CACHEABLE_TOKENS) as fake,
    ):
        models = ScriptedModels()
        fake.respond_with(models)
        os.environ["ANTHROPIC_BASE_URL"] = fake.url
        os.environ["ANTHROPIC_API_KEY"] = "bench-key"
        (Path(tmp) / "data").mkdir()
        timers = ManualTimers()
        fake.cache.clock = timers.clock
        clients = ModelClients(timeout_s=120.0)
        core = open_core(
            Path(tmp) / "data",
            clock=timers.clock,
            timer_scheduler=timers.schedule,
            model_client=clients,
            debounce_s=debounce_s,
            max_wait_s=max_wait_s,
        )
        started = timers.now
        try:
            settings = core.settings.current()
            core.settings.save(replace(settings, chat_model=CHAT_MODEL, memory_model=MEMORY_MODEL))
            folder = project_folder(Path(tmp), "proj", files=FILES)
            workspace = await core.workspaces.open(str(folder))
            await core.memory.save(workspace.id, DOCUMENT, expected_version=0)
            chat_session = (await core.chat.create_session(workspace.id)).id
            refreshes: list[tuple[float, str, TokenUsage]] = []
            core.bus.subscribe(
                RefreshFinished,
                lambda e: refreshes.append(
                    ((timers.now - started) / 60, str(e.outcome.status), e.outcome.usage)
                ),
            )

            async def pass_time(seconds: float) -> None:
                """Move the clock on, letting every refresh that falls due run at its time."""
                target = timers.now + seconds
                while due := [t.due for t in timers.armed() if t.due <= target]:
                    timers.advance(max(min(due) - timers.now, 0.0))
                    await core.refresh.queue.wait_idle()
                timers.advance(target - timers.now)

            for turn in range(TURNS):
                if turn:
                    await pass_time(gaps.uniform(*GAPS_S))
                finished = await core.chat.send(
                    workspace, chat_session, prompt_of(turn), approver=allow
                )
                if finished.status != "completed":
                    raise SystemExit(f"turn {turn + 1} ended {finished.status}: {finished.error}")
            core.refresh.conversation_closed(workspace.id)  # the person is done
            session_minutes = (timers.now - started) / 60
            await pass_time(max_wait_s)  # whatever still waits runs
            await core.refresh.queue.wait_idle()

            chat, memory = Calls(), Calls()
            for request, output in zip(fake.message_requests, models.output_tokens, strict=True):
                calls = memory if request.body["model"] == MEMORY_MODEL else chat
                calls.add(request.usage or {}, output)
            document = (await core.memory.read(workspace.id)).content
            unfolded = len(core.chat.conversations.unfolded_messages(workspace.id))
            return Run(name, chat, memory, refreshes, document, unfolded, session_minutes)
        finally:
            await core.aclose()
            await clients.aclose()


def _row(label: str, calls: Calls, cost: float, total: float) -> str:
    u = calls.usage
    return (
        f"{label:>8} {calls.calls:>6} {u.input_tokens:>9,} {u.cache_creation_input_tokens:>9,} "
        f"{u.cache_read_input_tokens:>9,} {u.output_tokens:>8,} {cost:>11,.0f} {cost / total:>6.1%}"
    )


def report(run: Run, ratio: float, *, comparison: bool) -> tuple[float, int, list[str]]:
    """Print one run's table; returns the memory's share of the cost, its calls and the
    decisions missing from the final document."""
    chat_cost, memory_cost = run.chat.cost(), run.memory.cost(ratio)
    total = chat_cost + memory_cost
    print(f"\n{run.name} ({run.session_minutes:.0f} minutes of conversation)")
    print(
        f"{'model':>8} {'calls':>6} {'input':>9} {'cache wr':>9} {'cache rd':>9} {'output':>8} "
        f"{'cost':>11} {'share':>6}"
    )
    print(_row("chat", run.chat, chat_cost, total))
    print(_row("memory", run.memory, memory_cost, total))
    outcomes: dict[str, int] = {}
    for _minute, status, _usage in run.refreshes:
        outcomes[status] = outcomes.get(status, 0) + 1
    missing = [d for d in DECISIONS.values() if f"- {d}." not in run.document]
    if not comparison:
        for minute, status, usage in run.refreshes:
            print(
                f"  refresh at {int(minute):>2}:{round(minute % 1 * 60):02d}: {status:<10} "
                f"{usage.input_tokens:>6,} in, {usage.cache_creation_input_tokens:>6,} written, "
                f"{usage.cache_read_input_tokens:>6,} read from cache"
            )
    share = memory_cost / total
    uncached = run.memory.cost_uncached(ratio)
    print(
        f"memory upkeep: {share:.1%} of the session's cost; {run.memory.calls} refresh call(s) "
        f"for {TURNS} turns ({', '.join(f'{n} {s}' for s, n in sorted(outcomes.items()))}); "
        f"without cache breakpoints the same calls would cost {uncached:,.0f} "
        f"({uncached / memory_cost:.2f}x)"
        if memory_cost
        else "memory upkeep: nothing"
    )
    print(
        f"final document: {len(run.document.splitlines())} lines, "
        f"≈{estimate_tokens(run.document):,} tokens in every chat request; "
        f"{len(DECISIONS) - len(missing)} of {len(DECISIONS)} decisions in it"
        + (f" (missing: {'; '.join(missing)})" if missing else "")
        + f"; {run.unfolded} message(s) not folded in"
        + (" (a comparison: no target)" if comparison else "")
    )
    return share, run.memory.calls, missing


async def main(ratio: float) -> None:
    print(
        f"A human-paced session: {TURNS} turns {GAPS_S[0]:g}-{GAPS_S[1]:g} s apart, a file read "
        f"every turn and an edit every other turn, {len(DECISIONS)} decisions, a 150-line "
        f"memory; cost in chat-model "
        f"input tokens (cache writes x{CACHE_WRITE}, reads x{CACHE_READ}, output x{OUTPUT:g}; "
        f"memory model x{ratio:.3g})"
    )
    idle = await session(
        f"idle timing: {DEFAULT_IDLE_S:g} s of quiet, closed -> {SETTLE_S:g} s",
        debounce_s=DEFAULT_IDLE_S,
    )
    share, calls, missing = report(idle, ratio, comparison=False)
    today = await session(
        f"the timing before (for comparison): {TODAY_DEBOUNCE_S:g} s debounce",
        debounce_s=TODAY_DEBOUNCE_S,
    )
    today_share, today_calls, _ = report(today, ratio, comparison=True)
    print(
        f"\n{'timing':>22} {'refresh calls':>13} {'per 5 turns':>11} {'upkeep share':>12}\n"
        f"{'idle (default)':>22} {calls:>13} {calls * 5 / TURNS:>11.2f} {share:>12.1%}\n"
        f"{'10 s debounce (before)':>22} {today_calls:>13} {today_calls * 5 / TURNS:>11.2f} "
        f"{today_share:>12.1%}"
    )
    print(f"\n{'bound (idle timing)':>22} {'refresh calls':>13} {'upkeep share':>12}")
    for bound in (600.0, MAX_WAIT_S, 1800.0):
        run = idle if bound == MAX_WAIT_S else None
        if run is None:
            run = await session(f"bound {bound:g} s", debounce_s=DEFAULT_IDLE_S, max_wait_s=bound)
        memory_cost = run.memory.cost(ratio)
        print(
            f"{f'{bound / 60:g} minutes' + (' (default)' if run is idle else ''):>22} "
            f"{run.memory.calls:>13} {memory_cost / (run.chat.cost() + memory_cost):>12.1%}"
        )
    targets.target(
        "memory upkeep, human-paced 20-turn session: share of cost",
        f"{share:.1%} (10 s debounce: {today_share:.1%})",
        "<= 5%",
        share <= 0.05,
    )
    targets.target(
        "memory upkeep, human-paced 20-turn session: refresh calls",
        f"{calls} for {TURNS} turns (10 s debounce: {today_calls})",
        f"<= {TURNS // 5}",
        calls <= TURNS // 5,
    )
    targets.target(
        "memory upkeep, human-paced 20-turn session: decisions kept",
        f"{len(DECISIONS) - len(missing)} of {len(DECISIONS)}, {idle.unfolded} unfolded",
        f"{len(DECISIONS)} of {len(DECISIONS)}, 0 unfolded",
        not missing and idle.unfolded == 0,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--memory-price-ratio",
        type=float,
        default=DEFAULT_PRICE_RATIO,
        help="the memory model's price per token relative to the chat model's "
        "(default 1/3: Claude Haiku 4.5 against Claude Sonnet 4.5)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="ignored: the counts are deterministic"
    )
    asyncio.run(main(parser.parse_args().memory_price_ratio))
