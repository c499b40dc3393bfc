"""Workbooks read as the cells Excel shows: number formats, full precision, ODS dates and times, the sheet
read, and damaged files refused with one line. Every file is written by a real writer."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import struct
import zipfile
from pathlib import Path

import openpyxl
import pytest
import xlsxwriter
import xlwt
from click.testing import CliRunner
from odf.number import Number, NumberStyle
from odf.number import Text as NumberText
from odf.opendocument import OpenDocumentSpreadsheet
from odf.style import Style, TableProperties
from odf.table import Table, TableCell, TableRow
from odf.text import P
from openpyxl.chart import BarChart, Reference

from hrimport import reader
from hrimport.cli import main
from hrimport.errors import InputFileError
from hrimport.reader import read_spreadsheet, workbook
from hrimport.reader.display_formats import display_format
from hrimport.reader.number_formats import ZeroPadded, zero_padded_format
from tests.staff_files import HEADER, person, write_config

FIXTURES = Path(__file__).resolve().parent / "fixtures"


# --- number formats -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("000000", ZeroPadded(6)),
        ("00000", ZeroPadded(5)),
        ('"EMP"0000', ZeroPadded(4, prefix="EMP")),
        ("\\E\\M\\P-0000", ZeroPadded(4, prefix="EMP-")),
        ('0000" (old)"', ZeroPadded(4, suffix=" (old)")),
        ("[Blue]000000", ZeroPadded(6)),
        ("000000;-000000", ZeroPadded(6, sections=2)),
        ('"E;1"000', ZeroPadded(3, prefix="E;1")),
        ("0", None),  # one digit: nothing to pad
        ("General", None),
        ("0.00", None),
        ("#,##0", None),
        ("000.000", None),
        ("00%", None),
        ("00E+00", None),
        ("yyyy-mm-dd", None),
        ("[>100]0000", None),  # a condition decides the text
        ("@", None),
    ],
)
def test_which_format_codes_pad_with_zeros(code: str, expected: ZeroPadded | None) -> None:
    assert zero_padded_format(code) == expected


@pytest.mark.parametrize(
    ("pad", "value", "shown"),
    [
        (ZeroPadded(6), 123.0, "000123"),
        (ZeroPadded(6), 1234567.0, "1234567"),  # longer than the format: all digits
        (ZeroPadded(4, prefix="EMP"), 45.0, "EMP0045"),
        (ZeroPadded(4, prefix="EMP"), -3.0, "-EMP0003"),  # one section: Excel puts the minus first
        (ZeroPadded(4), 12.5, "0013"),  # Excel rounds half away from zero
        (ZeroPadded(4), 12.4, "0012"),
        (ZeroPadded(4, sections=2), -3.0, None),  # the negative section decides: left as read
    ],
)
def test_a_zero_padded_format_shows_a_number_as_excel_does(pad: ZeroPadded, value: float, shown: str | None) -> None:
    assert pad.show(value) == shown


@pytest.mark.parametrize(
    ("code", "value", "shown"),
    [
        ("0%", 0.8, "80%"),
        ("0.00%", 0.12345, "12.35%"),
        ("#,##0.00", 1234.5678, "1,234.57"),
        ("#,##0", 1234567, "1,234,567"),
        ("#,##0", 0, "0"),
        ("0", 2.5, "3"),  # Excel rounds half away from zero...
        ("0.00", 2.675, "2.68"),  # ...of the 15 digits it keeps (the double is 2.67499999...)
        ("0.00", -0.001, "-0.00"),
        ("0.0", 2.5, "2.5"),  # the text read: not listed
        ("#.##", 5, "5."),
        ("0.0??", 1.5, "1.5"),  # ? pads with spaces: none at the ends
        ('"RM"#,##0.00', 5200, "RM5,200.00"),
        ("[$€-407]#,##0.00", 1234.5, "€1,234.50"),
        ("#,##0.00 [$€-407]", 1234.5, "1,234.50 €"),
        ('"$"#,##0.00', -5, "-$5.00"),  # one section: the minus first
        ("#,##0.00;(#,##0.00)", -1234.5, "(1,234.50)"),
        ("#,##0.00;[Red]-#,##0.00", -1234.5, "-1,234.50"),
        ('_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)', 1234.5, "$1,234.50"),
        ('_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)', 0, "$-"),
        ("0;-0;;@", 0, ""),  # an empty section for zero: the cell shows nothing
        ("#,##0,", 1234567, "1,235"),  # a comma after the digits: thousands
        ('0.0,,"M"', 12345678, "12.3M"),
        ("000-00-0000", 12345678, "012-34-5678"),
        ("(000) 000-0000", 5551234567, "(555) 123-4567"),
    ],
)
def test_a_display_format_shows_a_number_as_excel_does(code: str, value: float, shown: str) -> None:
    display = display_format(code)
    assert display is not None and display.show(value) == shown


@pytest.mark.parametrize("code", ["General", "@", "yyyy-mm-dd", "[h]:mm", "0.00E+00", "# ?/?", "[>=100]0;0",
                                  "[DBNum1]0"])
def test_formats_the_reader_does_not_render_are_not_display_formats(code: str) -> None:
    """General and text show the number as read, dates are dates; scientific notation, fractions, conditions
    and numeral systems are left unlisted (README)."""
    assert display_format(code) is None


def write_formatted_xlsxwriter(path: Path) -> Path:
    """Ids stored as numbers shown through zero-padded formats, next to cells those formats must not touch."""
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("Staff")
    six = wb.add_format({"num_format": "000000"})
    emp = wb.add_format({"num_format": '"EMP"0000'})
    money = wb.add_format({"num_format": "#,##0.00"})
    date = wb.add_format({"num_format": "dd/mm/yyyy"})
    ws.write_row("B2", ["Employee ID", "Code", "Salary", "Hire Date", "Text ID"])
    ws.write_number("B3", 123, six)
    ws.write_number("C3", 45, emp)
    ws.write_number("D3", 5000.5, money)
    ws.write_datetime("E3", dt.datetime(2020, 1, 31), date)
    ws.write_string("F3", "77", six)  # text shown through a number format is shown as it is
    ws.write_number("B4", 1234567, six)
    ws.write_number("C4", 7, emp)
    ws.write_number("D4", 12, money)
    ws.write_blank("E4", None, six)
    ws.write_string("F4", "000078")
    wb.close()
    return path


def test_zero_padded_ids_written_by_xlsxwriter_read_as_excel_shows_them(tmp_path: Path, engine: str) -> None:
    table = read_spreadsheet(write_formatted_xlsxwriter(tmp_path / "ids.xlsx"))
    assert table.row_numbers == [3, 4]
    assert table.frame.to_dict("records") == [
        {"Employee ID": "000123", "Code": "EMP0045", "Salary": "5000.5", "Hire Date": "2020-01-31", "Text ID": "77"},
        {"Employee ID": "1234567", "Code": "EMP0007", "Salary": "12", "Hire Date": "", "Text ID": "000078"},
    ]


def test_a_zero_padded_id_with_more_attributes_after_its_style_reads_as_excel_shows_it(tmp_path: Path,
                                                                                       engine: str) -> None:
    # <c r="B3" s="1" ph="1">: an attribute after the style (ph, cm, vm: Excel's order puts them there) must
    # not hide the cell from the look for zero-padded styles
    good = write_formatted_xlsxwriter(tmp_path / "good.xlsx").read_bytes()
    path = tmp_path / "ids.xlsx"
    with zipfile.ZipFile(io.BytesIO(good)) as src, zipfile.ZipFile(path, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data, found = re.subn(rb'(<c r="B3" s="\d+")>', rb'\1 ph="1">', data)
                assert found == 1
            dst.writestr(item, data)
    assert read_spreadsheet(path).frame["Employee ID"].tolist() == ["000123", "1234567"]


def with_namespace_prefix(path: Path, target: Path) -> Path:
    """The workbook ``path`` as Microsoft's Open XML SDK writes it (and HR systems built on it): every
    SpreadsheetML element with the prefix x: (``<x:c r="B3" s="1">``)."""
    main_namespace = b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.startswith("xl/") and main_namespace in data:
                declaration, body = data.split(b"?>", 1)
                body = re.sub(rb"<(/?)(?=[A-Za-z])", rb"<\1x:", body)
                data = declaration + b"?>" + body.replace(main_namespace, main_namespace.replace(b"xmlns", b"xmlns:x"), 1)
            dst.writestr(item, data)
    return target


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_workbook_written_with_a_namespace_prefix_reads_as_excel_shows_it(
        tmp_path: Path, engine: str, streamed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # the look for zero-padded styles sought '<c ': the ids of such a file were sent as 123 and 1234567
    path = with_namespace_prefix(write_formatted_xlsxwriter(tmp_path / "plain.xlsx"), tmp_path / "sdk.xlsx")
    assert b"<x:c " in zipfile.ZipFile(path).read("xl/worksheets/sheet1.xml")
    if streamed:  # a big workbook's way: this one is small, so the threshold goes down
        monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    chunks, _ = reader.read_spreadsheet_chunks(path, chunk_rows=1)
    assert [record for chunk in chunks for record in chunk.frame.to_dict("records")] == [
        {"Employee ID": "000123", "Code": "EMP0045", "Salary": "5000.5", "Hire Date": "2020-01-31", "Text ID": "77"},
        {"Employee ID": "1234567", "Code": "EMP0007", "Salary": "12", "Hire Date": "", "Text ID": "000078"},
    ]


def with_single_quotes(path: Path, target: Path) -> Path:
    """The workbook ``path`` as a writer quoting its attributes with ``'`` writes it (valid XML, which Excel and
    the libraries read): ``<row r='3' hidden='1'>``, ``<col min='3' max='3' hidden='1'/>``, ``<c r='B3' s='1'>``,
    and its row tags over two lines (``<row\n r='3'``)."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.startswith("xl/") and item.filename.endswith(".xml"):
                data = re.sub(rb'(<[A-Za-z][^<>]*)', lambda tag: re.sub(rb'="([^"]*)"', rb"='\1'", tag.group()), data)
                data = data.replace(b"<row ", b"<row\n  ")
            dst.writestr(item, data)
    return target


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_workbook_quoting_its_attributes_in_single_quotes_reads_as_excel_shows_it(
        tmp_path: Path, engine: str, streamed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # the looks for hidden rows and columns sought hidden="1", the look for zero-padded styles s="1": the hidden
    # row and column of such a file were sent without a word, its ids as 123 and 1234567
    plain = write_formatted_xlsxwriter(tmp_path / "plain.xlsx")
    book = openpyxl.load_workbook(plain)
    book.active.row_dimensions[4].hidden = True
    book.active.column_dimensions["F"].hidden = True
    book.save(plain)
    path = with_single_quotes(plain, tmp_path / "quoted.xlsx")
    sheet = zipfile.ZipFile(path).read("xl/worksheets/sheet1.xml")
    assert b"<row\n  r='4'" in sheet and b" hidden='1'" in sheet and b'="' not in sheet
    if streamed:  # a big workbook's way: this one is small, so the threshold goes down
        monkeypatch.setattr(reader, "STREAM_BYTES", 0)

    chunks, _ = reader.read_spreadsheet_chunks(path, chunk_rows=1)
    chunks = list(chunks)

    assert [record for chunk in chunks for record in chunk.frame.to_dict("records")] == [
        {"Employee ID": "000123", "Code": "EMP0045", "Salary": "5000.5", "Hire Date": "2020-01-31", "Text ID": "77"},
        {"Employee ID": "1234567", "Code": "EMP0007", "Salary": "12", "Hire Date": "", "Text ID": "000078"},
    ]
    assert [int(row) for chunk in chunks for row in chunk.hidden_rows] == [4]
    assert chunks[0].info.hidden_columns == ["Text ID"]


def test_a_workbook_whose_values_hold_an_equals_sign_between_spaces_is_streamed_as_excel_wrote_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Excel quotes a sheet named 'Staff = 2026', a number format '0" = n"', a data validation's message and a
    # filter's value like any other value, in double quotes; the look for a writer quoting otherwise found ' = '
    # in them, and such a workbook was copied and read whole (250,000 rows in 476 MB, where 279 MB streamed)
    path = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff = 2026")
    sheet.write_row(0, 0, HEADER)
    people = [person(n) for n in range(1, 41)]  # more than the rows the header is looked for in
    for r, row in enumerate(people, start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
    sheet.write_number(1, HEADER.index("Shoe Size"), 38, book.add_format({"num_format": '0" = size"'}))
    sheet.data_validation(1, 0, 2, 0, {"validate": "length", "criteria": "==", "value": 6,
                                       "input_message": "6 digits = an id"})
    sheet.autofilter(0, 0, 2, len(HEADER) - 1)
    sheet.filter_column_list(HEADER.index("Title"), ["Analyst", "Analyst = Senior"])
    book.close()
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)  # a big workbook's way: this one is small

    chunks, streamed = reader.read_spreadsheet_chunks(path, chunk_rows=1)

    assert streamed
    assert [record["Employee ID"] for chunk in chunks for record in chunk.frame.to_dict("records")] == [
        row["Employee ID"] for row in people]


def test_zero_padded_ids_written_by_openpyxl_read_as_excel_shows_them(tmp_path: Path, engine: str) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Staff"
    ws.append(["Employee ID", "Badge", "Days"])
    for n, (ident, badge, days) in enumerate([(123, 9, 1.5), (42, 10, 2), (999999, 11, 0)], start=2):
        ws.cell(n, 1, ident).number_format = "00000"
        ws.cell(n, 2, badge).number_format = '"B-"000'
        ws.cell(n, 3, days)
    path = tmp_path / "ids.xlsx"
    wb.save(path)
    table = read_spreadsheet(path)
    assert table.frame.to_dict("records") == [
        {"Employee ID": "00123", "Badge": "B-009", "Days": "1.5"},
        {"Employee ID": "00042", "Badge": "B-010", "Days": "2"},
        {"Employee ID": "999999", "Badge": "B-011", "Days": "0"},
    ]


# --- numbers, dates and times ---------------------------------------------------------------------------

NUMBERS = [1e-10, 12345678901234, 0.1 + 0.2, 1 / 3, 1e20, 3.5, -2.25, 2.5e-5, 1.0000000001]
SHOWN = ["1e-10", "12345678901234", "0.3", "0.333333333333333", "1e+20", "3.5", "-2.25", "2.5e-05", "1.0000000001"]


def test_numbers_keep_full_precision_in_an_xlsx(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "numbers.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet()
    ws.write_column("A1", ["Value", *NUMBERS])
    wb.close()
    assert read_spreadsheet(path).frame["Value"].tolist() == SHOWN


def test_a_tenth_decimal_is_kept_when_no_other_cell_needs_a_closer_look(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "numbers.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet()
    ws.write_column("A1", ["Value", 1.0000000001, 2, 2.5])
    wb.close()
    assert read_spreadsheet(path).frame["Value"].tolist() == ["1.0000000001", "2", "2.5"]


def test_numbers_keep_full_precision_in_an_xls(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "numbers.xls"
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Numbers")
    ws.write(0, 0, "Value")
    for i, value in enumerate(NUMBERS, start=1):
        ws.write(i, 0, value)
    wb.save(str(path))
    assert read_spreadsheet(path).frame["Value"].tolist() == SHOWN


def ods_cell(value: object, style: str | None = None) -> TableCell:
    """A cell as LibreOffice writes it: the typed value, and the text it shows."""
    extra = {"stylename": style} if style else {}
    if value is None:
        return TableCell()
    if isinstance(value, bool):
        cell = TableCell(valuetype="boolean", booleanvalue=str(value).lower(), **extra)
    elif isinstance(value, (dt.datetime, dt.date)):
        cell = TableCell(valuetype="date", datevalue=value.isoformat(), **extra)
    elif isinstance(value, dt.time):
        cell = TableCell(valuetype="time", timevalue=f"PT{value.hour:02d}H{value.minute:02d}M{value.second:02d}S")
    elif isinstance(value, (int, float)):
        cell = TableCell(valuetype="float", value=repr(value), **extra)
    else:
        cell = TableCell(valuetype="string", **extra)
    cell.addElement(P(text=str(value)))
    return cell


def _plain(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, dt.date, dt.time))


def write_ods(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    doc = OpenDocumentSpreadsheet()
    for name, rows in sheets.items():
        table = Table(name=name)
        for values in rows:
            row = TableRow()
            for value in values:
                row.addElement(ods_cell(value) if _plain(value) else value)
            table.addElement(row)
        doc.spreadsheet.addElement(table)
    doc.save(str(path))
    return path


def test_ods_dates_are_iso_dates_and_times_are_times(tmp_path: Path, engine: str) -> None:
    midnight = TableCell(valuetype="date", datevalue="2023-07-02T00:00:00")  # as some exporters write dates
    midnight.addElement(P(text="02/07/2023"))
    path = write_ods(tmp_path / "dates.ods", {"Staff": [
        ["Start", "Stamp", "Clock in", "Midnight", "Small", "Flag"],
        [dt.date(2023, 7, 1), dt.datetime(2023, 7, 1, 9, 30), dt.time(9, 30, 15), midnight, 1e-10, True],
    ]})
    assert read_spreadsheet(path).frame.to_dict("records") == [{
        "Start": "2023-07-01", "Stamp": "2023-07-01 09:30:00", "Clock in": "09:30:15",
        "Midnight": "2023-07-02", "Small": "1e-10", "Flag": "TRUE",
    }]


# --- the sheet read -------------------------------------------------------------------------------------


def write_hidden_first(path: Path) -> Path:
    wb = openpyxl.Workbook()
    lookup = wb.active
    lookup.title = "Lookup"
    lookup.append(["Code", "Meaning"])
    lookup.append(["P", "Payroll"])
    lookup.sheet_state = "hidden"
    staff = wb.create_sheet("Staff")
    staff.append(["Employee ID", "Name"])
    staff.append(["000123", "Ana Lim"])
    wb.save(path)
    return path


def test_a_hidden_first_sheet_is_skipped_and_the_skip_is_said(tmp_path: Path, engine: str) -> None:
    table = read_spreadsheet(write_hidden_first(tmp_path / "hidden.xlsx"))
    assert table.info.sheet == "Staff"
    assert table.info.sheet_note == (
        "Read sheet 'Staff', the first visible sheet of cells; skipped 'Lookup' (hidden). "
        "Set 'sheet' to read another one."
    )
    assert table.frame.to_dict("records") == [{"Employee ID": "000123", "Name": "Ana Lim"}]


def test_a_hidden_sheet_named_in_the_config_is_read(tmp_path: Path, engine: str) -> None:
    table = read_spreadsheet(write_hidden_first(tmp_path / "hidden.xlsx"), sheet="lookup")
    assert (table.info.sheet, table.info.sheet_note) == ("Lookup", None)
    assert table.frame.to_dict("records") == [{"Code": "P", "Meaning": "Payroll"}]


def test_the_first_visible_sheet_needs_no_note(tmp_path: Path, engine: str) -> None:
    table = read_spreadsheet(write_formatted_xlsxwriter(tmp_path / "ids.xlsx"))
    assert (table.info.sheet, table.info.sheet_note) == ("Staff", None)


def test_a_hidden_first_sheet_of_an_ods_is_skipped(tmp_path: Path, engine: str) -> None:
    doc = OpenDocumentSpreadsheet()
    hidden = Style(name="hiddentable", family="table")
    hidden.addElement(TableProperties(display="false"))
    doc.automaticstyles.addElement(hidden)
    for name, style, rows in [("Lists", "hiddentable", [["Code"], ["P"]]), ("Staff", None, [["ID"], ["0042"]])]:
        table = Table(name=name, stylename=style) if style else Table(name=name)
        for values in rows:
            row = TableRow()
            for value in values:
                row.addElement(ods_cell(value))
            table.addElement(row)
        doc.spreadsheet.addElement(table)
    path = tmp_path / "hidden.ods"
    doc.save(str(path))
    table = read_spreadsheet(path)
    assert table.info.sheet == "Staff"
    assert table.info.sheet_note is not None and "'Lists' (hidden)" in table.info.sheet_note


def write_chart_first(path: Path) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Staff"
    ws.append(["Employee ID", "Salary"])
    ws.append(["000123", 5000])
    chart = BarChart()
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=2), titles_from_data=True)
    wb.create_chartsheet("Chart", 0).add_chart(chart)
    wb.save(path)
    return path


def test_a_chart_sheet_in_front_is_skipped(tmp_path: Path, engine: str) -> None:
    table = read_spreadsheet(write_chart_first(tmp_path / "chart.xlsx"))
    assert table.info.sheet == "Staff"
    assert table.info.sheet_note is not None and "'Chart' (a chart sheet)" in table.info.sheet_note
    assert table.frame.to_dict("records") == [{"Employee ID": "000123", "Salary": "5000"}]


def test_a_chart_sheet_named_in_the_config_is_refused(tmp_path: Path, engine: str) -> None:
    path = write_chart_first(tmp_path / "chart.xlsx")
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path, sheet="Chart")
    assert str(err.value) == (
        f"{path}: sheet 'Chart' is a chart sheet, not a table of cells; its sheets are: 'Chart', 'Staff'"
    )


def test_a_cover_sheet_in_front_of_the_table_is_named_with_the_sheets_to_choose_from(tmp_path: Path,
                                                                                  engine: str) -> None:
    # the line said only "header row 1 has 'Headcount report'": nothing about sheets, or how to choose one
    path = tmp_path / "staff.xlsx"
    wb = openpyxl.Workbook()
    cover = wb.active
    assert cover is not None
    cover.title = "Cover"
    for line in ["Headcount report", "Generated 2026-11-01 by PayrollPro", "Confidential"]:
        cover.append([line])
    staff = wb.create_sheet("Staff")
    staff.append(HEADER)
    staff.append([person(1)[h] for h in HEADER])
    wb.save(path)
    config = write_config(tmp_path / "staff.toml")
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(path)])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {path.name}: column(s) 'Employee ID', 'Name', 'Email', 'Country', 'Title' and 10 more named in the "
        "config are not in the file (sheet 'Cover', header row 1 has 'Headcount report'); the workbook's other "
        "sheets are 'Staff': name the one to read with the 'sheet' setting in [source]\n"
    )
    config.write_text(config.read_text().replace("[source]\n", '[source]\nsheet = "Staff"\n'))
    assert CliRunner().invoke(main, ["staff", "validate", str(config), str(path)]).exit_code == 0


