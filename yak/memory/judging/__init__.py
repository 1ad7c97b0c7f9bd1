"""Judging a candidate memory document: whether a refresh's reply or an agent's proposal may
be applied, and line by line what waits for review and why ("What a rewrite may add" in
docs/memory.md). Pure.

Public modules: ``pipeline`` (the one pipeline for every candidate), ``guards`` (the document as
a whole: not a document, placeholders, the ceiling, the floor), ``review_rules`` (why a
rewrite judged whole waits), ``per_line`` (each added and removed line of a refresh decided),
``grounding`` (which passage backs an added line), ``removals`` (why a line was removed),
``dangerous`` (lines that always wait), ``quotes`` (a tool call's quotes checked); and what lines
are compared by: ``said`` (the conversations cut into passages), ``words`` (tokens and content
words), ``kinds`` (instructions, structure, lines that say nothing) and ``index`` (texts indexed
by word).
"""
