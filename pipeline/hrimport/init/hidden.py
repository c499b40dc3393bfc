"""The columns of a workbook's sheet that are hidden: Workday hides its ID columns (a worker's reference ID, a
position ID) in its report exports. ``hrimport init`` proposes every column no field means as a custom field;
one the person never saw in Excel must say so, or it would be sent as company data unseen.

XLSX and XLSM only (the exports that hide columns): a sheet's ``<cols>`` element, before its cells, marks a
range of columns ``hidden="1"``; the header row's cells name them. Any other format has none.
"""

from __future__ import annotations

import itertools
import re
import zipfile
from pathlib import Path

from hrimport.outcomes import SourceInfo
from hrimport.reader.sheets import xlsx_sheets

_HEAD_LIMIT = 1 << 20  # bytes of a sheet's XML read to find its <cols>, which come before its cells
_COL = re.compile(rb"<(?:\w+:)?col\s([^>]*)>")
_ATTR = re.compile(rb'(\w+)\s*=\s*"([^"]*)"')


def hidden_headers(path: Path, info: SourceInfo) -> set[str]:
    """The headers (as ``info.headers`` has them) of the columns the sheet read hides; empty for a file
    that is no XLSX/XLSM or whose hidden columns cannot be told."""
    if info.format not in ("xlsx", "xlsm"):
        return set()
    try:
        with zipfile.ZipFile(path) as archive:
            part = next((s.part for s in xlsx_sheets(archive) if s.name == info.sheet and s.part), None)
            if part is None:
                return set()
            columns = _hidden_columns(archive, part)
    except (OSError, KeyError, zipfile.BadZipFile, ValueError):
        return set()  # the import reads the file; init only loses the remark
    if not columns:
        return set()
    return _headers_of(path, info, columns)


def _hidden_columns(archive: zipfile.ZipFile, part: str) -> set[int]:
    """The 1-based numbers of the columns ``<cols>`` marks hidden, read from the sheet's head only."""
    head = b""
    with archive.open(part) as fh:
        while len(head) < _HEAD_LIMIT:
            piece = fh.read(65536)
            if not piece:
                break
            head += piece
            if b"sheetData" in head:
                break
    head = head.split(b"sheetData", 1)[0]
    hidden: set[int] = set()
    for match in _COL.finditer(head):
        attrs = dict(_ATTR.findall(match.group(1)))
        if attrs.get(b"hidden") in (b"1", b"true"):
            first, last = int(attrs.get(b"min", b"0")), int(attrs.get(b"max", b"0"))
            hidden.update(range(first, min(last, first + 16384) + 1))  # a sheet has 16,384 columns
    hidden.discard(0)
    return hidden


def _headers_of(path: Path, info: SourceInfo, columns: set[int]) -> set[str]:
    """The header row's cells in ``columns``, as ``info.headers`` names them."""
    import openpyxl  # read-only: the header row only

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        sheet = book[info.sheet] if info.sheet in book.sheetnames else book.worksheets[0]
        rows = list(sheet.iter_rows(min_row=info.header_row, max_row=info.header_row + info.header_rows - 1,
                                    values_only=True))
    finally:
        book.close()
    named: set[str] = set()
    group = ""  # over two rows (``reader.merged_header``): the last label of the upper row, a group's
    for number, cells in enumerate(itertools.zip_longest(*rows), start=1):
        texts = ["" if value is None else " ".join(str(value).split()) for value in cells]
        group = texts[0] or group
        if number in columns:
            named.update(texts)
            if len(texts) > 1 and texts[1]:
                named.add(f"{group} {texts[1]}")  # a label joined to its group's (``merged_header._joined``)
    named.discard("")
    return {h for h in info.headers if " ".join(h.split()) in named}


__all__ = ["hidden_headers"]
