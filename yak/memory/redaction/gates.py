"""Literal gates for secret redaction (``yak.memory.redaction.scan``): a regular expression of many
literals factored into a prefix tree, and one search that tells which groups of literals occur
in a text, so each pattern runs only where a literal it needs is present."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_Trie = dict[str, "_Trie"]


def alternation(words: Iterable[str]) -> str:
    """A regular expression matching any of ``words``, factored into a prefix tree
    (``p(?:ass|wd?)``): Python's engine tries every alternative of a flat ``a|b|c`` at every
    position, while a tree's first characters let it skip most positions at once."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        branches = [re.escape(char) + emit(node[char]) for char in sorted(node) if char]
        if not branches:
            return ""
        if len(branches) == 1 and "" not in node:
            return branches[0]
        group = "(?:" + "|".join(branches) + ")"
        return group + "?" if "" in node else group

    return emit(trie)


class Gates:
    """Which of several groups of literals occur in a text, found with one search.

    ``present(text)`` gives the indexes of the groups one of whose literals is in ``text``.
    The search looks for a literal starting at every position (a look-ahead, so a literal
    inside another is found too); where several start at one position the prefix tree reports
    the longest, so each literal also stands for the groups of every literal it begins with.
    A long text (a pasted blob, where the literals recur thousands of times) is checked one
    literal at a time instead.
    """

    def __init__(self, groups: Sequence[Iterable[str]]) -> None:
        owners: dict[str, set[int]] = {}
        for index, group in enumerate(groups):
            for literal in group:
                owners.setdefault(literal, set()).add(index)
        self.any = re.compile(alternation(owners))  # whether one is there at all: faster
        self._pattern = re.compile("(?=(" + alternation(owners) + "))")
        self._owners = owners
        self._groups = {
            literal: frozenset(
                index for prefix in owners if literal.startswith(prefix) for index in owners[prefix]
            )
            for literal in owners
        }

    def present(self, text: str) -> set[int]:
        found: set[int] = set()
        if self.any.search(text) is None:
            return found
        if len(text) > 2_000:
            for literal, indexes in self._owners.items():
                if literal in text:
                    found |= indexes
            return found
        for match in self._pattern.finditer(text):
            found |= self._groups[match.group(1)]
        return found
