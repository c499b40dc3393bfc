"""Which field a header names, from the synonym packs alone: by its text, then by its words, never a guess.

``match_header`` first looks the header up by ``header_key`` (case, spaces, punctuation and full-width forms
ignored): an **exact synonym**. Failing that, a **token match**: the header's words, leaving out the packs'
``ignore_words`` ("Date of Birth", "Email Address", "Hire Date (original)"), are exactly the words of one
listed header in any order ("Birth Date", "Email", "Hire Date"). A header whose words fit headers of two
different fields is not matched; its ``candidates`` say which, so the user sees why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hrimport.init.synonyms import Kind, Synonym, header_key, header_words, vocabulary

How = Literal["exact synonym", "token match", "values only"]


@dataclass(frozen=True)
class HeaderMatch:
    """What the packs say about one header: its target (None: no match) and how it was found."""

    column: str
    target: str | None = None
    how: How | None = None
    synonym: Synonym | None = None
    candidates: tuple[str, ...] = ()  # two or more targets the header's words fit: not matched


def match_header(column: str, kind: Kind) -> HeaderMatch:
    """The packs' reading of ``column`` for an import of ``kind``."""
    vocab = vocabulary(kind)
    found = vocab.exact.get(header_key(column))
    if found is not None:
        return HeaderMatch(column, found.target, "exact synonym", found)
    words = header_words(column)
    hits: dict[str, Synonym] = {}
    content = frozenset(w for w in words if w not in vocab.ignore_words)
    for wanted in {frozenset(words), content}:
        if wanted:
            for synonym in vocab.by_words.get(wanted, ()):
                hits.setdefault(synonym.target, synonym)
    if len(hits) == 1:
        ((target, synonym),) = hits.items()
        return HeaderMatch(column, target, "token match", synonym)
    return HeaderMatch(column, candidates=tuple(sorted(hits)))
