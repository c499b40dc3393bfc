"""The synonym packs: the headers HR systems write for each platform field, one TOML file per language.

``schemas/synonyms/<language>.toml`` lists, per kind of import (``[staff]``, ``[timeoff]``), the headers that
mean each field; ``[staff.name_parts]`` the two columns a name is written in (``first``, ``last``, in the
order they are joined, and the ``separator``); ``[timeoff.settings]`` the columns that are ``[timeoff]``
settings rather than fields (``half_day``...). All packs are merged: an export in Malay may have English
headers. A header is compared by ``header_key`` (case, spaces, punctuation and full-width forms ignored);
tests/test_init_synonyms.py checks that no key is claimed by two targets.

A target is a field name, ``name+first`` / ``name+last`` for the parts of a name, or ``setting:<key>``.
"""

from __future__ import annotations

import tomllib
import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from hrimport.resources import data_dir

Kind = Literal["staff", "timeoff"]
KINDS: tuple[Kind, ...] = ("staff", "timeoff")
PACKS_DIR = "synonyms"
FIRST_PART, LAST_PART = "name+first", "name+last"
SETTING = "setting:"


def header_words(text: str) -> tuple[str, ...]:
    """The words of a header: NFKC (full-width forms), case-folded, split at anything but letters, marks
    and digits; ``#`` is a word of its own ("Employee #"). A run of CJK characters is one word."""
    words: list[str] = []
    current: list[str] = []
    for ch in unicodedata.normalize("NFKC", text).casefold():
        if ch != "#" and unicodedata.category(ch)[0] in "LMN":
            current.append(ch)
            continue
        if current:
            words.append("".join(current))
            current = []
        if ch == "#":
            words.append("#")
    if current:
        words.append("".join(current))
    return tuple(words)


def header_key(text: str) -> str:
    """The key a header is matched on: its words run together ("Employee-ID" = "employee id" = "EmployeeID")."""
    return "".join(header_words(text))


@dataclass(frozen=True)
class Synonym:
    """One header of one pack and what it means."""

    header: str
    target: str
    pack: str


@dataclass(frozen=True)
class Vocabulary:
    """Every pack's headers for one kind of import, ready to match."""

    exact: dict[str, Synonym]  # header_key -> synonym
    by_words: dict[frozenset[str], tuple[Synonym, ...]]  # the set of a synonym's words -> synonyms
    ignore_words: frozenset[str]
    separators: dict[str, str]  # header_key of a name part -> the separator its pack joins with


def read_packs() -> dict[str, dict[str, Any]]:
    """Every pack as written: file stem (en, zh_hans...) -> its TOML."""
    folder = data_dir("schemas") / PACKS_DIR
    packs = {}
    for path in sorted(folder.glob("*.toml")):
        with open(path, "rb") as fh:
            packs[path.stem] = tomllib.load(fh)
    return packs


def pack_entries(pack: dict[str, Any], kind: Kind) -> list[tuple[str, str]]:
    """(target, header) for every header a pack lists for ``kind``."""
    table = pack.get(kind, {})
    out: list[tuple[str, str]] = []
    for target, headers in table.items():
        if target == "name_parts":
            out += [(FIRST_PART, h) for h in headers.get("first", [])]
            out += [(LAST_PART, h) for h in headers.get("last", [])]
        elif target == "settings":
            out += [(SETTING + key, h) for key, names in headers.items() for h in names]
        else:
            out += [(target, h) for h in headers]
    return out


@cache
def vocabulary(kind: Kind) -> Vocabulary:
    """The merged packs for ``kind``; where packs disagree (the test forbids it) the first pack wins."""
    exact: dict[str, Synonym] = {}
    by_words: dict[frozenset[str], list[Synonym]] = {}
    ignore: set[str] = set()
    separators: dict[str, str] = {}
    for stem, pack in read_packs().items():
        ignore.update(w for word in pack.get("ignore_words", []) for w in header_words(word))
        separator = str(pack.get(kind, {}).get("name_parts", {}).get("separator", " "))
        for target, header in pack_entries(pack, kind):
            key = header_key(header)
            if not key:
                continue
            synonym = Synonym(header, target, stem)
            exact.setdefault(key, synonym)
            group = by_words.setdefault(frozenset(header_words(header)), [])
            if all(s.target != target for s in group):
                group.append(synonym)
            if target in (FIRST_PART, LAST_PART):
                separators.setdefault(key, separator)
    return Vocabulary(exact, {k: tuple(v) for k, v in by_words.items()}, frozenset(ignore), separators)
