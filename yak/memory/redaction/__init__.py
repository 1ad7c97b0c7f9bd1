"""Secret redaction: credentials found in text and replaced by ``[REDACTED:kind]`` markers
before the text reaches the model or the memory document ("Secret redaction" in
docs/refresh.md). Pure.

The public face is :func:`redact` and :data:`MARKER` (both from :mod:`.scan`, the order of the
passes); ``patterns`` holds the expressions, ``values`` decides whether a match is a secret,
``gates`` runs a pattern only where a literal it needs occurs, ``library`` is the
``detect-secrets`` pass.
"""

from yak.memory.redaction.scan import MARKER, redact

__all__ = ["MARKER", "redact"]
