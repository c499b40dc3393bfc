"""The shared strings a piece of an XLSX sheet uses, as a table of their own (see ``xlsx_pieces``).

calamine parses a workbook's whole shared strings table before it reads a cell: for a piece of a sheet
read as a small workbook of its own, a table of 700,000 strings (17.7 MB) costs 0.14 s of CPU and 50 MB
every piece. So each piece gets a table of the strings its cells use, in their order in the whole table,
and its ``<c t="s"><v>N</v></c>`` references are renumbered to their place there. The entries are copied
as bytes (rich text runs, phonetic guides, ``xml:space``, entities: all as written), and a new number is
written zero-padded to the old one's width, in place (``<v>0042</v>`` reads as 42): the piece keeps its
length and no cell is touched one at a time in Python.

It is exact only where a position in the table is what calamine counts: calamine skips an entry without
a ``<t>`` element of its own or a rich text run (``<si><t/></si>``), so a table holding anything but
entries starting ``<si><t>``, ``<si><t xml:space="preserve">`` or ``<si><r>`` (and no CDATA, comments or
namespace prefixes) is handed on whole, as are the pieces whose string cells are written in another form
than ``t="s"><v>N</v>`` (``cut`` returns None).
"""

from __future__ import annotations

import re

import numpy as np

_SHARED_CELL = b't="s"><v>'  # a cell holding a shared string: its t is its last attribute, its value follows
_ENTRY_FORMS = (b"<si><t>", b'<si><t xml:space="preserve">', b"<si><r>")
_ANCHOR = _SHARED_CELL.index(b"v")  # the pattern's rarest byte, looked for first
_CHECKED = sorted(set(range(len(_SHARED_CELL))) - {_ANCHOR}, key=lambda k: (k < _ANCHOR, -k))
_COUNTS = re.compile(rb'\s(?:count|uniqueCount)="[0-9]*"')  # the whole table's, in the <sst> tag
_LESS, _ZERO, _NINE = ord("<"), ord("0"), ord("9")


class SharedStrings:
    """A workbook's shared strings table, held as its XML with where each entry starts and ends."""

    def __init__(self, xml: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
        self.xml, self.starts, self.ends = xml, starts, ends
        self.bytes = np.frombuffer(xml, np.uint8)
        self.head = _COUNTS.sub(b"", xml[: int(starts[0])])  # the declaration and <sst ...>: its namespaces
        self.digits = len(str(len(starts) - 1))  # of the largest index there is
        self.used = np.zeros(len(starts), np.bool_)  # the entries a piece uses, cleared after each

    @classmethod
    def of(cls, xml: bytes) -> SharedStrings | None:
        """The table, or None when a position in it might not be the one calamine counts."""
        if b"<!" in xml or b":si>" in xml or b":si " in xml:
            return None
        data = np.frombuffer(xml + b"\0\0\0\0", np.uint8)
        tags = np.flatnonzero(data[:-4] == _LESS)
        following = [data[tags + k] for k in range(1, 5)]
        opening = tags[(following[0] == ord("s")) & (following[1] == ord("i")) & (following[2] == ord(">"))]
        closing = tags[(following[0] == ord("/")) & (following[1] == ord("s")) & (following[2] == ord("i"))
                       & (following[3] == ord(">"))] + len(b"</si>")
        entries = len(opening)
        if not entries or len(closing) != entries or xml.count(b"<si") != entries \
                or sum(xml.count(form) for form in _ENTRY_FORMS) != entries:
            return None
        if (closing <= opening).any() or (opening[1:] < closing[:-1]).any():
            return None
        offsets = np.int32 if len(xml) < 1 << 31 else np.int64  # 4 bytes an offset: 2.4 MB a million strings
        return cls(xml, opening.astype(offsets), closing.astype(offsets))

    def __len__(self) -> int:
        return len(self.starts)

    def cut(self, rows: bytes) -> tuple[bytes | bytearray, bytes] | None:
        """``rows`` (whole ``<row>`` elements) with their shared string cells renumbered, and the table of
        the strings they use; None when a cell is written in a form this does not renumber."""
        data = np.frombuffer(rows, np.uint8)
        # where each cell's number starts: after the "<v>" that follows t="s">, found by numpy rather than
        # by a split (it would make an object of every cell)
        at = np.flatnonzero(data[_ANCHOR : len(data) - len(_SHARED_CELL) + _ANCHOR + 1] == _SHARED_CELL[_ANCHOR])
        for k in _CHECKED:  # from the byte after the "v" on: the rarer first
            at = at[data[at + k] == _SHARED_CELL[k]]
        starts = at + len(_SHARED_CELL)
        cells = len(starts)
        if cells != rows.count(b't="s"') or b"<!" in rows:
            return None
        if not cells:
            return rows, self.head + b"</sst>"
        # the bytes after each <v>: an index in the table has at most ``digits`` digits, then "<"
        window = data[np.minimum(starts[:, None] + np.arange(self.digits + 1), len(data) - 1)]
        widths = np.argmin((window >= _ZERO) & (window <= _NINE), axis=1)  # the first byte not a digit
        ends = starts + widths
        if not widths.all() or (data[np.minimum(ends, len(data) - 1)] != _LESS).any():
            return None  # no number, or one longer than any index in the table
        widest = int(widths.max())
        numbers = (window[:, 0] - _ZERO).astype(np.int64)
        for k in range(1, widest):
            numbers = np.where(k < widths, numbers * 10 + (window[:, k] - _ZERO), numbers)
        if numbers.max() >= len(self):
            return None  # what calamine makes of a string that is not there is its own business
        used = self.used
        used[numbers] = True
        kept = np.flatnonzero(used)
        renumbered = (np.cumsum(used, dtype=np.int32) - 1)[numbers]  # never wider than the number it replaces
        used[kept] = False
        out = bytearray(rows)
        view = np.frombuffer(out, np.uint8)
        for k in range(widest):
            inside = k < widths
            view[(ends - 1 - k)[inside]] = _ZERO + renumbered[inside] % 10
            renumbered //= 10
        return out, self._entries(kept)

    def _entries(self, kept: np.ndarray) -> bytes:
        """The table of the entries ``kept`` (sorted positions): their bytes in one gather."""
        starts, lengths = self.starts[kept], self.ends[kept] - self.starts[kept]
        ends = np.cumsum(lengths)
        at = np.arange(int(ends[-1])) + np.repeat(starts - (ends - lengths), lengths)
        return b"".join([self.head, self.bytes[at].tobytes(), b"</sst>"])
