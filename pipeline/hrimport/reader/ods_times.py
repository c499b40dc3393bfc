"""ODS time cells of a day or more, read as LibreOffice shows them.

An ODS stores a time cell as a duration (``office:time-value="PT36H30M00S"``, ODF 1.2 Part 1, 19.382), and
LibreOffice saves the time-formatted date-times it shows as 13:30:00 the same way, as hours since 30 December 1899
(``PT1078893H30M00S``). python-calamine reads a duration under a day as the time ``12:30:00`` and any other as
its ISO 8601 text, which nobody sees: here such a cell is read as the text LibreOffice saved with it (its
``text:p``) says it shows, in the reader's ``HH:MM:SS``: an elapsed time whose hours it shows in full
(``36:30:00``), or else the time of day (``13:30:00``). A cell saved without its text (odfpy writes none) or
below zero is left as read: what it shows depends on a style this reader does not render.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable
from xml.etree import ElementTree

_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_CELLS = (f"{{{_TABLE}}}table-cell", f"{{{_TABLE}}}covered-table-cell")
#: python-calamine's text of a duration it does not read as a time: ISO 8601 (``PT36H30M00S``).
DURATION = re.compile(r"PT(\d+)H(\d+)M(\d+(?:\.\d+)?)S")
_SHOWN_HOURS = re.compile(r"\s*(\d+)\s*:\s*\d\d")


def ods_durations(path: str, sheet: str, candidates: Iterable[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """(row, column, text) of the ``candidates`` (0-based cells whose text python-calamine wrote as a duration)
    that are time cells of ``sheet`` saved with the text LibreOffice showed, read as ``HH:MM:SS``."""
    wanted = set(candidates)
    if not wanted:
        return []
    last_row = max(row for row, _ in wanted)
    found: list[tuple[int, int, str]] = []
    in_sheet = False
    row = col = 0
    with zipfile.ZipFile(path) as archive, archive.open("content.xml") as stream:
        for event, element in ElementTree.iterparse(stream, events=("start", "end")):
            tag = element.tag
            if event == "start" and tag == f"{{{_TABLE}}}table":
                in_sheet, row = element.get(f"{{{_TABLE}}}name") == sheet, 0
            elif not in_sheet:
                if event == "end" and tag == f"{{{_TABLE}}}table-row":
                    element.clear()
            elif event == "start" and tag == f"{{{_TABLE}}}table-row":
                col = 0
            elif event == "end" and tag in _CELLS:
                repeat = int(element.get(f"{{{_TABLE}}}number-columns-repeated", "1"))
                if (row, col) in wanted and element.get(f"{{{_OFFICE}}}value-type") == "time":
                    text = _shown(element.get(f"{{{_OFFICE}}}time-value") or "", _paragraph(element))
                    if text is not None:
                        found.append((row, col, text))
                col += repeat
            elif event == "end" and tag == f"{{{_TABLE}}}table-row":
                row += int(element.get(f"{{{_TABLE}}}number-rows-repeated", "1"))
                element.clear()
                if row > last_row:
                    break
            elif event == "end" and tag == f"{{{_TABLE}}}table":
                break
    return found


def _paragraph(element: ElementTree.Element) -> str:
    paragraph = element.find(f"{{{_TEXT}}}p")
    return "".join(paragraph.itertext()).strip() if paragraph is not None else ""


def _shown(duration: str, shown: str) -> str | None:
    """``HH:MM:SS`` of a duration as LibreOffice showed it (``shown``), or None when that is not known."""
    match = DURATION.fullmatch(duration)
    hours = _SHOWN_HOURS.match(shown)
    if match is None or hours is None:
        return None
    seconds = round(int(match.group(1)) * 3600 + int(match.group(2)) * 60 + float(match.group(3)))
    if int(hours.group(1)) != seconds // 3600:  # not the hours in full: the time of day
        seconds %= 86400
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
