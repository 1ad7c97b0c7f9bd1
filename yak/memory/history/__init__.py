"""The document's history compared line by line: each line's origin and the rules that make
it trustworthy (``provenance``), a proposal's changes one hunk at a time (``hunks``), a
proposal moved onto a newer version (``merge``) and where added lines land in the document's
sections (``placement``). Pure; the line diff itself is :mod:`yak.linediff`.
"""
