"""The reader: real files written by real writers, read back as text with Excel row numbers."""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pytest
import xlsxwriter
import xlwt
from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import Table, TableCell, TableRow
from odf.text import P

from hrimport.errors import InputFileError
from hrimport.reader import NoDataRowsError, normalize_header, read_spreadsheet

HEADERS = ["Employee ID", "Full  Name", "Hire Date", "Salary", "Active", "Country"]


def write_workday_xlsx(path: Path) -> Path:
    """A Workday-style export: title and run date above the header, a blank row, typed cells."""
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("Staff")
    date = wb.add_format({"num_format": "dd/mm/yyyy"})
    ws.write_string("A1", "Worker Export - ACME Sdn Bhd")
    ws.write_string("A2", "Run date:")
    ws.write_datetime("B2", dt.datetime(2024, 1, 5), date)
    ws.write_row("A4", [" Employee ID ", "Full  Name", "Hire Date", "Salary", "Active", "Country"])
    ws.write_string("A5", "000123")
    ws.write_string("B5", "Ana Lim")
    ws.write_datetime("C5", dt.datetime(2020, 1, 31), date)
    ws.write_number("D5", 5000)
    ws.write_boolean("E5", True)
    ws.write_string("F5", "NA")
    # row 6 left blank: skipped, but row 7 is still row 7
    ws.write_number("A7", 12345678901)
    ws.write_string("B7", "Bo Tan")
    ws.write_datetime("C7", dt.datetime(2021, 3, 1, 9, 30), date)
    ws.write_number("D7", 3.5)
    ws.write_formula("E7", "=1=2", None, False)
    ws.write_formula("F7", '="M"&"Y"', None, "MY")
    ws.write_string("A8", "000125")
    ws.write_formula("D8", "=D5*2", None, 10000)
    wb.close()
    return path


def test_xlsx_cells_come_back_as_the_text_a_person_sees(tmp_path: Path, engine: str) -> None:
    table = read_spreadsheet(write_workday_xlsx(tmp_path / "workday.xlsx"))
    assert table.info.header_row == 4
    assert table.info.headers == ["Employee ID", "Full Name", "Hire Date", "Salary", "Active", "Country"]
    assert table.info.preamble == [["Worker Export - ACME Sdn Bhd"], ["Run date:", "2024-01-05"], []]
    assert table.info.sheet == "Staff"
    assert table.info.format == "xlsx"
    assert table.info.rows_read == 3
    assert table.row_numbers == [5, 7, 8]
    assert table.frame.to_dict("records") == [
        {
            "Employee ID": "000123",
            "Full Name": "Ana Lim",
            "Hire Date": "2020-01-31",
            "Salary": "5000",
            "Active": "TRUE",
            "Country": "NA",
        },
        {
            "Employee ID": "12345678901",
            "Full Name": "Bo Tan",
            "Hire Date": "2021-03-01 09:30:00",
            "Salary": "3.5",
            "Active": "FALSE",
            "Country": "MY",
        },
        {
            "Employee ID": "000125",
            "Full Name": "",
            "Hire Date": "",
            "Salary": "10000",
            "Active": "",
            "Country": "",
        },
    ]
    assert all(str(dtype) == "str" for dtype in table.frame.dtypes)
    assert list(table.frame.index) == [0, 1, 2]


def test_source_info_describes_the_file(tmp_path: Path) -> None:
    path = write_workday_xlsx(tmp_path / "workday.xlsx")
    info = read_spreadsheet(path).info
    assert (info.path, info.name, info.size) == (str(path), "workday.xlsx", path.stat().st_size)
    assert len(info.sha256) == 64
    assert info.encoding is None and info.delimiter is None


def test_column_matches_ignoring_case_and_spaces(tmp_path: Path) -> None:
    table = read_spreadsheet(write_workday_xlsx(tmp_path / "workday.xlsx"))
    assert table.column("employee id") == "Employee ID"
    assert table.column("  FULL   name ") == "Full Name"
    assert table.column("Email") is None


def test_normalize_header() -> None:
    assert normalize_header("  Hire\n Date  ") == "hire date"
    assert normalize_header("E-MAIL") == "e-mail"


