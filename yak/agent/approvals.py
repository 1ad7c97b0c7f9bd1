"""Approvals of mutating tool calls (write_file, edit_file, run_command): what the user allowed
for the rest of a session, and one question to the driver's ``Approver``."""

from __future__ import annotations

import logging

from yak.agent.types import ApprovalDecision, ApprovalRequest, Approver

log = logging.getLogger(__name__)

DENIED_NOTE = (
    "Denied by the user: this call was not run. Do not retry it; continue without "
    "it or ask the user."
)
DENIED_SUMMARY = "denied by user"


class SessionApprovals:
    """Tools the user allowed "for this session" (``ApprovalDecision.ALLOW_SESSION``), per
    session. Lives as long as the chat service: approvals do not survive a restart."""

    def __init__(self) -> None:
        self._allowed: dict[str, set[str]] = {}

    def allowed(self, session_id: str, tool: str) -> bool:
        """Whether ``tool`` was allowed for the rest of ``session_id``."""
        return tool in self._allowed.get(session_id, ())

    def allow(self, session_id: str, tool: str) -> None:
        """Remember ALLOW_SESSION for ``tool`` in ``session_id``."""
        self._allowed.setdefault(session_id, set()).add(tool)

    def forget(self, session_id: str) -> None:
        """Drop a session's approvals (it was deleted)."""
        self._allowed.pop(session_id, None)


async def ask(approver: Approver, request: ApprovalRequest, approvals: SessionApprovals) -> bool:
    """Whether the user allows the call (once, or for the session: then ``approvals``
    remembers it). An approver that raises denies: a broken dialog must not run the tool.
    Cancellation propagates."""
    try:
        decision = await approver(request)
    except Exception:
        log.exception("the approver failed for %s; treating it as a denial", request.tool)
        decision = ApprovalDecision.DENY
    if decision == ApprovalDecision.ALLOW_SESSION:
        approvals.allow(request.session_id, request.tool)
    return decision in (ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_SESSION)
