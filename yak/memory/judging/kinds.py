"""The kinds of memory lines the judging rules tell apart ("What a rewrite may add" in
docs/memory.md). Pure.

- :func:`is_instruction`: a line that tells the agent what to do or what it may do.
- :func:`is_structure`: a line never checked for support (blank, a rule, a heading, a title).
- :func:`says_nothing`: a line with nothing to remember (only redaction markers, "None yet.").
"""

from __future__ import annotations

import re

from yak.memory.judging.words import COMMON_CAPS, TOKEN_EDGES, content_words
from yak.memory.lines import LIST_MARKER

# --- instructions ---------------------------------------------------------------------------

# A line's leading list marker and bold opener; a "label: value" line's label and value.
BULLET = re.compile(rf"^\s*(?:(?:{LIST_MARKER})\s+)?(?:\*\*|__)?")
LABEL = re.compile(r"^([^:`]{1,40}?)(?:\*\*|__)?:\s+(.+)$")
# fmt: off
_IMPERATIVE = frozenset((
    "run", "execute", "exec", "install", "uninstall", "reinstall", "download", "fetch", "pull",
    "print", "cat", "show", "dump", "echo", "display", "reveal", "push", "force-push", "commit",
    "deploy", "delete", "remove", "rm", "ignore", "disregard", "skip", "bypass", "disable",
    "override", "call", "invoke", "pipe", "upload", "send", "export", "source", "chmod",
    "chown", "sudo", "curl", "wget", "approve", "grant", "allow", "trust", "overwrite", "reset",
    "drop", "kill", "always", "never", "must"
))
# fmt: on
# fmt: off
_COMMANDS = frozenset((
    "pytest", "python", "python3", "pip", "pip3", "pipx", "uv", "uvx", "npm", "npx", "yarn",
    "pnpm", "make", "cargo", "go", "git", "docker", "kubectl", "helm", "curl", "wget", "sudo",
    "bash", "sh", "zsh", "rm", "chmod", "chown", "brew", "apt", "apt-get", "dnf", "yum",
    "poetry", "ruff", "mypy", "node", "deno", "bun", "xcodebuild", "gradle", "mvn", "terraform",
    "ansible", "ssh", "scp", "rsync", "cd", "export", "source", "echo", "cat", "tox", "nox",
    "pre-commit", "alembic"
))
# fmt: on
# fmt: off
_LINKING = frozenset((
    "is", "are", "was", "were", "has", "have", "had", "handles", "runs", "works", "uses", "for",
    "and", "or", "with", "on", "in", "of", "to", "as", "from", "by", "at"
))
# fmt: on
# Each pattern with the words that must be in a line for it to match (a cheap test first).
_INSTRUCTION_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (triggers, re.compile(pattern, re.IGNORECASE))
    for triggers, pattern in (
        # always / never / must / do not, as a rule
        (("always", "never", "must"), r"\b(?:always|never|must|mustn['’]?t)\b"),
        (
            ("not", "don"),
            r"(?:^|[;:,]\s*|\b(?:you|agents?|assistant|claude)\s+)(?:do not|don['’]?t|dont)\b",
        ),
        # permission
        (
            ("you", "agent", "assistant", "claude", "yak"),
            r"\b(?:you|the agent|agents?|the assistant|claude|yak)\s+(?:may|can|could|"
            r"are free to|should|need not|needn['’]?t|(?:do not|don['’]?t) (?:need|have) to)\b",
        ),
        (
            ("may",),
            r"\bmay\s+(?:\w+\s+){0,2}?(?:run|push|write|delete|install|execute|deploy|skip|"
            r"bypass|ignore|print|access|commit|merge|modify|overwrite|edit|remove|use sudo)\b",
        ),
        (
            ("allowed", "permitted"),
            r"\b(?:is|are|be)\s+(?:allowed|permitted)\b|\b(?:allowed|permitted)\s+to\b",
        ),
        (
            ("need",),
            r"\bno need to\b|\bneed not\b|\bneedn['’]?t\b|\b(?:does|do)\s*n(?:o|['’])?t need to\b",
        ),
        (
            ("fine", "ok", "safe", "alright", "acceptable"),
            r"\b(?:it is|it['’]s|its|is|are)\s+(?:fine|ok|okay|safe|alright|acceptable)\s+to\b"
            r"|\b(?:ok|okay|fine)\s+to\s+\w",
        ),
        (("feel free",), r"\bfeel free\b"),
        # approval, permission or the sandbox not needed
        (
            ("needed", "required", "necessary"),
            r"\b(?:approvals?|permissions?|confirmations?|consent|sign-?off|reviews?|asking)\b"
            r"[^.;]{0,40}?\b(?:not|never|no longer)\s+(?:needed|required|necessary)\b",
        ),
        (
            ("no ",),
            r"\bno\s+(?:approval|permission|confirmation|consent|sign-?off|review)s?\b",
        ),
        (
            ("without", "skip"),
            r"\bwithout\s+(?:asking|approval|confirmation|confirming|permission|prompting|"
            r"review|(?:the\s+|a\s+)?sandbox)|\bskip(?:s|ping)?\s+(?:the\s+)?(?:approval|"
            r"confirmation|permission|review|sandbox)",
        ),
        (
            ("approv", "authori", "grant", "given"),
            r"\b(?:pre-?approve[sd]?|auto-?approve[sd]?)\b|\b(?:approved|authori[sz]ed|granted)"
            r"\s+(?:all|every|any)\b|\b(?:has|have|is|are)\s+(?:been\s+)?(?:granted|given)\s+"
            r"(?:permission|approval|consent)|\bpermission\s+(?:is|has been)\s+granted",
        ),
        # root, sudo, outside the sandbox
        (
            ("root", "sudo", "sandbox"),
            r"\bas\s+root\b|\bsudo\b|\b(?:outside|disable|bypass)\s+(?:the\s+)?sandbox",
        ),
        # straight to main
        (
            ("directly", "straight"),
            r"\bpush\w*\b[^.;]{0,30}\b(?:main|master)\b[^.;]{0,20}\b(?:directly|straight)\b"
            r"|\b(?:directly|straight)\s+(?:to|into)\s+(?:main|master)\b",
        ),
        # ignore the rules
        (
            ("ignore", "disregard", "bypass", "override", "forget"),
            r"\b(?:ignore|disregard|bypass|override|forget)\b.{0,30}\b(?:rules?|instructions?|"
            r"guidelines?|polic(?:y|ies)|restrictions?|safety|guardrails?|system prompt|hooks?)\b",
        ),
        # where to install or fetch from
        (
            ("index", "registry", "trusted-host", "from"),
            r"--(?:extra-)?index-url\b|--trusted-host\b|--registry\b|\bindex[- ]url\b"
            r"|\bpackage index\b|\b(?:install|download|fetch|pull)\w*\b[^.;]{0,60}\bfrom\b",
        ),
        # a download piped into a shell
        (
            ("|", "<("),
            r"(?:https?://|\b(?:curl|wget|iwr|invoke-webrequest)\b).*\|\s*(?:sudo\s+)?"
            r"(?:ba|z|da|k|fi)?sh\b|\|\s*(?:sudo\s+)?(?:python3?|perl|ruby|node|iex)\b"
            r"|\b(?:bash|sh|zsh)\s+<\s*\(\s*(?:curl|wget)\b",
        ),
        # a file to print
        (
            ("print", "cat", "show", "dump", "echo", "display", "reveal", "paste", "output"),
            r"\b(?:print|cat|show|dump|echo|display|reveal|paste|output)\b[^.;]{0,40}"
            r"(?:credential|secret|token|password|passwd|\.env\b|\.aws|\.ssh|id_rsa|"
            r"private key|api key)",
        ),
    )
)


