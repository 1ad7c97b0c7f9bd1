"""Memory that stays true after it is written: its lines' references checked against the
workspace (``references``), the workspace's own facts as evidence for grounding
(``workspace``), each line's age and the stale lines (``age``, ``stale``). See "Checked at use"
and "Age and staleness" in docs/memory.md."""
