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
instead. A character between two letters of a script other than Latin's ASCII (Persian, Thai, Hebrew, an
emoji) is part of that script's writing and says nothing; so is a (non-)joiner after a virama, at a word's end
too (Malayalam's chillu: a name ending in n, l, r). An e-mail has its own check (``not-an-email`` names such a
character), and a date, a country or a number holding one is not read as such.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hrimport.fields import by_name
from hrimport.listing import INVISIBLE, INVISIBLE_RANGES
from hrimport.outcomes import Problem

if TYPE_CHECKING:
    from hrimport.mapper import MappedTable

INVISIBLE_CHARACTER = "invisible-character"

# any of them, for RE2 (through pyarrow): most columns hold none, and are done with in one pass each
_ANY = "[" + "".join(rf"\x{{{first:X}}}-\x{{{last:X}}}" for first, last in INVISIBLE_RANGES) + "]"
# the first bytes of each in UTF-8: U+00AD, U+061C, U+180E, U+200B-U+206F (E2 80, E2 81), U+FEFF
_LEADS = tuple(sorted({chr(c).encode()[:2] for first, last in INVISIBLE_RANGES for c in range(first, last + 1)}))
_KINDS = ("text",)  # the fields whose value is any text; custom data too
# a joiner or non-joiner after a virama (combining class 9) is how Unicode writes the Indic scripts' dead consonant
# forms (Malayalam's chillu before Unicode 5.1, still typed so; Devanagari's explicit halant), a word's end included
_JOINERS, _VIRAMA = "\u200c\u200d", 9


def flag_invisible_characters(mapped: MappedTable, *, strict: bool = False) -> None:
    """An ``invisible-character`` warning on each row whose text field or custom data holds a character
    nobody sees (module docstring); an error (the row held back) with ``strict``."""
    specs = by_name(mapped.fields)
    for frame, sources, is_field in ((mapped.frame, mapped.field_sources, True),
                                     (mapped.custom, mapped.custom_sources, False)):
        for name in frame.columns:
            if is_field and (name not in specs or specs[name].kind not in _KINDS):
                continue
            cells = pa.array(frame[name].array, type=pa.large_string())
            if not _may_hold(cells):
                continue
            hits = pc.match_substring_regex(cells, _ANY).fill_null(False)
            if not pc.any(hits).as_py():
                continue
            column = sources.get(name, name)
            for position in np.flatnonzero(hits.to_numpy(zero_copy_only=False)).tolist():
                value = frame[name].iat[position]
                unseen = _unseen(value)
                if unseen is None:
                    continue
                row = mapped.row_numbers[position]
                key = is_field and specs[name].key
                mapped.add_problem(position, invisible_problem(row, column, name if is_field else None, value,
                                                               unseen, key=key, strict=strict))


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
    """The first character of ``value`` nobody sees that no script's writing explains, and where it is
    ("at the end", "after 'E00'"); None when every such character sits between two letters of a script other
    than ASCII's."""
    for at, char in enumerate(value):
        if char not in INVISIBLE:
            continue
        before, after = value[at - 1: at] if at else "", value[at + 1: at + 2]
        if _of_a_script(before) and _of_a_script(after):
            continue
        if char in _JOINERS and before and unicodedata.combining(before) == _VIRAMA:
            continue  # Malayalam's chillu (Arjun, Kiran: a virama and a joiner at the end), a halant shown
        where = ("at the start" if not at else "at the end" if at == len(value) - 1 else
                 f"after '{_shown(value[max(0, at - 12): at])}'")
        return char, where
    return None


def _of_a_script(char: str) -> bool:
    """A letter, mark or symbol of a script other than ASCII's (Persian, Thai, an emoji): one whose writing
    may hold invisible characters of its own."""
    return bool(char) and ord(char) > 0x7F and char not in INVISIBLE and unicodedata.category(char)[0] in "LMS"


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