def test_a_one_line_cover_sheet_is_named_with_the_sheets_to_choose_from(tmp_path: Path, engine: str) -> None:
    # the commonest cover page, one title cell, read as a header with nothing under it: the line said only
    # "has a header row (row 1) but no data rows under it", naming neither the sheet read nor the others
    path = tmp_path / "staff.xlsx"
    wb = openpyxl.Workbook()
    cover = wb.active
    assert cover is not None
    cover.title = "Cover"
    cover.append(["Headcount report"])
    staff = wb.create_sheet("Staff")
    staff.append(HEADER)
    staff.append([person(1)[h] for h in HEADER])
    wb.save(path)
    config = write_config(tmp_path / "staff.toml")
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(path)])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {path} has a header row (row 1, sheet 'Cover': 'Headcount report') but no data rows under it; "
        "the workbook's other sheets are 'Staff': name the one to read with the 'sheet' setting in [source]\n"
    )
    result = CliRunner().invoke(main, ["init", str(path), "-o", str(tmp_path / "new.toml")])
    assert result.exit_code == 2
    assert result.output.endswith("the workbook's other sheets are 'Staff': run hrimport init again with --sheet "
                                  "and the name of the one to read\n")
    config.write_text(config.read_text().replace("[source]\n", '[source]\nsheet = "Staff"\n'))
    assert CliRunner().invoke(main, ["staff", "validate", str(config), str(path)]).exit_code == 0


