"""What ``to_fix`` says about each row: its ``Problem`` column text and the bad cells to mark (issue 16).

Both ``to_fix`` writers (``fix_workbook`` from the source workbook, ``fix_file`` from the run's kept cells)
mark a row the same way: each cell a problem names (``Problem.column``) is filled red and carries a comment
holding its problem and how to fix it; the ``Problem`` column names the row's *original* row number, since
in ``to_fix`` the row sits on another one. A problem about the whole row (the service refused it, the run
stopped before sending it) or about a value from the config rather than a cell marks no cell: the row gets
only its ``Problem`` text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from hrimport.outcomes import Problem, RowOutcome
from hrimport.report.explain import explain

__all__ = [
    "BAD_CELL_FILL", "PROBLEM_FILL", "PROBLEM_FONT",
    "bad_cells", "comment_size", "header_key", "problem_text",
]

#: Excel's own "Light Red Fill" (its conditional-format preset): the bad cells.
BAD_CELL_FILL = "FFC7CE"
#: The ``Problem`` column: a paler red behind dark red text, so it reads as added, not as a bad cell.
PROBLEM_FILL = "FBE2DE"
PROBLEM_FONT = "8E1420"

# Messages name their row the way the stages write it: "Row 7: ...", "Row 7, column 'Country': ...",
# "Row 7, columns 'Start' and 'End': ...". to_fix says it once, as the original row.
_ROW_PREFIX = re.compile(r"Row (\d+)(?::\s*|,\s*)")
_CELL_PREFIX = re.compile(r"Row \d+(?:, columns? '[^']*'(?: and '[^']*')?)?:\s*")
# Characters XML 1.0 cannot hold (a value quoted in a message may carry them): shown as U+FFFD in to_fix's
# own texts, which openpyxl would refuse and xlsxwriter would write into an invalid comment.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
#: The comments' box: wide enough for a sentence a line, as tall as its lines (pixels; Excel's is 128 x 74).
COMMENT_WIDTH = 320
_COMMENT_LINE_CHARS, _COMMENT_LINE_PX = 48, 16
# A joined field names its columns "First name + Last name" (``FieldMapping.field_sources``).
_JOINED = " + "


def header_key(text: str) -> str:
    """How the reader matches headers (``hrimport.reader.normalize_header``: case and runs of spaces
    ignored), repeated here so that writing a report does not import the reader's pandas."""
    return " ".join(text.split()).casefold()


def problem_text(row: RowOutcome) -> str:
    """The ``Problem`` column of ``row``: "Original row 7: " and its problems, else its own message.

    >>> from hrimport.outcomes import Outcome
    >>> bad = Problem("unknown-country", "Row 7, column 'Country': 'Atlantis' is not a country.")
    >>> problem_text(RowOutcome(7, "E1", "Ada", Outcome.INVALID, (bad,)))
    "Original row 7: Column 'Country': 'Atlantis' is not a country."
    """
    messages = [_capitalized(_without_row(p.message, row.row)) for p in row.problems]
    if not messages:
        messages = [row.message or row.outcome.label]
    text = f"Original row {row.row}:"
    for message in dict.fromkeys(messages):  # sentences follow each other; phrases are joined by "; "
        text += ("; " if text[-1] not in ".!?:" else " ") + message
    return _NOT_XML.sub("\ufffd", text)


def _without_row(message: str, row: int) -> str:
    """``message`` without its lead naming ``row`` (another row's number is left, it says something)."""
    lead = _ROW_PREFIX.match(message)
    return message[lead.end():] if lead and int(lead[1]) == row else message


def bad_cells(row: RowOutcome, headers: Sequence[str]) -> dict[str, str]:
    """The cells of ``row`` to mark: header (as in ``headers``) -> the comment to put on the cell.

    Warnings do not stop a row, so they mark no cell. A problem whose column is no header of the file
    (a config constant, a field the config fills) marks nothing: the ``Problem`` column still says it.
    """
    by_key = _by_key(tuple(headers))
    comments: dict[str, list[str]] = {}
    for problem in row.problems:
        if problem.is_warning or not problem.column:
            continue
        for column in problem.column.split(_JOINED):
            header = by_key.get(header_key(column))
            if header is not None:
                comments.setdefault(header, []).append(_comment(problem))
    return {header: "\n\n".join(dict.fromkeys(texts)) for header, texts in comments.items()}


@functools.lru_cache(maxsize=4)  # the same headers for every row of a file
def _by_key(headers: tuple[str, ...]) -> dict[str, str]:
    return {header_key(h): h for h in headers}


def _comment(problem: Problem) -> str:
    """The problem as the cell's comment: the cell is named by where it sits, so the message without
    its "Row 7, column 'X':" lead, then how to fix it."""
    message = _capitalized(_CELL_PREFIX.sub("", problem.message, count=1))
    return _NOT_XML.sub("\ufffd", f"{message}\nHow to fix: {explain(problem.code).fix}")


def comment_size(text: str) -> tuple[int, int]:
    """Width and height in pixels of a comment box that shows all of ``text``."""
    lines = sum(1 + len(line) // _COMMENT_LINE_CHARS for line in text.split("\n"))
    return COMMENT_WIDTH, 8 + lines * _COMMENT_LINE_PX


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]
