"""The tools a question is about: a lexical ranking of the live tools, for a shortlist the constrained
turn may choose from.

Small models choose tools badly: measured on the repository's questions, SmolLM2-135M and Gemma 3 270M
picked by the list's position or by a name they liked (one of six sqlite tools for every question), not
by the question. Narrowing the choice before the model makes it is the usual remedy where an agent has
many tools: rank the tools against the question and offer the first few. Here the ranking is BM25 over
each tool's name, title, description and parameter names: no model, no network, and the same answer
for the same question and tools. Constrained (``--constrain``), the bridge holds the turn to a call of a
shortlisted tool or an answer in words; the system prompt still describes every tool (it is the cached
prefix of every turn, and the model may need the others' names to answer), and every call is still
checked against the full catalog.

When nothing of the question matches any tool (every score 0), there is nothing to narrow by, and the
whole list is offered.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

#: Words that say nothing about which tool is meant.
_STOPWORDS = frozenset(
    "a an and any are as at be by can could do does for from give have how i in is it its me my of on or "
    "please show tell that the there these this those to was what when where which who with you your".split()
)
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
#: BM25's usual parameters: term-frequency saturation and length normalisation.
_K1, _B = 1.2, 0.75


def words(text: str) -> list[str]:
    """``text`` as lower-case words: ``snake_case`` and ``camelCase`` split, stop words dropped, a
    plural's ``s`` taken off (``tables`` and ``table`` are one word)."""
    found = []
    for word in _WORD.findall(_CAMEL.sub(r"\1 \2", text).lower()):
        if word in _STOPWORDS:
            continue
        if len(word) > 4 and word.endswith("ies"):
            word = word[:-3] + "y"
        elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    return found


def _document(tool: dict[str, Any]) -> list[str]:
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    names = list(properties) if isinstance(properties, dict) else []
    parts = [str(tool.get("name") or ""), str(tool.get("title") or ""), str(tool.get("description") or ""), *names]
    return words(" ".join(parts))


def scores(question: str, tools: list[dict[str, Any]]) -> list[float]:
    """Each tool's BM25 score for ``question`` (0: no word in common)."""
    documents = [_document(tool) for tool in tools]
    if not documents:
        return []
    average = sum(map(len, documents)) / len(documents) or 1.0
    holding = Counter(word for document in documents for word in set(document))
    asked = set(words(question))
    result = []
    for document in documents:
        counts = Counter(document)
        score = 0.0
        for word in asked:
            count = counts.get(word, 0)
            if not count:
                continue
            rarity = math.log(1 + (len(documents) - holding[word] + 0.5) / (holding[word] + 0.5))
            score += rarity * count * (_K1 + 1) / (count + _K1 * (1 - _B + _B * len(document) / average))
        result.append(score)
    return result


def shortlist(question: str, tools: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """The ``size`` tools that score best for ``question``, in their listing order; every tool when
    ``size`` covers them all or no tool scores above 0. Ties at the cut are broken by listing order."""
    if size <= 0 or len(tools) <= size:
        return list(tools)
    ranked = scores(question, tools)
    if not any(ranked):
        return list(tools)
    best = sorted(range(len(tools)), key=lambda index: (-ranked[index], index))[:size]
    return [tools[index] for index in sorted(best)]
