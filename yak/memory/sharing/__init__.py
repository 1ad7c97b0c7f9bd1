"""The memory shared with other agents: its managed block in an instruction file such as
``AGENTS.md`` (``sync``, pure) and that file kept in step after every write (``kept_file``,
:class:`~yak.memory.sharing.kept_file.KeptFile`). "Sharing the memory" in docs/memory.md.
"""