def test_expected_headers_find_the_header_below_a_wide_title_block(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "wide.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Report"
    ws.append(["Company", "ACME", "Period", "2024-01", "Owner", "HR"])  # as wide as the table
    ws.append(["ID", "Name", "Email"])
    ws.append(["1", "A", "a@x.com"])
    wb.save(path)
    table = read_spreadsheet(path, expected_headers=["id", "EMAIL", "name"])
    assert table.info.header_row == 2
    assert table.info.preamble == [["Company", "ACME", "Period", "2024-01", "Owner", "HR"]]
    assert table.row_numbers == [3]


def test_explicit_header_row_wins(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "explicit.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Code", "Label"])
    ws.append(["ID", "Name"])
    ws.append(["1", "Ann"])
    wb.save(path)
    table = read_spreadsheet(path, header_row=2)
    assert table.info.headers == ["ID", "Name"]
    assert table.row_numbers == [3]


def test_openpyxl_dates_and_sheet_chosen_by_name_or_position(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "two.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "Notes"
    wb.active.append(["Read me"])
    ws = wb.create_sheet("Staff")
    ws.append(["ID", "Start"])
    ws.append(["007", dt.datetime(2022, 2, 28)])
    ws["B2"].number_format = "yyyy-mm-dd"
    wb.save(path)
    by_name = read_spreadsheet(path, sheet="staff")
    by_position = read_spreadsheet(path, sheet=1)
    assert by_name.frame.to_dict("records") == [{"ID": "007", "Start": "2022-02-28"}]
    assert by_position.frame.equals(by_name.frame)
    assert by_name.info.sheet == "Staff"


def test_a_missing_sheet_names_the_sheets_there_are(tmp_path: Path, engine: str) -> None:
    path = write_workday_xlsx(tmp_path / "workday.xlsx")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path, sheet="Employees")
    assert str(err.value) == f"{path} has no sheet 'Employees'; its sheets are: 'Staff'"
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path, sheet=3)
    assert str(err.value) == f"{path} has no sheet number 3 (counting from 0); its sheets are: 'Staff'"


def test_a_column_with_data_but_no_header_is_kept_and_named(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "gap.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["B2"], ws["C2"], ws["E2"] = "ID", "Name", "City"
    ws["B3"], ws["C3"], ws["D3"], ws["E3"] = "1", "Ann", "note", "Ipoh"
    wb.save(path)
    table = read_spreadsheet(path)
    assert table.info.headers == ["ID", "Name", "Column D", "City"]
    assert table.row_numbers == [3]


def test_duplicate_headers_after_normalisation_are_named(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "dup.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Email", "Name", " EMAIL "])
    ws.append(["a@x.com", "A", "b@x.com"])
    wb.save(path)
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path}: the header row (row 1) has duplicate column names: 'Email' (columns A and C); "
        "rename them so each is unique"
    )


