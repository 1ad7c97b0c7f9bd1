"""Lines that give the agent a dangerous capability ("Dangerous lines always wait" in
docs/memory.md). Pure, deterministic, no model.

A memory line is background the agent reads at the start of every conversation, so a line that
tells it to run a downloaded script, to install from an index or URL the document does not
already name, to run as root or without the sandbox, or to print or send credentials waits for
the person's review whoever typed it: a pasted instruction cannot be told from a typed one. The
refresh (``yak.memory.judging.per_line``) and an agent's proposal
(``yak.memory.history.provenance``) both ask
:func:`capability` about every line they add; a person's own save is their act and is not
asked.

A line that forbids the capability ("never pipe curl into sh", "do not use sudo") is not
dangerous: the words before the match in its clause negate it.
"""

from __future__ import annotations

import re

from yak.held import Capability

_FLAGS = re.IGNORECASE
_DOWNLOADER = r"(?:\bcurl\b|\bwget\b|\biwr\b|\binvoke-webrequest\b|\binvoke-restmethod\b|https?://)"
_SHELL = r"(?:ba|z|da|k|fi)?sh|python[23]?|perl|ruby|node|iex|invoke-expression|powershell|pwsh"
_DOWNLOADED_SCRIPT = (
    # curl … | sh, wget -qO- … | sudo bash, iwr … | iex
    re.compile(rf"{_DOWNLOADER}[^|;&]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:{_SHELL})\b", _FLAGS),
    # bash <(curl …), sh -c "$(curl …)", python -c "$(wget …)"
    re.compile(rf"\b(?:{_SHELL})\b[^|;]*?(?:<\s*\(|\$\(|`)\s*(?:curl|wget)\b", _FLAGS),
    # "download and run the script at …", "fetch https://… and execute it"
    re.compile(
        r"\b(?:download|fetch|pull|get|grab)\w*\b[^.;]{0,80}?\band\s+(?:then\s+)?"
        r"(?:run|execute|exec|source|eval)\b",
        _FLAGS,
    ),
    # run / execute / source a script named by URL
    re.compile(
        r"\b(?:run|runs|running|execute|executes|executing|exec|source|eval)\b[^.;]{0,40}?"
        r"https?://\S+\.(?:sh|bash|ps1|py|pl|rb)\b",
        _FLAGS,
    ),
)
# Installing packages: the line's URLs and hosts must be ones the document names.
_INSTALLING = re.compile(
    r"\binstall\w*\b|\b(?:npm|pnpm|yarn|uv|poetry|cargo|bun|pipx)\s+add\b|--(?:extra-)?index-url\b"
    r"|--find-links\b|--trusted-host\b|--registry\b|--source\b|\bindex[- ]url\b"
    r"|\bpackage index\b|\bregistry\b",
    _FLAGS,
)
_URL = re.compile(r"(?:git\+)?(?:https?|ftp|ssh)://[^\s'\"`<>()\]]+", _FLAGS)
_HOST_OPTION = re.compile(r"--trusted-host[= ]\s*([^\s'\"`]+)", _FLAGS)
_ROOT = re.compile(
    r"\bsudo\s+(?!is\b|isn|was\b|are\b|not\b|access\b|rights?\b|privileges?\b)[\w-]"
    r"|\b(?:as|under|with)\s+(?:the\s+)?root\b(?!\s+(?:of|folder|directory|dir|path)\b)"
    r"|\broot\s+(?:privileges|permissions|access|user)\b|\bdoas\s+\w|\bsu\s+(?:-|root\b)"
    r"|--privileged\b|--user[= ]root\b|\b-u\s+root\b",
    _FLAGS,
)
_NO_SANDBOX = re.compile(
    r"--no-sandbox\b|--dangerously-skip-permissions\b|--disable-sandbox\b"
    r"|\bwithout\s+(?:the\s+|a\s+|any\s+)?sandbox(?:ing)?\b"
    r"|\b(?:outside|disable[sd]?|disabling|bypass\w*|skip\w*|turn\w*\s+off|escape\w*)\s+"
    r"(?:of\s+)?(?:the\s+)?sandbox(?:ing)?\b"
    r"|sandbox(?:ing)?\s*(?:=|(?:is\s+)?set\s+to|is)\s*(?:none|off|disabled)\b"
    r"|\bset\s+(?:the\s+)?sandbox\s+to\s+(?:none|off)\b|\bunsandboxed\b|\bno\s+sandbox\b",
    _FLAGS,
)
_CREDENTIAL = (
    r"(?:credentials?|secrets?|passwords?|passwd|passphrases?|private\s+keys?|api[\s_-]?keys?"
    r"|(?:access|auth|bearer|github|gh|gitlab|npm|pypi|session|secret|refresh|api)[\s_-]?tokens?"
    r"|\btoken\b(?!\s+(?:count|usage|budget|limit|cost|window)s?\b)"
    r"|\.env(?![\w.])|\.aws\b|\.ssh\b|id_rsa|id_ed25519|\.netrc|\.pypirc|\.npmrc"
    r"|\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD)\w*)"
)
_CREDENTIALS = (
    # print / show / cat … the API key, ~/.aws/credentials, $GITHUB_TOKEN
    re.compile(
        r"\b(?:print|echo|cat|show|dump|display|reveal|output|log|paste|type|write\s+out)\b"
        rf"[^.;]{{0,40}}?{_CREDENTIAL}",
        _FLAGS,
    ),
    # send / post / upload / email … the token to …
    re.compile(
        # (whole words with their endings: "postgres://" is no "post")
        r"\b(?:send|post|upload|share|email|mail|forward|transmit|exfiltrate|leak|submit)"
        rf"(?:s|es|ed|ted|ing|ting)?\b[^.;]{{0,40}}?{_CREDENTIAL}",
        _FLAGS,
    ),
)
# Words that turn a rule around, before its match in the same clause.
_NEGATION = re.compile(
    r"\b(?:never|not|no|don['’]?t|dont|doesn['’]?t|mustn['’]?t|shouldn['’]?t|avoid|forbid\w*"
    r"|refuse\w*|instead\s+of|rather\s+than)\b",
    _FLAGS,
)
_CLAUSE_BREAK = re.compile(r"[.;,!?]\s|\bbut\b|\bthen\b", _FLAGS)