def _starts_with_instruction(text: str) -> bool:
    text = text.strip().strip("`").strip()
    words = text.split()
    if not words:
        return False
    first = words[0].strip(TOKEN_EDGES)
    if first.lower() in _IMPERATIVE:
        return True
    # a command is typed in lower case ("Python 3.13" is a name) and has an argument
    if first in _COMMANDS and len(words) > 1:
        second = words[1].lower()
        if second.startswith(("-", "/", ".", "~")) or "/" in second:
            return True
        word = second.strip(TOKEN_EDGES)
        verb = len(word) >= 5 and word.endswith("s") and not word.endswith(("ss", "us"))
        return word.isalpha() and not second.startswith("(") and word not in _LINKING and not verb
    return False


def _names_a_command(value: str) -> bool:
    """Whether a label's value is the project's command for it (``tests: pytest -q``, ``lint:
    ruff check .``): a fact about the project, not an order. A command that is also an order
    by itself (``curl``, ``sudo``, ``rm``, ``cat``…) does not count."""
    words = value.strip().strip("`").split()
    first = words[0].strip(TOKEN_EDGES) if words else ""
    return first in _COMMANDS and first.lower() not in _IMPERATIVE


def is_instruction(line: str) -> bool:
    """Whether ``line`` tells the agent what to do or what it may do ("What a rewrite may
    add" in docs/memory.md): it starts (after a bullet, or after a label like ``install:``)
    with an imperative (run, install, fetch, print, cat, push, delete, ignore, skip, always,
    never…) or with a command (``pytest -q``, ``git push``; but a command after a label,
    ``tests: pytest -q``, names the project's command: a fact); it says always, never, must or
    do not; it grants permission (you may, you can, is allowed, no need to, need not, it is
    fine to, ok to, feel free, approval … not needed, without asking, pre-approves); it runs
    as root, with sudo or outside the sandbox; it pushes straight to main; it ignores rules
    or instructions; it names an index or a place to install or fetch from (``--index-url``,
    "install from"); it pipes a download into a shell; it prints a credentials file."""
    body = BULLET.sub("", line).strip()
    if _starts_with_instruction(body):
        return True
    label = LABEL.match(body)
    if (
        label
        and len(label.group(1).split()) <= 4
        and _starts_with_instruction(label.group(2))
        and not _names_a_command(label.group(2))
    ):
        return True
    lowered = body.lower()
    return any(
        pattern.search(body)
        for triggers, pattern in _INSTRUCTION_PATTERNS
        if any(trigger in lowered for trigger in triggers)
    )


