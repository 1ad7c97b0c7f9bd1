"""Memory that stays true after it is written: each line's age, the stale lines, and the
references a line names checked against the workspace ("Checked at use", "Age and staleness"
in docs/memory.md). Pure rules, no I/O."""