def test_xls_written_by_xlwt(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "legacy.xls"
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Staff")
    date = xlwt.easyxf(num_format_str="YYYY-MM-DD")
    ws.write(0, 0, "HR export")
    for j, header in enumerate(["Employee ID", "Hire Date", "Salary"]):
        ws.write(2, j, header)
    ws.write(3, 0, "000042")
    ws.write(3, 1, dt.date(2019, 12, 1), date)
    ws.write(3, 2, 4200.0)
    wb.save(str(path))
    table = read_spreadsheet(path)
    assert table.info.format == "xls"
    assert table.info.header_row == 3
    assert table.frame.to_dict("records") == [
        {"Employee ID": "000042", "Hire Date": "2019-12-01", "Salary": "4200"}
    ]
    assert table.row_numbers == [4]


def write_ods(path: Path, rows: list[list[object]]) -> Path:
    doc = OpenDocumentSpreadsheet()
    sheet = Table(name="Staff")
    for values in rows:
        row = TableRow()
        for value in values:
            if value is None:
                cell = TableCell()
            elif isinstance(value, dt.date):
                cell = TableCell(valuetype="date", datevalue=value.isoformat())
                cell.addElement(P(text=value.isoformat()))
            elif isinstance(value, (int, float)):
                cell = TableCell(valuetype="float", value=value)
                cell.addElement(P(text=str(value)))
            else:
                cell = TableCell(valuetype="string")
                cell.addElement(P(text=str(value)))
            row.addElement(cell)
        sheet.addElement(row)
    doc.spreadsheet.addElement(sheet)
    doc.save(str(path))
    return path


def test_ods_written_by_odfpy(tmp_path: Path, engine: str) -> None:
    path = write_ods(
        tmp_path / "staff.ods",
        [["Staff list"], [None], ["ID", "Start", "Days"], ["0099", dt.date(2023, 7, 1), 2.5]],
    )
    table = read_spreadsheet(path)
    assert table.info.format == "ods"
    assert table.info.header_row == 3
    assert table.frame.to_dict("records") == [{"ID": "0099", "Start": "2023-07-01", "Days": "2.5"}]
    assert table.row_numbers == [4]


# --- CSV and TSV ----------------------------------------------------------------------------------------

CSV_TEXT = (
    "Staff export{d}{d}\n"
    "Run date:{d}2024-01-05{d}\n"
    "\n"
    "Employee ID{d}Name{d}Country\n"
    "000123{d}José Müller{d}NA\n"
    "{d}{d}\n"
    '000124{d}"Smith{d} Jo"{d}N/A\n'
    "\n"
    "000125{d}{name}{d}null\n"
)


@pytest.mark.parametrize(
    ("encoding", "name"),
    [
        ("utf-8", "张三"),
        ("utf-8-sig", "张三"),
        ("utf-16", "张三"),
        ("utf-16-le", "张三"),  # no BOM
        ("gb18030", "张三"),
        ("gbk", "李四"),
        ("cp1252", "Zoë “Quoted”"),
        ("latin-1", "Zoë Ångström"),
    ],
)
@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_csv_in_every_encoding_and_delimiter(
    tmp_path: Path, encoding: str, name: str, delimiter: str
) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(CSV_TEXT.format(d=delimiter, name=name).encode(encoding))
    # Unicode is recognised; a legacy encoding of so few words is ambiguous (tests/test_reader_encoding.py)
    table = read_spreadsheet(path, encoding=None if encoding.startswith("utf") else encoding)
    assert table.info.delimiter == delimiter
    assert table.info.header_row == 4
    assert table.info.preamble == [["Staff export"], ["Run date:", "2024-01-05"], []]
    assert table.row_numbers == [5, 7, 9]
    assert table.frame.to_dict("records") == [
        {"Employee ID": "000123", "Name": "José Müller", "Country": "NA"},
        {"Employee ID": "000124", "Name": f"Smith{delimiter} Jo", "Country": "N/A"},
        {"Employee ID": "000125", "Name": name, "Country": "null"},
    ]
    assert all(str(dtype) == "str" for dtype in table.frame.dtypes)
    assert table.info.encoding == encoding
    assert table.info.format == ("tsv" if delimiter == "\t" else "csv")


def test_a_csv_may_start_with_an_angle_bracket(tmp_path: Path) -> None:
    path = tmp_path / "angle.csv"
    path.write_text("<ID>,Name\n1,Ann\n", encoding="utf-8")
    assert read_spreadsheet(path).info.headers == ["<ID>", "Name"]


def test_tsv_extension_and_explicit_encoding(tmp_path: Path) -> None:
    path = tmp_path / "export.tsv"
    path.write_bytes("ID\tName\n1\tZoë\n".encode("cp1252"))
    table = read_spreadsheet(path, encoding="latin-1", delimiter="\t")
    assert table.info.format == "tsv"
    assert table.info.encoding == "latin-1"
    assert table.frame.to_dict("records") == [{"ID": "1", "Name": "Zoë"}]


def test_short_rows_are_padded_with_empty_cells(tmp_path: Path) -> None:
    path = tmp_path / "short.csv"
    path.write_text("ID,Name,Email\n1\n2,Bo,bo@x.com\n", encoding="utf-8")
    table = read_spreadsheet(path)
    assert table.frame.to_dict("records") == [
        {"ID": "1", "Name": "", "Email": ""},
        {"ID": "2", "Name": "Bo", "Email": "bo@x.com"},
    ]
    assert table.row_numbers == [2, 3]


def test_empty_cells_beyond_the_header_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "trailing.csv"
    path.write_text("ID,Name\n1,Ann,\n2,Bo,,\n3\n", encoding="utf-8")
    table = read_spreadsheet(path)
    assert table.frame.to_dict("records") == [
        {"ID": "1", "Name": "Ann"},
        {"ID": "2", "Name": "Bo"},
        {"ID": "3", "Name": ""},
    ]


def test_a_quoted_line_break_stays_in_one_row(tmp_path: Path) -> None:
    path = tmp_path / "multi.csv"
    path.write_text('ID,Address\n1,"1 Jalan\nIpoh"\n2,KL\n', encoding="utf-8")
    table = read_spreadsheet(path)
    assert table.frame["Address"].tolist() == ["1 Jalan\nIpoh", "KL"]
    assert table.row_numbers == [2, 3]


def test_whitespace_only_rows_are_blank(tmp_path: Path) -> None:
    path = tmp_path / "spaces.csv"
    path.write_text("ID,Name\n1,A\n  , \n2,B\n", encoding="utf-8")
    assert read_spreadsheet(path).row_numbers == [2, 4]


# --- bad files: one line each -----------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.xlsx"
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == f"{path}: file not found; check the path and the file name"


def test_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "staff.pdf"
    path.write_bytes(b"%PDF-1.4")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path}: unsupported file type '.pdf'; save it as .csv, .tsv, .txt, .xlsx, .xlsm, .xls or .ods"
    )


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(content)
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == f"{path} is empty; export the data again"