def test_a_workbook_with_only_a_chart_visible_is_refused(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "chart.xlsx"
    wb = openpyxl.load_workbook(write_chart_first(path))
    wb["Staff"].sheet_state = "hidden"
    wb.save(path)
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path} has no visible sheet of cells (its sheets are: 'Chart', 'Staff'); unhide the sheet to read "
        "in Excel, or name it with the 'sheet' setting"
    )


# --- both reading paths agree ---------------------------------------------------------------------------

# "Like" holds text that reads like a boolean, a date or a time cell: it must stay the text it is.
EVERY_KIND = [
    ["Text", "Number", "Tiny", "Big", "Date", "Stamp", "Time", "Flag", "Empty", "Padded", "Like"],
    ["000123", 5000, 1e-10, 12345678901234, dt.date(2020, 1, 31), dt.datetime(2021, 3, 1, 9, 30),
     dt.time(17, 45), True, None, 42, "true"],
    ["Zoë 王芳", 3.5, 0.1 + 0.2, 1e20, dt.date(1999, 12, 31), dt.datetime(2024, 2, 29, 23, 59, 59),
     dt.time(0, 0, 1), False, None, 7, "2020-01-01 00:00:00"],
    ["=not a formula", -2.25, 1 / 3, -12345678901234, dt.date(2024, 1, 5), dt.datetime(2024, 1, 5, 12),
     dt.time(12), True, None, 123456, "1899-12-30 08:00:00"],
]


