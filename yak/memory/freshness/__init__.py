"""Whether the memory still holds: its lines' references checked against the workspace
(``references``), the workspace's own facts as evidence for grounding (``workspace``), and
(beside them) each line's age. See "Checked at use" in docs/memory.md."""
