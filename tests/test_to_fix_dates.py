"""A to_fix file imports with the dates its run read, though its rows alone prove no day/month order.

A config without ``date_order`` reads each date column in the order its values prove: the export's
``25/03/2020`` proves day-first, and ``01/02/2020`` beside it is read as 1 February. The rows held back are
often only those with dates that read either way; to_fix holding them as text, imported again with the same
command, was refused ("cannot tell the date order"), though the first run had read those very cells. So
``to_fix.xlsx`` holds each such date as a date cell shown as the export wrote it (``01/02/2020``), and
``to_fix.csv``, which can hold no date cell, is refused naming the order the run read and the one setting.
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import xlsxwriter

from tests import test_timeoff_import as timeoff
from tests.staff_files import HEADER, person, write_config, write_csv
from tests.test_formula_text import write_staff_xlsx
from tests.test_staff_import import latest_run, run_import
from tests.test_to_fix_round_trip import to_fix_writer  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("instant_retries")

HIRE = HEADER.index("Hire Date") + 1
COUNTRY = HEADER.index("Country") + 1


def month_of_ambiguous_dates() -> list[dict[str, str]]:
    """Person 1's hire date proves the column day-first; person 2's reads either way, and Atlantis holds it back."""
    return [person(1, **{"Hire Date": "25/03/2020"}), person(2, Country="Atlantis", **{"Hire Date": "01/02/2020"})]


def hire_dates(sandbox: Any) -> dict[str, str]:
    return {s["customer_system_id"]: s["job_start_date"] for s in sandbox.staff(99)}


def test_to_fix_xlsx_of_a_csv_holds_a_date_its_rows_alone_cannot_place_as_the_date_the_run_read(
    tmp_path: Path, sandbox: Any
) -> None:
    config = write_config(tmp_path / "staff.toml", date_order=None)
    result, _ = run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", month_of_ambiguous_dates()),
                           config=config)
    assert result.exit_code == 1, result.output

    book = openpyxl.load_workbook(latest_run(tmp_path).parent / "to_fix.xlsx")
    hire = book.active.cell(2, HIRE)
    # the person sees 01/02/2020 as the export wrote it; the cell holds 1 February itself
    assert (hire.value, hire.number_format) == (dt.datetime(2020, 2, 1), "dd\\/mm\\/yyyy")
    book.active.cell(2, COUNTRY).value = "SG"
    book.save(tmp_path / "corrected.xlsx")
    result, _ = run_import(tmp_path, sandbox, tmp_path / "corrected.xlsx", config=config)

    assert result.exit_code == 0, result.output
    assert hire_dates(sandbox) == {"000001": "2020-03-25", "000002": "2020-02-01"}


def test_to_fix_csv_whose_dates_read_either_way_is_refused_naming_the_order_its_run_read(
    tmp_path: Path, sandbox: Any
) -> None:
    config = write_config(tmp_path / "staff.toml", date_order=None)
    run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", month_of_ambiguous_dates()), config=config)
    text = (latest_run(tmp_path).parent / "to_fix.csv").read_text(encoding="utf-8-sig")
    assert ",01/02/2020," in text  # a CSV cell has no type: the date as the export wrote it
    corrected = tmp_path / "corrected.csv"
    corrected.write_text(text.replace(",Atlantis,", ",SG,"), encoding="utf-8-sig")

    result, _ = run_import(tmp_path, sandbox, corrected, config=config)

    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == (
        "Error: corrected.csv: column 'Hire Date' has no date that shows whether it is day-first or month-first "
        "('01/02/2020' is 1 February or January 2); this is a to_fix file (it has the Problem column), and the "
        "import that wrote it with this config read such dates day-first, the one order dates are read in without "
        "date_order: set "
        'date_order = "day-first" in [source] to import them so, or correct to_fix.xlsx instead, which holds '
        "them as dates")
    assert hire_dates(sandbox) == {"000001": "2020-03-25"}  # nothing sent

    config.write_text(config.read_text().replace("[source]\n", '[source]\ndate_order = "day-first"\n'))
    result, _ = run_import(tmp_path, sandbox, corrected, config=config)
    assert result.exit_code == 0, result.output
    assert hire_dates(sandbox) == {"000001": "2020-03-25", "000002": "2020-02-01"}


def test_to_fix_of_a_workbook_of_text_dates_holds_them_as_dates_shown_as_written(
    tmp_path: Path, sandbox: Any, to_fix_writer: str  # noqa: F811 (the fixture imported above)
) -> None:
    # the HR system writes its dates as text cells, month-first as the config says: 02/13/2020 proves it
    rows = [person(1, **{"Hire Date": "02/13/2020"}), person(2, Country="Atlantis", **{"Hire Date": "2/1/2020"})]
    config = write_config(tmp_path / "staff.toml", date_order="month-first")
    result, _ = run_import(tmp_path, sandbox, write_staff_xlsx(tmp_path / "staff.xlsx", rows), config=config)
    assert result.exit_code == 1, result.output

    book = openpyxl.load_workbook(latest_run(tmp_path).parent / "to_fix.xlsx")
    sheet = book.active
    hire = sheet.cell(2, HIRE)
    assert (hire.value, hire.number_format) == (dt.datetime(2020, 2, 1), "m\\/d\\/yyyy")
    sheet.cell(2, COUNTRY).value = "SG"
    book.save(tmp_path / "corrected.xlsx")
    config.write_text(config.read_text().replace('date_order = "month-first"', ""))  # a date cell needs no order
    result, _ = run_import(tmp_path, sandbox, tmp_path / "corrected.xlsx", config=config)

    assert result.exit_code == 0, result.output
    assert hire_dates(sandbox) == {"000001": "2020-02-13", "000002": "2020-02-01"}


def test_a_time_off_to_fix_holds_its_leave_on_the_days_the_run_read(tmp_path: Path, sandbox: Any) -> None:
    timeoff.add_staff(sandbox, [("000101", "MY"), ("000106", "SG")])
    config = timeoff.write_config(tmp_path)
    config.write_text(config.read_text().replace('date_order = "day-first"', ""))
    source = tmp_path / "leave.csv"
    with open(source, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(timeoff.HEADER)
        writer.writerow(["000101", "AL", "24/03/2020", "25/03/2020", "", "2", "MY", "", "Approved"])
        writer.writerow(["000106", "Gardening Leave", "01/02/2020", "03/02/2020", "", "3", "SG", "", "Approved"])
    result, _ = timeoff.run_import(tmp_path, sandbox, source, config)
    assert result.exit_code == 1, result.output
    assert timeoff.stored(sandbox) == [("000101", 1, "2020-03-24", "2020-03-25", 2)]

    folder = max((tmp_path / "reports").glob("*/*/to_fix.xlsx")).parent
    book = openpyxl.load_workbook(folder / "to_fix.xlsx")
    sheet = book.active
    assert [sheet.cell(2, c).value for c in (3, 4)] == [dt.datetime(2020, 2, 1), dt.datetime(2020, 2, 3)]
    assert {sheet.cell(2, c).number_format for c in (3, 4)} == {"dd\\/mm\\/yyyy"}
    sheet.cell(2, 2).value = "AL"
    book.save(tmp_path / "corrected.xlsx")
    result, _ = timeoff.run_import(tmp_path, sandbox, tmp_path / "corrected.xlsx", config)

    assert result.exit_code == 0, result.output
    assert timeoff.stored(sandbox) == [("000101", 1, "2020-03-24", "2020-03-25", 2),
                                       ("000106", 1, "2020-02-01", "2020-02-03", 3)]
    # to_fix.csv, which holds them as the export wrote them, is refused as a staff one is
    text = (folder / "to_fix.csv").read_text(encoding="utf-8-sig").replace("Gardening Leave", "AL")
    (tmp_path / "corrected.csv").write_text(text, encoding="utf-8-sig")
    result = timeoff.hrimport(["timeoff", "import", str(config), str(tmp_path / "corrected.csv")], sandbox)
    assert result.exit_code == 2, result.output
    assert "this is a to_fix file (it has the Problem column), and the import that wrote it with this config read " \
           "such dates day-first" in result.output


def test_a_date_corrected_as_text_in_to_fix_xlsx_is_refused_naming_the_setting_not_to_fix_xlsx(
    tmp_path: Path, sandbox: Any
) -> None:
    # the HR system writes its dates as text cells formatted as Text (@); person 3's two-digit year is held back
    rows = [person(1, **{"Hire Date": "25/03/2020"}), person(2, **{"Hire Date": "03/04/20"})]
    path = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet, text = book.add_worksheet("Staff"), book.add_format({"num_format": "@"})
    sheet.write_row(0, 0, HEADER)
    for r, row in enumerate(rows, start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER], text)
    book.close()
    config = write_config(tmp_path / "staff.toml", date_order=None)
    result, _ = run_import(tmp_path, sandbox, path, config=config)
    assert result.exit_code == 1, result.output

    # the year written in full, as the red cell says, in its cell formatted as Text: Excel keeps it as text
    book = openpyxl.load_workbook(latest_run(tmp_path).parent / "to_fix.xlsx")
    hire = book.active.cell(2, HIRE)
    assert (hire.value, hire.number_format) == ("03/04/20", "@")
    hire.value = "03/04/2020"
    book.save(tmp_path / "corrected.xlsx")
    result, _ = run_import(tmp_path, sandbox, tmp_path / "corrected.xlsx", config=config)

    # it was told to correct to_fix.xlsx, "which holds them as dates": the file it had just corrected
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == (
        "Error: corrected.xlsx: column 'Hire Date' has no date that shows whether it is day-first or month-first "
        "('03/04/2020' is 3 April or March 4); this is a to_fix file (it has the Problem column), and the import "
        "that wrote it with this config read such dates day-first, the one order dates are read in without "
        "date_order: set "
        'date_order = "day-first" in [source] to import them so')
    config.write_text(config.read_text().replace("[source]\n", '[source]\ndate_order = "day-first"\n'))
    result, _ = run_import(tmp_path, sandbox, tmp_path / "corrected.xlsx", config=config)
    assert result.exit_code == 0, result.output
    assert hire_dates(sandbox) == {"000001": "2020-03-25", "000002": "2020-04-03"}