def _xlsxwriter_every_kind(path: Path, options: dict | None = None) -> Path:
    wb = xlsxwriter.Workbook(str(path), options or {})
    ws = wb.add_worksheet("Staff")
    formats = {
        dt.date: wb.add_format({"num_format": "yyyy-mm-dd"}),
        dt.datetime: wb.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"}),
        dt.time: wb.add_format({"num_format": "hh:mm:ss"}),
    }
    padded = wb.add_format({"num_format": "000000"})
    for r, row in enumerate(EVERY_KIND):
        for c, value in enumerate(row):
            if r and c == 9:
                ws.write_number(r, c, value, padded)
            elif isinstance(value, str):
                ws.write_string(r, c, value)
            elif type(value) in formats:
                ws.write_datetime(r, c, value, formats[type(value)])
            elif value is not None:
                ws.write(r, c, value)
    wb.close()
    return path


def _xlsxwriter_inline_strings_every_kind(path: Path) -> Path:
    """xlsxwriter's constant_memory mode writes text as inline strings, not in a shared strings table."""
    return _xlsxwriter_every_kind(path, {"constant_memory": True})


def _openpyxl_every_kind(path: Path) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    for r, row in enumerate(EVERY_KIND, start=1):
        for c, value in enumerate(row, start=1):
            cell = ws.cell(r, c, value)
            if r > 1 and c == 10:
                cell.number_format = "000000"
            if isinstance(value, str) and value.startswith("="):
                cell.data_type = "s"  # a text cell, not a formula
    wb.save(path)
    return path


