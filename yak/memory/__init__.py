"""The memory document and everything that writes it (docs/architecture.md, "yak/memory/").

At the top, the document itself: ``service`` (the only writer), ``reading`` (every read),
``document`` (its text rules), ``files``, ``search``, ``watcher`` (writes by other processes)
and ``lines`` (what every rule reads a line by). Beside them, one sub-package per concern:
``redaction`` (secrets), ``prompts`` (what the memory model and the chat are sent), ``forms``
(the reply's shape), ``judging`` (whether a candidate document may be applied, line by line),
``history`` (revisions compared line by line), ``inbox`` (proposals waiting for review) and
``sharing`` (the kept instruction file).
"""
