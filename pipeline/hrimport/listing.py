"""Lists of names in one-line messages, kept short whatever the file: a few items, then a count.

A header of 10,000 columns, or a workbook of 400,000 strings, must not make an error line of 100 KB:
a message names at most ``SHOWN`` items (each cut to ``WIDTH`` characters) and says how many more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

#: How many items a message names before it counts the rest.
SHOWN = 5
#: The longest an item is shown, in characters.
WIDTH = 60


def shorten(text: str, width: int = WIDTH) -> str:
    """``text`` cut to ``width`` characters, with an ellipsis when cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


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