def _xlwt_every_kind(path: Path) -> Path:
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Staff")
    styles = {
        dt.date: xlwt.easyxf(num_format_str="YYYY-MM-DD"),
        dt.datetime: xlwt.easyxf(num_format_str="YYYY-MM-DD HH:MM:SS"),
        dt.time: xlwt.easyxf(num_format_str="HH:MM:SS"),
    }
    for r, row in enumerate(EVERY_KIND):
        for c, value in enumerate(row):
            if value is None:
                continue
            if type(value) in styles:
                ws.write(r, c, value, styles[type(value)])
            else:
                ws.write(r, c, value)
    wb.save(str(path))
    return path


def _odfpy_every_kind(path: Path) -> Path:
    return write_ods(path, {"Staff": EVERY_KIND})


@pytest.mark.parametrize(
    "write",
    [_xlsxwriter_every_kind, _xlsxwriter_inline_strings_every_kind, _openpyxl_every_kind, _xlwt_every_kind,
     _odfpy_every_kind],
    ids=["xlsxwriter", "xlsxwriter-inline-strings", "openpyxl", "xlwt", "odfpy"],
)
def test_both_reading_paths_give_the_same_text_for_every_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write
) -> None:
    suffix = {"_xlwt_every_kind": ".xls", "_odfpy_every_kind": ".ods"}.get(write.__name__, ".xlsx")
    path = write(tmp_path / f"every{suffix}")
    fast = read_spreadsheet(path)
    monkeypatch.setattr(workbook, "FAST_XLSX", False)
    slow = read_spreadsheet(path)
    assert fast.frame.to_dict("records") == slow.frame.to_dict("records")
    assert (fast.row_numbers, fast.info.headers) == (slow.row_numbers, slow.info.headers)
    first = fast.frame.iloc[0].to_dict()
    assert first == {
        "Text": "000123", "Number": "5000", "Tiny": "1e-10", "Big": "12345678901234", "Date": "2020-01-31",
        "Stamp": "2021-03-01 09:30:00", "Time": "17:45:00", "Flag": "TRUE", "Empty": "",
        # xlwt and odfpy here write no number format: only the XLSX writers pad
        "Padded": "000042" if suffix == ".xlsx" else "42", "Like": "true",
    }
    assert fast.frame["Flag"].tolist() == ["TRUE", "FALSE", "TRUE"]
    assert fast.frame["Like"].tolist() == ["true", "2020-01-01 00:00:00", "1899-12-30 08:00:00"]
    assert fast.frame["Tiny"].tolist() == ["1e-10", "0.3", "0.333333333333333"]
    assert fast.frame["Big"].tolist() == ["12345678901234", "1e+20", "-12345678901234"]
    assert fast.frame["Time"].tolist() == ["17:45:00", "00:00:01", "12:00:00"]