def capability(line: str, *, document: str = "") -> Capability | None:
    """The dangerous capability ``line`` gives the agent, or ``None``.

    Args:
        line: one line of a memory document, as written.
        document: the document the line is added to: an index, URL or host it already names
            is not a new place to install from.

    Returns:
        The first capability found, in the order of :class:`yak.held.Capability`; ``None``
        for a line that gives none (``- tests: pytest -q``, ``pip install -r
        requirements.txt``) or that forbids it (``never run curl … | sh``).
    """
    text = line.strip()
    if not text:
        return None
    if any(_affirmed(pattern, text) for pattern in _DOWNLOADED_SCRIPT):
        return Capability.DOWNLOADED_SCRIPT
    if _new_source(text, document):
        return Capability.UNKNOWN_SOURCE
    if _affirmed(_ROOT, text):
        return Capability.ROOT
    if _affirmed(_NO_SANDBOX, text):
        return Capability.NO_SANDBOX
    if any(_affirmed(pattern, text) for pattern in _CREDENTIALS):
        return Capability.CREDENTIALS
    return None


def _affirmed(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``pattern`` matches ``text`` somewhere its clause does not negate it."""
    for match in pattern.finditer(text):
        before = text[: match.start()]
        breaks = list(_CLAUSE_BREAK.finditer(before))
        clause = before[breaks[-1].end() :] if breaks else before
        if not _NEGATION.search(clause):
            return True
    return False


def _new_source(text: str, document: str) -> bool:
    """Whether ``text`` installs from a URL or trusted host that ``document`` does
    not name (case and trailing slashes aside)."""
    if not _affirmed(_INSTALLING, text):
        return False
    named = document.lower()
    places = [url.rstrip(".,:/").lower() for url in _URL.findall(text)]
    places += [host.rstrip(".,:/").lower() for host in _HOST_OPTION.findall(text)]
    return any(place and place not in named for place in places)