def test_header_only_csv_has_no_data_rows(tmp_path: Path) -> None:
    path = tmp_path / "header.csv"
    path.write_text("ID,Name\n\n,\n", encoding="utf-8")
    with pytest.raises(NoDataRowsError) as err:
        read_spreadsheet(path)
    assert str(err.value) == f"{path} has a header row (row 1) but no data rows under it"


def test_header_only_xlsx_has_no_data_rows(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "header.xlsx"
    wb = openpyxl.Workbook()
    wb.active.append(["Staff export"])
    wb.active.append([])
    wb.active.append(["ID", "Name"])
    wb.save(path)
    with pytest.raises(NoDataRowsError) as err:
        read_spreadsheet(path)
    assert str(err.value) == f"{path} has a header row (row 3) but no data rows under it"


def test_empty_workbook(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "blank.xlsx"
    openpyxl.Workbook().save(path)
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == f"{path} is empty (sheet 'Sheet' has no cells); export the data again"


def test_csv_renamed_xlsx(tmp_path: Path) -> None:
    path = tmp_path / "staff.xlsx"
    path.write_text("ID,Name\n1,A\n", encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} is not really an XLSX workbook: it looks like a text (CSV) file; rename it to .csv"
    )


def test_html_saved_as_xls(tmp_path: Path) -> None:
    path = tmp_path / "report.xls"
    path.write_text("<html><body><table><tr><td>ID</td></tr></table></body></html>", encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} is not really an Excel 97-2003 (.xls) workbook: it looks like a web page (HTML); "
        "open it in Excel and save it as .xlsx, or export CSV from the system"
    )


# What payroll systems save as "Excel": a web page whose table comes after a <meta> line, kilobytes of styles (as
# Excel's own "Web Page" save writes them) or a comment, with or without <html> around it.
_STYLES = "<style>\n" + "".join(f'.xl{n} {{mso-style-parent:style0; mso-number-format:"\\@";}}\n' for n in range(60, 140)) \
    + "</style>\n"
_TABLE = "<table><tr><th>Employee ID</th><th>Name</th></tr><tr><td>000123</td><td>Ana Lim</td></tr></table>"


@pytest.mark.parametrize("page", [
    '<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\n' + _STYLES + _TABLE,
    _STYLES + _TABLE,
    "<!-- generated by PayrollPro 7 -->\n<head>" + _STYLES + "</head>" + _TABLE,
    '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
    '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n<html xmlns="http://www.w3.org/1999/xhtml"><head>'
    + _STYLES + "</head><body>" + _TABLE + "</body></html>",
], ids=["meta-line-first", "styles-first", "comment-first", "xhtml"])
def test_a_web_page_saved_as_xls_is_called_one_whatever_comes_before_its_table(tmp_path: Path, page: str) -> None:
    # these were "a text (CSV) file; rename it to .csv" (or, the XHTML, "an XML file")
    path = tmp_path / "report.xls"
    path.write_text(page, encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} is not really an Excel 97-2003 (.xls) workbook: it looks like a web page (HTML); "
        "open it in Excel and save it as .xlsx, or export CSV from the system"
    )


