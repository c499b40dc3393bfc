"""What ``to_fix`` writes in a cell the run found holding no value to send (principle 1, on the way round).

The import sends nothing of a cell showing an error (``error-value``) or holding a formula saved without its
result, or with a stand-in for it (``formula-not-calculated``). Imported again, ``to_fix`` must not turn such a
cell into a value: one HR never touched would reach payroll as xlsxwriter's stand-in ``0`` or as the text
``#N/A``. So ``to_fix`` writes it as a cell holding no value either, which the import flags again until HR
types a value:

* an error shows the same error (``#DIV/0!``; one Excel does not know, such as LibreOffice's ``Err:502``,
  as ``#N/A``);
* the formula of an XLSX or XLSM is written again, without a result: opening ``to_fix`` in Excel or
  LibreOffice and saving it calculates it. A formula with no references (``=DATE(2020,1,31)``) means the same
  anywhere. One whose references are all on its own row (``=B7&" (acting)"``) is moved with its row
  (``=B2&" (acting)"``) when ``to_fix`` is the source workbook itself, whose columns stay where they were
  (``fix_workbook``); written from the cells the run read, the columns may sit elsewhere than in the source.
* any other formula (reading other rows, other sheets or names, asking for its own position, an ODS
  formula, which is not written as Excel's, or a cell sharing another's formula, whose text it does not
  hold) would read something else where it now is: the cell shows ``#N/A``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hrimport.outcomes import RowOutcome
from hrimport.report.fix_marks import header_key

__all__ = ["EXCEL_ERRORS", "NoValue", "no_value_cells"]

#: The errors an Excel cell can show, as its XML writes them.
EXCEL_ERRORS = frozenset({"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA"})
_NOT_AVAILABLE = "#N/A"
_NO_VALUE = frozenset({"error-value", "formula-not-calculated"})
_EXCEL_FORMULAS = frozenset({"xlsx", "xlsm"})
# A reference to one cell: its column and row, each with the $ that makes it absolute.
_CELL = re.compile(r"\$?([A-Za-z]{1,3})(\$?)(\d+)")
# Functions whose result depends on where the formula sits or on references written as text.
_POSITIONAL = frozenset({"ROW(", "ROWS(", "COLUMN(", "COLUMNS(", "INDIRECT(", "OFFSET(", "CELL(", "ADDRESS("})


@dataclass(frozen=True)
class NoValue:
    """How to write a cell holding no value to send: a ``formula`` without a result, else the ``error``."""

    formula: str | None = None
    error: str = _NOT_AVAILABLE


def no_value_cells(row: RowOutcome, headers: Sequence[str], source_format: str, *,
                   move_to: tuple[dict[str, str], int] | None = None) -> dict[str, NoValue]:
    """The cells of ``row`` (header, as in ``headers`` -> how to write it) that held no value to send.

    ``move_to``: each header's column letter and the row ``row`` sits on in ``to_fix``, when its columns are
    the source's (``fix_workbook``): a formula reading only its own row is then moved there."""
    if not any(p.code in _NO_VALUE for p in row.problems):  # nearly every row: nothing to build
        return {}
    by_key = {header_key(h): h for h in headers}
    cells: dict[str, NoValue] = {}
    for problem in row.problems:
        header = by_key.get(header_key(problem.column or ""))
        if header is None or problem.is_warning:
            continue
        if problem.code == "error-value":
            error = (row.source or {}).get(header, "") or ""
            cells[header] = NoValue(error=error if error in EXCEL_ERRORS else _NOT_AVAILABLE)
        elif problem.code == "formula-not-calculated":
            formula = problem.value or ""
            where = (move_to[0][header], move_to[1]) if move_to is not None and header in move_to[0] else None
            moved = _moved(formula, row.row, where) if source_format.lower() in _EXCEL_FORMULAS else None
            cells[header] = NoValue(formula=moved)
    return cells


def _moved(formula: str, row: int, to: tuple[str, int] | None) -> str | None:
    """``formula`` of a cell on ``row``, as it reads the same on row ``to[1]`` of column ``to[0]`` (``to``
    None: where its columns may have moved), or None when it cannot."""
    if not formula.startswith("="):
        return None
    from openpyxl.formula.tokenizer import Token, Tokenizer, TokenizerError  # only for a run with such a cell

    try:
        tokens = Tokenizer(formula).items
    except TokenizerError:  # a formula the tokenizer cannot take is not moved
        return None
    own_row = False
    for token in tokens:
        if token.type == Token.FUNC and token.subtype == Token.OPEN and token.value.upper() in _POSITIONAL:
            return None
        if token.type != Token.OPERAND or token.subtype != Token.RANGE:
            continue
        for reference in token.value.split(":"):
            cell = _CELL.fullmatch(reference)
            if cell is None or cell[2] or int(cell[3]) != row:
                return None  # a name, another sheet, a whole column, an absolute or another row
        own_row = True
    if not own_row:
        return formula
    if to is None:
        return None
    from openpyxl.formula.translate import Translator

    column, at = to
    return str(Translator(formula, origin=f"{column}{row}").translate_formula(f"{column}{at}"))