# --- structure and empty lines ---------------------------------------------------------------

_TITLE_WORDS = 4  # the most words of a section title written without "#"


def is_structure(line: str) -> bool:
    """Whether ``line`` is structure, never checked for support: a blank line, a line of no
    letter or digit (``---``), a Markdown heading (``## Decisions``), or a section title
    without ``#`` (a section is a block of lines between blank lines, its first line the
    title: docs/memory.md, "Placement"): at most ``_TITLE_WORDS`` words, all letters, no
    bullet, no name in capitals (``GKE``), not an instruction, every word capitalised or the
    line ending with a colon (``Open Questions``, ``Build:``)."""
    stripped = line.strip()
    if not any(ch.isalnum() for ch in stripped) or re.match(r"#{1,6}(?:\s|$)", stripped):
        return True  # blank, a rule (---), a heading
    words = stripped.rstrip(":").split()
    if len(words) > _TITLE_WORDS or stripped[0] in "-*+>|`" or stripped[-1] in ".!?;,":
        return False
    if not all(word.replace("-", "").replace("&", "").isalpha() for word in words):
        return False
    if any(word.isupper() and word.lower() not in COMMON_CAPS for word in words):
        return False  # a name like GKE: a fact, not a title
    titled = stripped.endswith(":") or all(word[:1].isupper() for word in words)
    return titled and not is_instruction(stripped)


_REDACTED = re.compile(r"\[REDACTED:[^\]\n]*\]")
_FILLER_EDGES = " \t-*+•>.:;,!()[]`'\"_"
_NOTHING = re.compile(
    r"(?:none|nothing|n/?a|tbd|tba)(?:\s+(?:yet|so far|noted|recorded|known|listed|to note|"
    r"to report|for now|at the moment|at present|currently))*",
    re.IGNORECASE,
)


# Pleasantries: a line made only of these (each sentence one of them) holds nothing to remember.
_PLEASANTRY = re.compile(
    r"(?:hello|hi|hey|good (?:morning|afternoon|evening|night)|thanks?(?: (?:you|a lot))?|"
    r"you too|enjoy (?:your|the) \w+|have a (?:good|nice|great) \w+|see you(?: \w+)?|bye|"
    r"goodbye|cheers|you'?re welcome|no problem)",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"[.!?]+\s*")


def _pleasantries(line: str) -> bool:
    """Whether ``line`` is only pleasantries ("Hello! Enjoy your lunch.", "Thanks, see you
    tomorrow."): each of its sentences, commas aside, one of :data:`_PLEASANTRY`."""
    body = BULLET.sub("", line).strip(_FILLER_EDGES)
    parts = [p.strip(" ,;:-") for chunk in _SENTENCES.split(body) for p in chunk.split(",")]
    parts = [p for p in parts if p]
    return bool(parts) and all(_PLEASANTRY.fullmatch(p) for p in parts)


def says_nothing(line: str) -> bool:
    """Whether ``line`` holds nothing to remember: besides ``[REDACTED:…]`` markers, list
    markers and punctuation it has no content word, or only a label before them (``- [REDACTED:
    aws-key]``, ``- API key: [REDACTED:api-key]``: the secret is gone, and what is left tells
    the agent nothing); or it is filler saying there is nothing (``None noted so far.``,
    ``- None yet.``, ``- N/A``, ``TBD``), or only pleasantries (``Hello! Enjoy your lunch.``:
    the 1.5B model listed a greeting as a fact from a chat that said nothing). A refresh does
    not add such a line ("What a rewrite may add" in docs/memory.md); a line with anything more
    (``Tests: none yet``, ``API key: in 1Password``) is checked like any other."""
    body = _REDACTED.sub(" ", line)
    if body == line:
        return _NOTHING.fullmatch(line.strip(_FILLER_EDGES)) is not None or _pleasantries(line)
    body = BULLET.sub("", body).strip(" \t.;,")
    label = LABEL.match(body)
    if label and len(label.group(1).split()) <= _TITLE_WORDS:
        body = label.group(2)  # what the label says, markers aside
    elif body.endswith(":") and len(body.split()) <= _TITLE_WORDS:
        return True  # a label whose value was only the secret
    return not content_words(body).stems