# Excel's "XML Spreadsheet 2003", as Excel writes it (SpreadsheetML: its table is a <Table> element)
SPREADSHEET_2003 = (
    '<?xml version="1.0"?>\r\n<?mso-application progid="Excel.Sheet"?>\r\n'
    '<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet"\r\n'
    ' xmlns:o="urn:schemas-microsoft-com:office:office"\r\n xmlns:x="urn:schemas-microsoft-com:office:excel"\r\n'
    ' xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet"\r\n xmlns:html="http://www.w3.org/TR/REC-html40">\r\n'
    ' <Worksheet ss:Name="Staff">\r\n  <Table ss:ExpandedColumnCount="2" ss:ExpandedRowCount="2" x:FullColumns="1">\r\n'
    '   <Row><Cell><Data ss:Type="String">Employee ID</Data></Cell><Cell><Data ss:Type="String">Name</Data></Cell></Row>\r\n'
    '   <Row><Cell><Data ss:Type="String">000123</Data></Cell><Cell><Data ss:Type="String">Ana Lim</Data></Cell></Row>\r\n'
    "  </Table>\r\n </Worksheet>\r\n</Workbook>\r\n"
)


@pytest.mark.parametrize("name", ["staff.xls", "staff.xlsx", "staff.csv"])
def test_an_xml_spreadsheet_2003_is_called_one_not_a_web_page(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(SPREADSHEET_2003, encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value).endswith(
        ": it looks like an XML Spreadsheet 2003 file; open it in Excel and save it as .xlsx")


def test_xlsx_renamed_xls(tmp_path: Path) -> None:
    path = write_workday_xlsx(tmp_path / "workday.xlsx").rename(tmp_path / "workday.xls")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} is not really an Excel 97-2003 (.xls) workbook: it looks like an XLSX workbook; "
        "rename it to .xlsx"
    )


def test_xlsx_renamed_csv(tmp_path: Path) -> None:
    path = write_workday_xlsx(tmp_path / "workday.xlsx").rename(tmp_path / "workday.csv")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} is not really a CSV file: it looks like an Excel or OpenDocument workbook (ZIP); "
        "rename it to .xlsx (or .ods)"
    )


def test_zip_without_a_workbook(tmp_path: Path) -> None:
    path = tmp_path / "staff.xlsx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} is not really an XLSX workbook: it looks like a ZIP archive without a workbook "
        "(a Word document or a zipped folder?); export the data again"
    )


