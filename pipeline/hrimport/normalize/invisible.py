"""Characters nobody sees in a value sent: a zero-width space, a direction mark, a soft hyphen, a word joiner.

They come with text pasted from a web page, a chat or an e-mail into the HR system, and a cell shows nothing of
them. Sent as written, the platform holds a value other than the one everybody sees: an id ``E001`` followed
by a zero-width space is another person than ``E001`` (added beside them; next month's export without the
character "changes" them again), and a phone number or a name no search finds. Removing the character would
alter the value unseen (principle 1), and some scripts write such characters on purpose: Persian puts a
zero-width non-joiner inside words, Thai a zero-width space between them, an emoji sequence a zero-width
joiner. So ``flag_invisible_characters`` gives each value of a text field (an id, a name, a phone number) or of
custom data holding one an ``invisible-character`` warning on its row, naming the column, the character and
where it is, and keeps the value as written; ``strict_checks = ["invisible-character"]`` holds the row back
instead. A character that a script writes on purpose, where that script is (``schemas/invisible_characters.toml``:
a joiner beside Persian or Malayalam letters or in an emoji, a zero-width space beside Thai, a direction mark in
a value holding Hebrew or Arabic), says nothing; the same character in Latin, Cyrillic or Chinese text, and a
soft hyphen, a word joiner or a byte-order mark anywhere, is told. An e-mail has its own check (``not-an-email`` names such a
character), and a date, a country or a number holding one is not read as such.
"""

from __future__ import annotations

import tomllib
import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hrimport.listing import INVISIBLE, INVISIBLE_RANGES
from hrimport.outcomes import Problem
from hrimport.resources import data_dir

if TYPE_CHECKING:
    from hrimport.mapper import MappedTable

INVISIBLE_CHARACTER = "invisible-character"

# any of them, for RE2 (through pyarrow): most columns hold none, and are done with in one pass each
_ANY = "[" + "".join(rf"\x{{{first:X}}}-\x{{{last:X}}}" for first, last in INVISIBLE_RANGES) + "]"
# the first bytes of each in UTF-8: U+00AD, U+061C, U+180E, U+200B-U+206F (E2 80, E2 81), U+FEFF
_LEADS = tuple(sorted({chr(c).encode()[:2] for first, last in INVISIBLE_RANGES for c in range(first, last + 1)}))
#: ``beside``/``within`` of ``schemas/invisible_characters.toml`` standing for an emoji, not a script's name
_EMOJI = "EMOJI"


@dataclass(frozen=True)
class ScriptsWriting:
    """The scripts that write an invisible character on purpose (``schemas/invisible_characters.toml``): as the
    first words of their characters' Unicode names, ``beside`` it, or anywhere ``within`` the value."""

    beside: tuple[str, ...] = ()
    within: tuple[str, ...] = ()


@cache
def scripts_writing() -> dict[str, ScriptsWriting]:
    """Each invisible character some script writes on purpose, and those scripts (the schemas table)."""
    with (data_dir("schemas") / "invisible_characters.toml").open("rb") as fh:
        tables = tomllib.load(fh)
    found: dict[str, ScriptsWriting] = {}
    for table in tables.values():
        scripts = ScriptsWriting(tuple(table.get("beside", ())), tuple(table.get("within", ())))
        for code in table["characters"]:
            found[chr(int(code.removeprefix("U+"), 16))] = scripts
    return found


def flag_invisible_characters(mapped: MappedTable, *, strict: bool = False) -> None:
    """An ``invisible-character`` warning on each row whose text field or custom data holds a character
    nobody sees (module docstring); an error (the row held back) with ``strict``."""
    for text in mapped.text_columns():
        cells = pa.array(text.cells.array, type=pa.large_string())
        if not _may_hold(cells):
            continue
        hits = pc.match_substring_regex(cells, _ANY).fill_null(False)
        for position in np.flatnonzero(hits.to_numpy(zero_copy_only=False)).tolist():
            value = text.cells.iat[position]
            unseen = _unseen(value)
            if unseen is not None:
                mapped.add_problem(position, invisible_problem(mapped.row_numbers[position], text.column, text.field,
                                                               value, unseen, key=text.key, strict=strict))


