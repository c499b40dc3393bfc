"""Property: whatever text a table holds, reading it back gives exactly that text, or says so clearly.

Random tables (any characters the encoding can hold, leading zeros, formula-like strings, delimiters,
quotes, line breaks inside cells) are written as CSV in every supported encoding by Python's csv module,
and as XLSX by xlsxwriter (string cells), then read with ``read_spreadsheet``. The result is exactly the
written cells, or a row carrying a problem, or, for a legacy file whose encoding is legitimately
ambiguous without a hint, a one-line refusal; never different text. With ``encoding`` given it is exact.

The header row is fixed (distinct labels) and the ID column is never blank, so which row is the header and
which rows are blank (dropped by the reader) are well defined.
"""

from __future__ import annotations

import csv
import io
from functools import cache
from pathlib import Path

import pytest
import xlsxwriter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.errors import InputFileError
from pipeline.reader import read_spreadsheet
from pipeline.reader.encoding import known_encodings

HEADER = ["ID", "Name", "Note", "Code"]
UNICODE = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"]
LEGACY = [known.name for known in known_encodings()]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])
TRICKY = ["=SUM(A1)", "@cmd", "+65 8123 4567", "-1", "000123", "0", " lead", "trail ", "  ", ",", ";", "|",
          "\t", '"', '""', "a,b", 'say "hi"', "line\nbreak", "cr\ronly", "crlf\r\nend", "NA", "null", "1e5"]


@cache
def repertoire(encoding: str) -> str:
    """Every printable character ``encoding`` can hold (one- and two-byte forms), tab and line ends."""
    if encoding.startswith("utf"):
        return ""  # any Unicode: drawn by st.characters
    chars = set()
    for first in range(0x20, 0x100):
        candidates = [bytes([first])] + [bytes([first, second]) for second in range(0x40, 0x100)] \
            if first >= 0x80 else [bytes([first])]
        for raw in candidates:
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError:
                continue
            if len(text) == 1 and text.isprintable():
                chars.add(text)
    return "".join(sorted(chars)) + "\t\n\r"


def cell_text(encoding: str) -> st.SearchStrategy[str]:
    if encoding.startswith("utf") or encoding == "xlsx":
        # no NUL, lone surrogates or other control characters: no export holds them as text
        chars = st.characters(exclude_categories=("Cs", "Cc", "Co", "Cn"), include_characters="\t\n\r")
    else:
        chars = st.sampled_from(repertoire(encoding))
    return st.one_of(st.text(chars, max_size=12), st.sampled_from(TRICKY))


def tables(encoding: str) -> st.SearchStrategy[list[list[str]]]:
    identifier = st.from_regex(r"0{0,3}[0-9]{1,5}", fullmatch=True)
    row = st.tuples(identifier, cell_text(encoding), cell_text(encoding), cell_text(encoding)).map(list)
    return st.lists(row, min_size=1, max_size=8)


def csv_bytes(rows: list[list[str]], encoding: str) -> bytes:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(HEADER)
    writer.writerows(rows)
    return buffer.getvalue().encode(encoding)


def assert_read_back(path: Path, rows: list[list[str]], **options: str) -> None:
    """Every row reads back exactly, unless the reader put a problem on it."""
    table = read_spreadsheet(path, expected_headers=HEADER, **options)
    assert table.info.headers == HEADER
    assert table.row_numbers == list(range(2, len(rows) + 2))
    got = table.frame[HEADER].values.tolist()
    for number, written, read in zip(table.row_numbers, rows, got):
        if number not in table.row_problems:
            assert read == written, f"row {number}"


@pytest.mark.parametrize("encoding", UNICODE)
def test_unicode_csv_reads_back_exactly(tmp_path_factory: pytest.TempPathFactory, encoding: str) -> None:
    @SETTINGS
    @given(rows=tables(encoding))
    def check(rows: list[list[str]]) -> None:
        path = tmp_path_factory.mktemp("csv") / "export.csv"
        path.write_bytes(csv_bytes(rows, encoding))
        assert_read_back(path, rows)

    check()


@pytest.mark.parametrize("encoding", LEGACY)
def test_legacy_csv_reads_back_exactly_or_is_refused(tmp_path_factory: pytest.TempPathFactory,
                                                     encoding: str) -> None:
    @settings(SETTINGS, max_examples=12)
    @given(rows=tables(encoding))
    def check(rows: list[list[str]]) -> None:
        path = tmp_path_factory.mktemp("csv") / "export.csv"
        path.write_bytes(csv_bytes(rows, encoding))
        try:
            assert_read_back(path, rows)
        except InputFileError as err:
            message = str(err)
            assert "\n" not in message and "cannot tell which encoding" in message, message
        assert_read_back(path, rows, encoding=encoding)

    check()


def test_xlsx_string_cells_read_back_exactly(tmp_path_factory: pytest.TempPathFactory) -> None:
    @SETTINGS
    @given(rows=tables("xlsx"))
    def check(rows: list[list[str]]) -> None:
        path = tmp_path_factory.mktemp("xlsx") / "export.xlsx"
        workbook = xlsxwriter.Workbook(str(path))
        sheet = workbook.add_worksheet("Staff")
        for r, values in enumerate([HEADER, *rows]):
            for c, value in enumerate(values):
                sheet.write_string(r, c, value)
        workbook.close()
        assert_read_back(path, rows)

    check()

