"""The chat panel: sessions, the streaming transcript, tool calls, approvals.

Widgets (``panel``, ``transcript`` with its rows in ``blocks``, ``input``, ``approval``) emit intent
signals and are driven by method calls; ``render`` holds the transcript's pure text helpers
(Markdown to HTML, tool-call lines). ``controller.ChatController`` owns the async side and is the
only object here that talks to the chat service.
"""