@pytest.mark.parametrize(("stored", "date_format"), [(0, "dd/mm/yyyy"), (0.5, "dd/mm/yyyy hh:mm")])
def test_a_zero_in_a_date_cell_is_told_as_the_day_excel_shows_never_as_the_last_day_of_1899(
        tmp_path: Path, engine: str, stored: float, date_format: str) -> None:
    """A 0 in a date cell (an HR system's "no date"; Excel shows 00/01/1900, 0 January 1900, a day that does not
    exist) read as 1899-12-31 on fastexcel's path, and was sent as a birth date; then as the time 00:00:00, and its
    row was held back saying "'00:00:00' is not a real date", which no one sees in the file. It reads as the day
    Excel shows, 1900-01-00, and the row is held back in one line saying what the cell holds, what Excel shows and
    what to do. A 0 in a time cell is the midnight it shows, 00:00:00."""
    path = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff")
    date_format, time_format = book.add_format({"num_format": date_format}), book.add_format({"num_format": "hh:mm"})
    sheet.write_row(0, 0, [*HEADER, "Shift Start"])
    for r, row in enumerate([person(1), person(2)], start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
        sheet.write_number(r, len(HEADER), 0, time_format)  # midnight
    sheet.write_number(2, HEADER.index("Birth Date"), stored, date_format)
    book.close()
    table = read_spreadsheet(path)
    assert table.frame["Birth Date"].tolist() == ["", "1900-01-00" if stored == 0 else "1900-01-00 12:00:00"]
    assert table.frame["Shift Start"].tolist() == ["00:00:00", "00:00:00"]
    config = write_config(tmp_path / "staff.toml")
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(path)])
    assert result.exit_code == 1, result.output
    told = (f"Row 3, column 'Birth Date': the cell holds {stored:g}, which Excel shows as the date 0 January 1900 "
            "(00/01/1900), a day that does not exist; leave the cell empty if there is no date, or enter the date.")
    assert [line for line in result.output.splitlines() if line.startswith("Row ")] == [told]


# --- damaged workbooks: one line, exit 2 ----------------------------------------------------------------


