"""Words: how a count reads in a message ("1 tool", never "1 tools"), and how a name or a sentence
folds into the stems that catalogue search compares.

Folding is lower case, camelCase and snake_case split, a light suffix stemmer (plurals, -ing, -ed,
-e), irregular plurals met with their singular, and stop words dropped. What the search then weighs
(its synonyms, its write verbs and the other word tables) is catalogue/_ranking.py's, each table
with the case that set it. The two lists here were measured the same way (`bench/search.py`'s
tuning and development sets, as catalogue/_ranking.py's figures read):

- `STOP`: a need's glue words ("the", "of", "who") match every description. Without the list the
  first answer is right less often (tuning 0.727 -> 0.709 at 1, mean rank 0.815 -> 0.809;
  development 0.550 -> 0.543), though the tuning set's recall at 5 rises 0.945 -> 0.964.
- `_IRREGULAR`: plurals the stemmer cannot fold ("people", "children", "addresses"). Without it:
  tuning mean rank 0.815 -> 0.810, development at 1 0.451 -> 0.440.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "SPLIT",
    "STOP",
    "counted",
    "search_words",
    "stem",
    "tool_line",
]


def counted(count: int, noun: str, plural: str = "") -> str:
    """`count` and the noun that agrees with it; `plural` for a noun that does not just take an s."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

STOP = frozenset(
    "a an the of to in on for by at from with and or is are was were be been it its this that these those "
    "i me my we our you your he she they them their what which who whom whose how do does did can could "
    "should would will shall may might must all any some each every given get gets find show me please".split()
)

#: Irregular or domain words folded to one stem before stemming.
_IRREGULAR: Mapping[str, str] = {
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "data": "datum",
    "indices": "index",
    "statuses": "status",
    "aliases": "alias",
    "analyses": "analysis",
    "addresses": "address",
    "branches": "branch",
    "watches": "watch",
    "matches": "match",
    "searches": "search",
}

_LINE_LIMIT = 120


def tool_line(description: str | None, fallback: str) -> str:
    """A description's first sentence on one line, cut to a short budget."""
    text = " ".join((description or "").split())
    if not text:
        return fallback
    cut = re.search(r"(?<=[.!?])\s", text)
    if cut is not None and cut.start() >= 20:
        text = text[: cut.start()]
    text = text if len(text) <= _LINE_LIMIT else text[: _LINE_LIMIT - 3] + "..."
    return text if text.endswith((".", "!", "?")) else text + "."


def stem(word: str) -> str:
    """A light suffix stemmer: enough to meet "starred" with "star" and "issues" with "issue"."""
    word = _IRREGULAR.get(word, word)
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) >= 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # starr -> star, committ -> commit
            break
    if word.endswith("e") and len(word) >= 5:
        word = word[:-1]  # release / releas, update / updat meet their -ed and -ing forms
    return word


def search_words(text: str) -> list[str]:
    """The stems of a name or a sentence: camelCase and snake_case split, lower case, no stop words."""
    out: list[str] = []
    for part in SPLIT.findall(text):
        word = part.lower()
        if word in STOP:
            continue
        out.append(stem(word))
    return out