def _may_hold(cells: pa.Array | pa.ChunkedArray) -> bool:
    """Whether the text of ``cells`` may hold an invisible character: its bytes hold the first two of one in
    UTF-8. Most columns are ASCII, told in one pass over their bytes (0.06 ms a 100,000-row column, where RE2
    takes 12 ms to look into each cell); in the others each first byte is looked for alone (memchr) before
    the two."""
    for chunk in cells.chunks if isinstance(cells, pa.ChunkedArray) else [cells]:
        data = chunk.buffers()[2]
        text = data.to_pybytes() if data is not None else b""
        if not text.isascii() and any(lead[:1] in text and lead in text for lead in _LEADS):
            return True
    return False


def _unseen(value: str) -> tuple[str, str] | None:
    """The first character of ``value`` nobody sees that no script's writing explains
    (``schemas/invisible_characters.toml``), and where it is ("at the start", "at the end", "after 'E00'");
    None when each is explained."""
    writing = scripts_writing()
    for at, char in enumerate(value):
        if char not in INVISIBLE:
            continue
        scripts = writing.get(char)
        if scripts is not None and (_beside(value, at, scripts.beside) or _within(value, scripts.within)):
            continue
        where = ("at the start" if not at else "at the end" if at == len(value) - 1 else
                 f"after '{_shown(value[max(0, at - 12): at])}'")
        return char, where
    return None


def _beside(value: str, at: int, scripts: tuple[str, ...]) -> bool:
    """Whether the character before or after ``value[at]`` (other invisible ones passed over) is of one of
    ``scripts``."""
    before = next((c for c in reversed(value[:at]) if c not in INVISIBLE), "")
    after = next((c for c in value[at + 1:] if c not in INVISIBLE), "")
    return any(_of(c, scripts) for c in (before, after) if c)


def _within(value: str, scripts: tuple[str, ...]) -> bool:
    return bool(scripts) and any(_of(c, scripts) for c in value if ord(c) > 0x7F and c not in INVISIBLE)


def _of(char: str, scripts: tuple[str, ...]) -> bool:
    """Whether ``char`` is of one of ``scripts`` (its Unicode name begins with one, as a word), or an emoji (a
    symbol, or the variation selector that makes one) where they list EMOJI."""
    if _EMOJI in scripts and (unicodedata.category(char) == "So" or "\ufe00" <= char <= "\ufe0f"):
        return True
    name = unicodedata.name(char, "")
    return any(name.startswith(script) and name[len(script): len(script) + 1] in (" ", "-") for script in scripts)


def _shown(text: str) -> str:
    return "".join(c for c in text if c not in INVISIBLE)


def invisible_problem(row: int, column: str, field: str | None, value: str, unseen: tuple[str, str], *,
                      key: bool, strict: bool) -> Problem:
    """The problem of ``value`` holding ``unseen`` (the character, where it is); ``key``: the value is the
    person's external id."""
    char, where = unseen
    named = unicodedata.name(char, "").lower() or "an invisible character"
    shown = _shown(value)
    said = (f"Row {row}, column '{column}': '{shown}' holds a character nobody sees, U+{ord(char):04X} ({named}), "
            f"{where}: the platform would hold a value other than the one the sheet shows"
            + (f" (a person other than '{shown}')" if key else ""))
    done = ("; not sent (strict_checks lists invisible-character). Retype the value in the cell (or delete the "
            "character) and import the file again." if strict else
            "; kept as written. Retype the value in the cell (or delete the character) in the HR system.")
    return Problem(INVISIBLE_CHARACTER, said + done, row, column, field, value,
                   severity="error" if strict else "warning")


__all__ = ["INVISIBLE_CHARACTER", "flag_invisible_characters"]