def _broken_sheet_xml(path: Path) -> Path:
    good = write_formatted_xlsxwriter(path.with_name("good.xlsx")).read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(good)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data[: len(data) // 2] + b"<c r=<<<"
            dst.writestr(item, data)
    path.write_bytes(out.getvalue())
    return path


def _corrupt_ods(path: Path) -> Path:
    good = write_ods(path.with_name("good.ods"), {"Staff": [["ID"], ["1"]]}).read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(good)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "content.xml":
                data = b"<office:document-content garbage"
            dst.writestr(item, data)
    path.write_bytes(out.getvalue())
    return path


def _garbage_xls(path: Path) -> Path:
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(range(256)) * 40)
    return path


def _truncated_xls(path: Path) -> Path:
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Staff")
    for i in range(300):
        ws.write(i, 0, f"row {i}")
    wb.save(str(path))
    path.write_bytes(path.read_bytes()[:3000])
    return path


def _truncated_xlsx(path: Path) -> Path:
    data = write_formatted_xlsxwriter(path).read_bytes()
    path.write_bytes(data[: len(data) - 200])
    return path


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("staff.xlsx", _broken_sheet_xml),
        ("staff.xlsx", _truncated_xlsx),
        ("staff.ods", _corrupt_ods),
        ("staff.xls", _garbage_xls),
        ("staff.xls", _truncated_xls),
    ],
    ids=["xlsx-broken-sheet-xml", "xlsx-truncated", "ods-corrupt", "xls-garbage", "xls-truncated"],
)
def test_a_damaged_workbook_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, name: str, damage
) -> None:
    path = damage(tmp_path / name)
    config = write_config(tmp_path / "staff.toml")
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: {path} is damaged or incomplete")
    assert result.output.endswith("; download or export it again\n")
    assert result.output.count("\n") == 1


def test_debug_shows_what_the_library_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _garbage_xls(tmp_path / "staff.xls")
    with caplog.at_level("DEBUG", logger="hrimport.reader"), pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert err.value.__cause__ is not None  # the library's own exception, chained for --debug
    assert [r.message for r in caplog.records] == [f"reading {path} failed"]
    assert caplog.records[0].exc_info is not None


# --- through the CLI, into the sandbox ------------------------------------------------------------------


def _staff_xlsx(path: Path, ids: list[int], *, hidden_first: bool = False) -> Path:
    """A staff export whose Employee ID cells are numbers shown through a 000000 format."""
    wb = openpyxl.Workbook()
    ws = wb.active
    if hidden_first:
        ws.title = "Lists"
        ws.append(["Staff Type"])
        ws.append(["Payroll"])
        ws.sheet_state = "hidden"
        ws = wb.create_sheet("Staff")
    else:
        ws.title = "Staff"
    ws.append(HEADER)
    for n in ids:
        row = person(n)
        ws.append([int(row[h]) if h == "Employee ID" else row[h] for h in HEADER])
        ws.cell(ws.max_row, 1).number_format = "000000"
    wb.save(path)
    return path


@pytest.mark.usefixtures("instant_retries")
def test_numeric_ids_formatted_000000_reach_the_service_as_000123(tmp_path: Path, sandbox, engine: str) -> None:
    data = _staff_xlsx(tmp_path / "staff.xlsx", [123, 42], hidden_first=True)
    config = write_config(tmp_path / "staff.toml")
    env = {"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url}
    result = CliRunner().invoke(
        main, ["staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports")],
        env=env, catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "Read: staff.xlsx: XLSX, sheet 'Staff', header on row 1" in result.output
    assert sorted(s["customer_system_id"] for s in sandbox.staff(99)) == ["000042", "000123"]
    summary = json.loads(max((tmp_path / "reports").glob("*/*/summary.json")).read_text())
    assert summary["counts"]["added"] == 2
    # the hidden first sheet was skipped, and the run says so wherever people look
    assert "Note: Read sheet 'Staff', the first visible sheet of cells; skipped" in result.output
    assert any(n.startswith("Read sheet 'Staff'") for n in summary["notes"])


def test_validate_reads_the_formatted_ids_as_shown(tmp_path: Path, engine: str) -> None:
    data = _staff_xlsx(tmp_path / "staff.xlsx", [123, 123])
    config = write_config(tmp_path / "staff.toml")
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.exit_code == 0  # the same person twice, every value alike: sent once, a warning
    assert "Row 3 repeats row 2: the same external id '000123'" in result.output  # named as the person sees it


# --- a chart in front of the table, saved as .xls by LibreOffice (tests/fixtures/make_libreoffice_fixtures.py) --


def test_an_xls_whose_first_sheet_holds_only_a_chart_names_the_sheets(engine: str) -> None:
    path = FIXTURES / "chart_sheet_first.xls"
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    assert str(err.value) == (
        f"{path}: sheet 'Chart' has no cells; its sheets are: 'Chart', 'Staff'; "
        "name the one to read with the 'sheet' setting"
    )
    table = read_spreadsheet(path, sheet="Staff")
    assert table.frame.to_dict("records") == [
        {"Employee ID": "000123", "Name": "Ana Lim", "Salary": "5000"},
        {"Employee ID": "000124", "Name": "Bo Tan", "Salary": "6200.5"},
    ]


def test_an_excel_xls_sheet_with_a_chart_on_it_reads_its_own_cells_not_the_charts_series(engine: str) -> None:
    # Made by Excel (see fixtures/SOURCES.md): the chart on 'Report' plots Data!A1:B8, and its cached series
    # once came back as Report's cells.
    table = read_spreadsheet(FIXTURES / "excel_embedded_chart.xls", header_row=6)
    assert table.info.sheet == "Report"
    assert table.frame.to_dict("records") == [{"LABEL A6": "LABEL A8", "VALUE C6": "VALUE C8"}]
    assert read_spreadsheet(FIXTURES / "excel_embedded_chart.xls", sheet="Data", header_row=1).frame.iloc[0].tolist() == [
        "2", "3.25", "3.5", "1.5", "6"
    ]


def test_an_xls_charts_series_far_away_is_not_a_cell_far_outside_the_table(tmp_path: Path, engine: str) -> None:
    # The chart on 'Report' keeps its series as cell records inside its own BOF and EOF; one said to be the
    # 65,001st point of the 201st series would make a grid of 13 million cells if it were the sheet's. The
    # library leaves it out of the sheet, and so does the check for cells far outside the table.
    data = bytearray((FIXTURES / "excel_embedded_chart.xls").read_bytes())
    number = data.find(b"\x09\x08\x10\x00\x00\x06\x20\x00")  # the chart's BOF (BIFF8, a chart substream)
    while (record := struct.unpack_from("<HH", data, number)) != (0x0203, 14):  # to its first NUMBER record
        assert record[0] != 0x000A  # not past the chart's EOF
        number += 4 + record[1]
    struct.pack_into("<HH", data, number + 4, 65_000, 200)  # a point of a series
    path = tmp_path / "chart.xls"
    path.write_bytes(bytes(data))
    table = read_spreadsheet(path, header_row=6)
    assert table.frame.to_dict("records") == [{"LABEL A6": "LABEL A8", "VALUE C6": "VALUE C8"}]


def test_an_excel_xls_chart_sheet_named_in_the_config_is_refused(engine: str) -> None:
    path = FIXTURES / "excel_any_sheets.xls"
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path, sheet="Chart")
    assert str(err.value) == (
        f"{path}: sheet 'Chart' is a chart sheet, not a table of cells; "
        "its sheets are: 'Visible', 'Hidden', 'VeryHidden', 'Chart'"
    )


