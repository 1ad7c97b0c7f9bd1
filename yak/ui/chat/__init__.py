"""The chat panel: sessions, the streaming transcript, tool calls, approvals.

Widgets (``panel``, ``transcript``, ``input``, ``approval``) emit intent signals and are driven by
method calls; ``controller.ChatController`` owns the async side and is the only object here that
talks to the chat service.
"""
