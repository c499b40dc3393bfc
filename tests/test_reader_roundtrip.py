"""Property: whatever text a table holds, reading it back gives exactly that text, or says so clearly.

Random tables (any character for Unicode and XLSX, real words of the languages a legacy encoding serves,
leading zeros, formula-like strings, delimiters, quotes, line breaks inside cells) are written as CSV in every supported encoding by Python's csv module,
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
from babel import Locale
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hrimport.errors import InputFileError
from hrimport.reader import read_spreadsheet
from hrimport.reader.encoding import known_encodings

HEADER = ["ID", "Name", "Note", "Code"]
UNICODE = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"]
LEGACY = [known.name for known in known_encodings()]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])
TRICKY = ["=SUM(A1)", "@cmd", "+65 8123 4567", "-1", "000123", "0", " lead", "trail ", "  ", ",", ";", "|",
          "\t", '"', '""', "a,b", 'say "hi"', "line\nbreak", "cr\ronly", "crlf\r\nend", "NA", "null", "1e5",
          # what a workbook reader writes for typed cells (a boolean, a date, a time), here as text
          "true", "false", "2020-01-01 00:00:00", "1899-12-30 08:00:00"]


#: The languages whose exports each legacy encoding carries (CLDR locales).
LANGUAGES = {
    "cp1252": ["fr", "de", "es"], "cp1250": ["pl", "cs", "hu"], "cp1254": ["tr"], "cp1257": ["lt", "lv"],
    "cp1258": ["vi"], "iso-8859-1": ["de", "fr"], "iso-8859-15": ["fr", "fi"], "iso-8859-2": ["pl", "cs"],
    "iso-8859-9": ["tr"], "iso-8859-13": ["lv", "lt"], "iso-8859-16": ["ro"], "iso-8859-3": ["mt"],
    "iso-8859-4": ["lv"], "iso-8859-10": ["is"], "iso-8859-14": ["cy"], "cp1251": ["ru", "uk"],
    "koi8-r": ["ru"], "koi8-u": ["uk"], "iso-8859-5": ["ru"], "cp1253": ["el"], "iso-8859-7": ["el"],
    "cp1255": ["he"], "iso-8859-8": ["he"], "cp1256": ["ar"], "iso-8859-6": ["ar"], "cp874": ["th"],
    "iso-8859-11": ["th"], "gb18030": ["zh_Hans"], "gbk": ["zh_Hans"], "gb2312": ["zh_Hans"],
    "big5hkscs": ["zh_Hant"], "cp950": ["zh_Hant"], "big5": ["zh_Hant"], "cp932": ["ja"],
    "shift_jis": ["ja"], "euc-jp": ["ja"], "euc_jis_2004": ["ja"], "cp949": ["ko"], "euc-kr": ["ko"],
}


@cache
def words(encoding: str) -> list[str]:
    """Real words (CLDR place names) in the languages ``encoding`` carries, that it can hold."""
    found = []
    for locale in LANGUAGES[encoding]:
        for name in Locale.parse(locale).territories.values():
            try:
                name.encode(encoding)
            except UnicodeEncodeError:
                continue
            found.append(name)
    return sorted(set(found))


def cell_text(encoding: str) -> st.SearchStrategy[str]:
    """Any text for Unicode and XLSX; real words mixed with ASCII and tricky strings for legacy encodings.

    Random characters of a legacy code page are not text in any language: for them a detector can only
    guess (random symbols ``¢¨`` in cp1252 read as clean Cyrillic ``ўЌ`` in cp1251), so legacy tables are
    made of the words such files really hold.
    """
    ascii_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=8)
    if encoding.startswith("utf") or encoding == "xlsx":
        # no NUL, lone surrogates or other control characters: no export holds them as text
        chars = st.characters(exclude_categories=("Cs", "Cc", "Co", "Cn"), include_characters="\t\n\r")
        return st.one_of(st.text(chars, max_size=12), st.sampled_from(TRICKY))
    pieces = st.one_of(st.sampled_from(words(encoding)), ascii_text, st.sampled_from(TRICKY))
    return st.lists(pieces, max_size=3).map(" ".join)


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
    @settings(SETTINGS, max_examples=25)
    @given(rows=tables(encoding))
    def check(rows: list[list[str]]) -> None:
        data = csv_bytes(rows, encoding)
        # Bytes that are also valid UTF-8 are read as UTF-8 by design (strict UTF-8 comes first): a few
        # legacy bytes can form UTF-8 by accident (Maltese 'Ġż' in ISO-8859-3 is Armenian 'տ' in UTF-8).
        assume(not _valid_utf8(data))
        path = tmp_path_factory.mktemp("csv") / "export.csv"
        path.write_bytes(data)
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



def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not data.isascii()
