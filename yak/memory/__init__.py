"""The memory document: storage with its rules (``store``), and the guarded LLM refresh."""
