"""What every memory rule reads a line by, defined once: a line folded for comparison, a list
marker, a code fence and the stopwords (the rules themselves are in ``judging``, ``history``,
``prompts`` and ``forms``). Pure.
"""

from __future__ import annotations

import re

# A list item's marker, as a pattern to build on: a dash, star, plus or bullet, or a number with
# a dot or a parenthesis ("1." "2)"). Each rule says what may stand around it.
LIST_MARKER = r"[-*+•]|\d+[.)]"

# A code fence line: three or more backticks or tildes, an optional info string (``python``).
FENCE = re.compile(r"^\s*(```+|~~~+)\s*[\w+.-]*\s*$")

# Words that carry no content of their own, never compared (lower case, apostrophes kept).
# fmt: off
STOPWORDS = frozenset((
    "a", "an", "the", "and", "or", "but", "nor", "so", "yet", "if", "then", "else", "when",
    "while", "where", "what", "which", "who", "whom", "whose", "why", "how", "that", "this",
    "these", "those", "there", "here", "it", "its", "it's", "is", "are", "was", "were", "be",
    "been", "being", "am", "do", "does", "did", "done", "doing", "have", "has", "had", "having",
    "will", "would", "shall", "should", "can", "could", "may", "might", "must", "i", "me", "my",
    "mine", "we", "us", "our", "ours", "you", "your", "yours", "he", "him", "his", "she", "her",
    "hers", "they", "them", "their", "theirs", "to", "of", "in", "on", "at", "by", "for",
    "from", "with", "without", "into", "onto", "over", "under", "about", "as", "than", "too",
    "very", "also", "just", "only", "even", "still", "now", "not", "no", "never", "always",
    "any", "all", "some", "each", "every", "both", "either", "neither", "more", "most", "much",
    "many", "few", "other", "such", "own", "same", "s", "t", "d", "ll", "re", "ve", "m", "don",
    "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "wouldn", "shouldn", "couldn",
    "can't", "cannot", "let", "lets", "let's", "yes", "ok", "okay", "sure", "please", "thanks",
    "thank", "via", "per", "use", "uses", "used", "using", "http", "https", "www", "com"
))
# fmt: on


def fold(text: str) -> str:
    """``text`` case folded, runs of whitespace made one space (the ends stripped): how two
    lines or passages are compared."""
    return " ".join(text.casefold().split())