def test_truncated_xlsx(tmp_path: Path) -> None:
    full = write_workday_xlsx(tmp_path / "full.xlsx").read_bytes()
    path = tmp_path / "cut.xlsx"
    path.write_bytes(full[: len(full) // 2])
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == f"{path} is damaged or incomplete; download or export it again"


def test_truncated_xls(tmp_path: Path, engine: str) -> None:
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Staff")
    for i in range(200):
        ws.write(i, 0, f"row {i}")
    full_path = tmp_path / "full.xls"
    wb.save(str(full_path))
    full = full_path.read_bytes()
    path = tmp_path / "cut.xls"
    path.write_bytes(full[: len(full) // 2])
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    message = str(err.value)
    assert message.startswith(f"{path} is damaged or incomplete (")
    assert message.endswith("); download or export it again")
    assert "\n" not in message


def test_password_protected_xlsx(tmp_path: Path) -> None:
    # Excel saves an encrypted workbook as an OLE2 compound file holding an "EncryptedPackage" stream
    # (MS-OFFCRYPTO); no writer here can encrypt, so the file is built with the two markers the reader
    # looks for: the OLE2 signature and the stream's UTF-16 name in the directory.
    path = tmp_path / "locked.xlsx"
    path.write_bytes(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504) + "EncryptedPackage".encode("utf-16-le") + bytes(64)
    )
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} is password-protected; remove the password in Excel "
        "(File > Info > Protect Workbook > Encrypt with Password) and save it again"
    )


def rewrite_parts(path: Path, change: Callable[[str, bytes], bytes]) -> None:
    """Rewrite every part of the archive at ``path`` through ``change(name, data)``."""
    with zipfile.ZipFile(path) as source:
        parts = [(info.filename, source.read(info.filename)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts:
            target.writestr(name, change(name, data))


def test_a_password_protected_ods_is_named_so(tmp_path: Path) -> None:
    # LibreOffice's "Save with password" keeps the ODS a ZIP: each part is encrypted, and the manifest says how
    # (ODF 1.2, part 3, 3.4). LibreOffice is not a test dependency, so odfpy writes the spreadsheet and its
    # content is replaced by what an encrypted part is to a reader without the password: bytes that are no XML.
    # It read "is damaged or incomplete (not well-formed ...)".
    path = tmp_path / "salaries.ods"
    doc = OpenDocumentSpreadsheet()
    doc.spreadsheet.addElement(Table(name="Staff"))
    doc.save(str(path))
    encryption = (b'><manifest:encryption-data manifest:checksum-type="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0'
                  b'#sha256-1k" manifest:checksum="bm90IGEgcmVhbCBjaGVja3N1bQ=="><manifest:algorithm manifest:algorithm-'
                  b'name="http://www.w3.org/2001/04/xmlenc#aes256-cbc" manifest:initialisation-vector="AAAAAAAAAAAAAAAAAAA'
                  b'AAA=="/><manifest:key-derivation manifest:key-derivation-name="PBKDF2" manifest:key-size="32" manifest:'
                  b'iteration-count="100000" manifest:salt="AAAAAAAAAAAAAAAAAAAAAA=="/></manifest:encryption-data>'
                  b"</manifest:file-entry>")

    def encrypt(name: str, data: bytes) -> bytes:
        if name == "content.xml":
            return bytes(range(256)) * (len(data) // 256 + 1)
        if name == "META-INF/manifest.xml":
            return re.sub(rb'(<manifest:file-entry [^>]*full-path="content.xml"[^>]*?)/>', rb"\1" + encryption, data)
        return data

    rewrite_parts(path, encrypt)
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} is password-protected; remove the password in LibreOffice "
        "(File > Save As, with 'Save with password' unticked) and save it again"
    )


# Excel's "Strict Open XML Spreadsheet" save: ISO 29500 Strict's namespaces instead of the usual ones
STRICT_NAMESPACES = {
    b"http://schemas.openxmlformats.org/spreadsheetml/2006/main": b"http://purl.oclc.org/ooxml/spreadsheetml/main",
    b"http://schemas.openxmlformats.org/officeDocument/2006/relationships":
        b"http://purl.oclc.org/ooxml/officeDocument/relationships",
}


def test_a_strict_open_xml_workbook_is_named_so(tmp_path: Path) -> None:
    # it read "is empty (it has no sheets)": the reading libraries know only the usual namespaces
    path = write_workday_xlsx(tmp_path / "staff.xlsx")

    def strict(name: str, data: bytes) -> bytes:
        for usual, iso in STRICT_NAMESPACES.items():
            data = data.replace(usual, iso)
        return data

    rewrite_parts(path, strict)
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} is saved as a Strict Open XML Spreadsheet, which cannot be read; open it in Excel and save it as "
        "'Excel Workbook (*.xlsx)'"
    )


def test_too_many_cells_in_a_row(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text("Title\nID,Name\n1,Ann,\n2,Smith, Jo\n", encoding="utf-8")
    table = read_spreadsheet(path)
    assert table.frame.to_dict("records") == [{"ID": "1", "Name": "Ann"}, {"ID": "2", "Name": "Smith"}]
    assert {row: [p.code for p in found] for row, found in table.row_problems.items()} == {4: ["extra-cells"]}
    assert table.row_problems[4][0].message == (
        "Row 4 has 3 cells but the header row has 2 (' Jo' beyond the last column): a value holding ',' "
        "without quotes shifts the row's values; put quotes around it."
    )


def test_undecodable_text_with_an_explicit_encoding(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes("ID,Name\n1,Zoë\n".encode("cp1252"))
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path, encoding="utf-8")
    assert str(err.value) == (
        f"{path} is not valid utf-8 text (byte 0xeb at offset 12); check the encoding set for this file"
    )


def test_header_row_beyond_the_end(tmp_path: Path) -> None:
    path = tmp_path / "short.csv"
    path.write_text("ID\n1\n", encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path, header_row=9)
    assert str(err.value) == f"{path}: header row 9 is beyond the last row (2)"


def test_blank_header_row(tmp_path: Path) -> None:
    path = tmp_path / "gap.csv"
    path.write_text("Title\n\nID\n1\n", encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path, header_row=2)
    assert str(err.value) == f"{path}: row 2 is blank, so it cannot be the header row"
