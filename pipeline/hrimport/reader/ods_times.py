"""ODS time cells of a day or more, or below zero, read as LibreOffice shows them.

An ODS stores a time cell as a duration (``office:time-value="PT36H30M00S"``, ODF 1.2 Part 1, 19.382), and
LibreOffice saves the time-formatted date-times it shows as 13:30:00 the same way, as hours since 30 December 1899
(``PT1078893H30M00S``). python-calamine reads a duration under a day as the time ``12:30:00`` and any other (a
day or more, below zero) as its ISO 8601 text, which nobody sees: here such a cell is read as LibreOffice shows
it (``SvNumberformat::ImpGetTimeOutput``), in the reader's ``HH:MM:SS``, to the nearest second: an elapsed time
(``[HH]:MM:SS``) shows its hours in full, with a minus sign below zero (``36:30:00``, ``-12:30:00``); a time of
day (``HH:MM``) shows the time of day alone, a duration below zero counting back from midnight (``-PT6H`` shows
18:00:00). Which of the two a cell has is read from the text LibreOffice saved with it (its ``text:p``: are its
hours the duration's in full?), or, for a cell saved without it (odfpy writes none), from its style's time
format (``number:truncate-on-overflow="false"`` is ``[HH]``), or, without a style, as LibreOffice's standard
time format shows it (``SvNumberFormatter::GetTimeFormat``: ``[HH]:MM:SS`` for a day or more or below zero).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable
from xml.etree import ElementTree

from hrimport.reader.no_such_dates import clock

_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_CELLS = (f"{{{_TABLE}}}table-cell", f"{{{_TABLE}}}covered-table-cell")
_NUMBER = "urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0"
_STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
#: python-calamine's text of a duration it does not read as a time: ISO 8601 (``PT36H30M00S``, ``-PT12H``,
#: ``P1DT12H``), with a fraction of a second.
DURATION = re.compile(r"(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?")
#: What a cell whose text may be such a duration holds (in pyarrow's RE2, for the whole sheet at once).
DURATION_TEXT = r"-?P(?:\d+DT?|T)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?"
_SHOWN_HOURS = re.compile(r"\s*-?\s*(\d+)\s*:\s*\d\d")


def ods_durations(path: str, sheet: str, candidates: Iterable[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """(row, column, text) of the ``candidates`` (0-based cells whose text python-calamine wrote as a duration)
    that are time cells of ``sheet``, read as LibreOffice shows them, ``HH:MM:SS``."""
    wanted = set(candidates)
    if not wanted:
        return []
    last_row = max(row for row, _ in wanted)
    found: list[tuple[int, int, str]] = []
    elapsed_styles: dict[str, bool] = {}  # a time format's name -> whether it shows hours in full ([HH])
    cell_formats: dict[str, str] = {}  # a cell style's name -> its time format's name
    in_sheet = False
    row = col = 0
    with zipfile.ZipFile(path) as archive, archive.open("content.xml") as stream:
        for event, element in ElementTree.iterparse(stream, events=("start", "end")):
            tag = element.tag
            if event == "end" and tag == f"{{{_NUMBER}}}time-style":
                elapsed_styles[element.get(f"{{{_STYLE}}}name", "")] = (
                    element.get(f"{{{_NUMBER}}}truncate-on-overflow") == "false")
            elif event == "end" and tag == f"{{{_STYLE}}}style" and element.get(f"{{{_STYLE}}}data-style-name"):
                cell_formats[element.get(f"{{{_STYLE}}}name", "")] = element.get(f"{{{_STYLE}}}data-style-name", "")
            elif event == "start" and tag == f"{{{_TABLE}}}table":
                in_sheet, row = element.get(f"{{{_TABLE}}}name") == sheet, 0
            elif not in_sheet:
                if event == "end" and tag == f"{{{_TABLE}}}table-row":
                    element.clear()
            elif event == "start" and tag == f"{{{_TABLE}}}table-row":
                col = 0
            elif event == "end" and tag in _CELLS:
                repeat = int(element.get(f"{{{_TABLE}}}number-columns-repeated", "1"))
                if (row, col) in wanted and element.get(f"{{{_OFFICE}}}value-type") == "time":
                    style = cell_formats.get(element.get(f"{{{_TABLE}}}style-name", ""), "")
                    text = _shown(element.get(f"{{{_OFFICE}}}time-value") or "", _paragraph(element),
                                  elapsed_styles.get(style))
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


def _shown(duration: str, shown: str, elapsed_style: bool | None) -> str | None:
    """``HH:MM:SS`` of a duration as LibreOffice shows it, or None when it is no duration. Hours in full when
    the text it showed (``shown``) has them, or, without that text, when its style's time format is ``[HH]``
    (``elapsed_style``), or, with no time format known, when it is a day or more or below zero."""
    match = DURATION.fullmatch(duration)
    if match is None or not any(match.groups()[1:]):
        return None
    sign, days, hours, minutes, seconds = match.groups()
    exact = int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(seconds or 0)
    full = round(exact)
    hours_shown = _SHOWN_HOURS.match(shown)
    if hours_shown is not None:
        elapsed = int(hours_shown.group(1)) == full // 3600
    elif elapsed_style is not None:
        elapsed = elapsed_style
    else:
        elapsed = exact >= 86400 or bool(sign)
    if elapsed:
        return f"{'-' if sign and full else ''}{clock(full)}"
    of_day = exact % 86400  # the days dropped, then rounded, as ImpGetTimeOutput does
    return clock(round(86400 - of_day if sign else of_day) % 86400)
