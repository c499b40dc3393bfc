"""Lists of names in one-line messages, kept short whatever the file: a few items, then a count.

A header of 10,000 columns, or a workbook of 400,000 strings, must not make an error line of 100 KB:
a message names at most ``SHOWN`` items (each cut to ``WIDTH`` characters) and says how many more.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

#: How many items a message names before it counts the rest.
SHOWN = 5
#: The longest an item is shown, in characters.
WIDTH = 60
#: The longest line printed for a person (a problem quoting a 10 MB cell is cut in its middle).
LINE = 500

#: The invisible characters a value may carry unseen (pasted from a web page, a chat, Outlook): Unicode's format
#: characters (Cf) that text holds, which take no room on a screen or reorder the text around them (a soft
#: hyphen, zero-width spaces and joiners, direction marks and embeddings, a word joiner, a byte-order mark).
INVISIBLE_RANGES = ((0x00AD, 0x00AD), (0x061C, 0x061C), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
                    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF))
INVISIBLE = "".join(chr(c) for first, last in INVISIBLE_RANGES for c in range(first, last + 1))
# What would break a line or act on a terminal: C0 and C1 controls (line ends, escape sequences), Unicode's
# line and paragraph separators, and the invisible characters, which would hide what a message quotes.
_UNSHOWN = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{INVISIBLE}]")


def shorten(text: str, width: int = WIDTH) -> str:
    """``text`` cut to ``width`` characters, with an ellipsis when cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def one_line(text: str, width: int | None = LINE) -> str:
    """``text`` as one line (of at most ``width`` characters): what would break the line or act on a terminal
    written as Python writes it in a string (``\\n``, ``\\x1b``), and a longer text cut in its middle, which
    keeps a message's start (the row, the column) and its end (what to do)."""
    text = _UNSHOWN.sub(lambda m: repr(m.group())[1:-1], text)
    if width is None or len(text) <= width:
        return text
    keep = width - 3
    return f"{text[: keep - keep // 2]} … {text[len(text) - keep // 2 :]}"


def quoted(items: Sequence[str], *, shown: int = SHOWN, quote: Callable[[str], str] = repr) -> str:
    """``'a', 'b', 'c'`` or ``'a', 'b', 'c', 'd', 'e' and 9,995 more``: each item shortened and quoted
    (``repr`` by default)."""
    return some([quote(shorten(str(item))) for item in items[:shown]], len(items), separator=", ")


def some(shown: Sequence[str], total: int, *, separator: str = ", ") -> str:
    """The texts ``shown`` (the first of ``total`` items), then how many more there are."""
    listed = separator.join(shown)
    rest = total - len(shown)
    return f"{listed} and {rest:,} more" if rest > 0 else listed


def sentences(texts: Sequence[str]) -> str:
    """``texts`` as sentences one after the other, each ended with a full stop unless it ends a sentence
    already (``a broken export or a wrong mapping?``)."""
    return " ".join(text if text.endswith((".", "?", "!")) else f"{text}." for text in texts)


def columns_taken(text: str) -> int:
    """Columns ``text`` takes on a terminal: a Chinese, Japanese or Korean character takes two (陈伟明, 员工编号)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def padded(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` terminal columns (``columns_taken``), for aligned tables."""
    return text + " " * (width - columns_taken(text))