def test_zero_padded_ids_in_an_ods_read_as_shown(tmp_path: Path, engine: str) -> None:
    doc = OpenDocumentSpreadsheet()
    six = NumberStyle(name="N6")
    six.addElement(Number(decimalplaces="0", minintegerdigits="6"))
    emp = NumberStyle(name="NEMP")
    emp.addElement(NumberText(text="EMP"))
    emp.addElement(Number(decimalplaces="0", minintegerdigits="4"))
    two_places = NumberStyle(name="N2")
    two_places.addElement(Number(decimalplaces="2", minintegerdigits="1"))
    for style in (six, emp, two_places):
        doc.automaticstyles.addElement(style)
    for name, data_style in (("ce6", "N6"), ("ceEMP", "NEMP"), ("ce2", "N2")):
        doc.automaticstyles.addElement(Style(name=name, family="table-cell", datastylename=data_style))
    table = Table(name="Staff")
    rows = [
        [ods_cell("Employee ID"), ods_cell("Code"), ods_cell("Salary"), ods_cell("Text ID")],
        [ods_cell(123, "ce6"), ods_cell(45, "ceEMP"), ods_cell(5000.5, "ce2"), ods_cell("77", "ce6")],
        [ods_cell(1234567, "ce6"), ods_cell(7, "ceEMP"), ods_cell(12, "ce2"), ods_cell("000078")],
    ]
    for values in rows:
        row = TableRow()
        for cell in values:
            row.addElement(cell)
        table.addElement(row)
    doc.spreadsheet.addElement(table)
    path = tmp_path / "ids.ods"
    doc.save(str(path))
    assert read_spreadsheet(path).frame.to_dict("records") == [
        {"Employee ID": "000123", "Code": "EMP0045", "Salary": "5000.5", "Text ID": "77"},
        {"Employee ID": "1234567", "Code": "EMP0007", "Salary": "12", "Text ID": "000078"},
    ]


def test_zero_padded_ids_in_an_ods_saved_by_libreoffice(engine: str) -> None:
    table = read_spreadsheet(FIXTURES / "padded_ids.ods")  # made by tests/fixtures/make_libreoffice_fixtures.py
    assert table.frame.to_dict("records") == [
        {"Employee ID": "000123", "Code": "EMP0045", "Name": "Ana Lim"},
        {"Employee ID": "1234567", "Code": "EMP0007", "Name": "Bo Tan"},
    ]


def test_zero_padded_ids_in_an_xls_read_as_shown(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "ids.xls"
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Staff")
    six = xlwt.easyxf(num_format_str="000000")
    emp = xlwt.easyxf(num_format_str='"EMP"0000')
    money = xlwt.easyxf(num_format_str="#,##0.00")
    for c, header in enumerate(["Employee ID", "Code", "Salary", "Text ID"]):
        ws.write(0, c, header)
    for r, (ident, code, salary, text) in enumerate([(123, 45, 5000.5, "77"), (1234567, 7, 12, "000078")], start=1):
        ws.write(r, 0, ident, six)
        ws.write(r, 1, code, emp)
        ws.write(r, 2, salary, money)
        ws.write(r, 3, text, six)
    wb.save(str(path))
    assert read_spreadsheet(path).frame.to_dict("records") == [
        {"Employee ID": "000123", "Code": "EMP0045", "Salary": "5000.5", "Text ID": "77"},
        {"Employee ID": "1234567", "Code": "EMP0007", "Salary": "12", "Text ID": "000078"},
    ]
