"""Builders for the staff tests: a realistic export written by a real CSV writer, and its config."""

from __future__ import annotations

import csv
import datetime as dt
import zipfile
from pathlib import Path

HEADER = ["Employee ID", "Name", "Email", "Country", "Title", "Hire Date", "Staff Type", "Gender",
          "Birth Date", "Is Manager", "Is Employee", "Is Intern", "Old Country", "Move Date",
          "Cost Centre", "Shoe Size"]

GOOD = {
    "Employee ID": "000123", "Name": "Aisha Rahman", "Email": "aisha@acme.example", "Country": "MY",
    "Title": "Analyst", "Hire Date": "2020-01-31", "Staff Type": "Payroll", "Gender": "Female",
    "Birth Date": "", "Is Manager": "", "Is Employee": "", "Is Intern": "", "Old Country": "",
    "Move Date": "", "Cost Centre": "CC-1", "Shoe Size": "38",
}

CONFIG = """
[service]
customer_id = {customer_id}

[source]
{date_order_line}

[report]
job = "test-staff"

[staff]
customer_system_id_type = "TestHRIS"
{email_check_line}

[staff.columns]
"Employee ID" = "customer_system_id"
"Name" = "name"
"Email" = "system_email"
"Country" = "country"
"Title" = "job_title"
"Hire Date" = "job_start_date"
"Staff Type" = "staff_type"
"Gender" = "gender"
"Birth Date" = "birthdate"
"Is Manager" = "is_manager"
"Is Employee" = "is_employee"
"Is Intern" = "is_intern"
"Old Country" = "old_country"
"Move Date" = "new_country_effective_date"

[staff.custom_fields]
"Cost Centre" = "Cost Center"
{extra}
"""


def person(n: int, **changes: str) -> dict[str, str]:
    """A valid row for person ``n`` (external id zero-padded), with ``changes`` applied."""
    row = dict(GOOD)
    row.update({"Employee ID": f"{n:06d}", "Name": f"Person {n}", "Email": f"person{n}@acme.example"})
    row.update(changes)
    return row


def write_csv(path: Path, rows: list[dict[str, str]], header: list[str] | None = None,
              encoding: str = "utf-8") -> Path:
    header = header or HEADER
    with open(path, "w", newline="", encoding=encoding) as fh:
        writer = csv.DictWriter(fh, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_workbook(path: Path, rows: list[dict[str, str]]) -> Path:
    """The same export as a workbook, by xlsxwriter: sheet "Staff", the header on row 1."""
    import xlsxwriter  # the tests' real writer of workbooks

    workbook = xlsxwriter.Workbook(str(path))
    sheet = workbook.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for r, row in enumerate(rows, start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
    workbook.close()
    return path


def write_formulas_workbook(path: Path) -> Path:
    """The export as xlsxwriter writes a workbook whose cells hold formulas: person 2's Cost Centre
    ``="CC-"&"2"``, Hire Date ``=DATE(2020,1,31)`` (shown as a date) and Shoe Size ``=37+1`` (a column not
    sent), person 3's Cost Centre ``=1+1``. xlsxwriter does not calculate: it saves 0 with each formula, or
    the value it is given (2, for ``=1+1``), and asks the program opening the file to calculate them again
    (``<calcPr fullCalcOnLoad="1"/>``)."""
    import xlsxwriter  # the tests' real writer of workbooks

    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for r, row in enumerate([person(1), person(2), person(3)], start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
    sheet.write_formula(2, HEADER.index("Cost Centre"), '="CC-"&"2"')
    sheet.write_formula(2, HEADER.index("Hire Date"), "=DATE(2020,1,31)", book.add_format({"num_format": "yyyy-mm-dd"}))
    sheet.write_formula(2, HEADER.index("Shoe Size"), "=37+1")
    sheet.write_formula(3, HEADER.index("Cost Centre"), "=1+1", None, 2)
    book.close()
    return path


def as_calculated(path: Path) -> Path:
    """The xlsxwriter workbook ``path``, whose formulas were written with their results, as once Excel has
    calculated them: without xlsxwriter's request to calculate every formula again on opening
    (``fullCalcOnLoad``), which Excel drops, so that the results are read. xlsxwriter writes no workbook
    without the request but one set to calculate by hand only."""
    with zipfile.ZipFile(path) as book:
        parts = [(info, book.read(info)) for info in book.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        for info, data in parts:
            book.writestr(info, data.replace(b' fullCalcOnLoad="1"', b"") if info.filename == "xl/workbook.xml" else data)
    return path


def write_config(path: Path, *, customer_id: int = 99, date_order: str | None = "day-first", extra: str = "",
                 base_url: str | None = None, email_check: str | None = None,
                 formula_text: str | None = None, strict_checks: tuple[str, ...] = ()) -> Path:
    """The staff config of these tests; ``date_order=None`` leaves the setting out (each column decides),
    ``email_check`` sets ``[staff] email_check`` ("strict": a row whose e-mail is not name@example.com is
    invalid; unset: the default, a warning), ``formula_text`` sets ``[source] formula_text`` ("reject": a row
    holding text like =Manager is invalid; unset: the default, a warning), ``strict_checks`` sets
    ``[staff] strict_checks`` (the codes of our other doubts to hold a row back for)."""
    line = f'date_order = "{date_order}"' if date_order else ""
    if formula_text:
        line += f'\nformula_text = "{formula_text}"'
    email_line = f'email_check = "{email_check}"' if email_check else ""
    if strict_checks:
        email_line += "\nstrict_checks = [" + ", ".join(f'"{c}"' for c in strict_checks) + "]"
    text = CONFIG.format(customer_id=customer_id, date_order_line=line, extra=extra, email_check_line=email_line)
    if base_url:
        text = text.replace("[service]\n", f'[service]\nbase_url = "{base_url}"\n', 1)
    path.write_text(text, encoding="utf-8")
    return path


def workbook_of_1904(path: Path) -> Path:
    """A Mac Excel workbook (the 1904 date system, whose serial numbers count from 1904-01-01): hire dates as
    date cells, birth dates as the serial numbers a date column shows once its format is set to General."""
    import xlsxwriter  # the tests' real writers of workbooks
    import xlwt

    hires, births = [dt.datetime(2020, 1, 31), dt.datetime(2015, 7, 15)], [32645, 29261]  # 1993-05-18, 1984-02-11
    rows = [person(1), person(2)]
    if path.suffix == ".xls":
        book = xlwt.Workbook()
        book.dates_1904 = True
        sheet = book.add_sheet("Staff")
        date = xlwt.easyxf(num_format_str="dd/mm/yyyy")
        for j, name in enumerate(HEADER):
            sheet.write(0, j, name)
            for i, row in enumerate(rows, start=1):
                cell = {"Hire Date": (hires[i - 1], date), "Birth Date": (births[i - 1],)}.get(name, (row[name],))
                sheet.write(i, j, *cell)
        book.save(str(path))
        return path
    workbook = xlsxwriter.Workbook(str(path), {"date_1904": True})
    sheet = workbook.add_worksheet("Staff")
    date_format = workbook.add_format({"num_format": "dd/mm/yyyy"})
    sheet.write_row(0, 0, HEADER)
    for i, row in enumerate(rows, start=1):
        sheet.write_row(i, 0, [row[h] for h in HEADER])
        sheet.write_datetime(i, HEADER.index("Hire Date"), hires[i - 1], date_format)
        sheet.write_number(i, HEADER.index("Birth Date"), births[i - 1])
    workbook.close()
    return path
