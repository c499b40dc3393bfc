"""An export's dates are read in one order per column, decided from all its values, and never guessed.

01/06/2020 is 1 June in Kuala Lumpur and January 6 in New York: a payroll import must not read one cell
one way and the next cell the other way, nor pick an order the column's own values contradict.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result

from hrimport.cli import main
from hrimport.normalize.dates import DateOrderConflict, date_cell_problems, decide_date_order
from tests.staff_files import person, write_config, write_csv

pytestmark = pytest.mark.usefixtures("instant_retries")


def hrimport(*args: str, base_url: str = "") -> Result:
    env = {"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": base_url}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def import_hire_dates(tmp_path: Path, sandbox, hire_dates: list[str], *, date_order: str | None) -> Result:
    rows = [person(n, **{"Hire Date": d}) for n, d in enumerate(hire_dates, start=1)]
    config = write_config(tmp_path / "staff.toml", date_order=date_order)
    data = write_csv(tmp_path / "staff.csv", rows)
    return hrimport("staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports"),
                    base_url=sandbox.base_url)


def stored_hire_dates(sandbox) -> dict[str, str]:
    return {s["customer_system_id"]: s["job_start_date"] for s in sandbox.staff(99)}


def summary(tmp_path: Path) -> dict:
    return json.loads(max((tmp_path / "reports").glob("*/*/summary.json")).read_text())


def test_a_column_that_proves_month_first_stops_a_day_first_import_before_anything_is_sent(
    tmp_path: Path, sandbox
) -> None:
    # 01/06/2020 alone could be either; 07/15/2015 can only be month-first: the column is month-first,
    # and reading 01/06/2020 as 1 June (the default) would send a wrong hire date without a word.
    result = import_hire_dates(tmp_path, sandbox, ["01/06/2020", "07/15/2015", "12/31/2019"], date_order=None)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "column 'Hire Date' holds month-first dates ('07/15/2015' and '12/31/2019')" in lines[0]
    assert 'set date_order = "month-first"' in lines[0]
    assert sandbox.staff(99) == []


def test_a_configured_order_the_column_contradicts_stops_the_import(tmp_path: Path, sandbox) -> None:
    result = import_hire_dates(tmp_path, sandbox, ["01/06/2020", "13/05/2021"], date_order="month-first")
    assert result.exit_code == 2
    assert "column 'Hire Date' holds day-first dates ('13/05/2021')" in result.output
    assert "the config's date_order is \"month-first\"" in result.output
    assert sandbox.staff(99) == []


def test_with_the_order_confirmed_every_cell_of_the_column_is_read_that_way(tmp_path: Path, sandbox) -> None:
    result = import_hire_dates(tmp_path, sandbox, ["01/06/2020", "07/15/2015"], date_order="month-first")
    assert result.exit_code == 0, result.output
    assert stored_hire_dates(sandbox) == {"000001": "2020-01-06", "000002": "2015-07-15"}


def test_a_cell_that_does_not_fit_its_columns_order_is_flagged_on_its_row_and_the_rest_is_sent(
    tmp_path: Path, sandbox
) -> None:
    # The column proves both orders (a typo in one row): the configured order stands, the odd cell is flagged.
    result = import_hire_dates(tmp_path, sandbox, ["07/15/2015", "13/05/2021", "02/03/2020"],
                               date_order="month-first")
    assert result.exit_code == 1, result.output
    assert ("Row 3, column 'Hire Date': '13/05/2021' cannot be a date read month-first, the order of this "
            "column's dates (as the config's date_order says)") in result.output
    assert stored_hire_dates(sandbox) == {"000001": "2015-07-15", "000003": "2020-02-03"}
    assert summary(tmp_path)["problems"] == {"date-order-mismatch": 1}


def test_when_no_value_shows_the_order_the_import_stops_before_anything_is_sent_and_says_what_to_set(
    tmp_path: Path, sandbox
) -> None:
    """01/06/2020 is 1 June or January 6, and 05/11/2018 5 November or May 11: with no date_order and no
    value such as 13/01/2020 to prove one, reading the column day-first would be a guess that sends wrong
    hire dates to payroll (principle 1). The import stops in one line saying what to set."""
    result = import_hire_dates(tmp_path, sandbox, ["01/06/2020", "2019-03-04", "05/11/2018"], date_order=None)
    assert result.exit_code == 2, result.output
    assert result.output == (
        "Error: staff.csv: column 'Hire Date' has no date that shows whether it is day-first or month-first "
        "('01/06/2020' is 1 June or January 6); set date_order = \"day-first\" or \"month-first\" in [source] "
        "to the order your HR system writes\n")
    assert sandbox.staff(99) == []

    result = import_hire_dates(tmp_path, sandbox, ["01/06/2020", "2019-03-04", "05/11/2018"],
                               date_order="month-first")
    assert result.exit_code == 0, result.output
    assert stored_hire_dates(sandbox) == {"000001": "2020-01-06", "000002": "2019-03-04", "000003": "2018-05-11"}


def test_a_column_of_dates_whose_day_and_month_are_alike_needs_no_order(tmp_path: Path, sandbox) -> None:
    result = import_hire_dates(tmp_path, sandbox, ["05/05/2020", "2019-03-04", "12.12.2018"], date_order=None)
    assert result.exit_code == 0, result.output
    assert "Note:" not in result.output
    assert stored_hire_dates(sandbox) == {"000001": "2020-05-05", "000002": "2019-03-04", "000003": "2018-12-12"}


def test_when_the_values_show_both_orders_without_a_setting_the_import_stops_naming_one_of_each(
        tmp_path: Path, sandbox) -> None:
    # 13/01/2020 reads only day-first, 01/14/2020 only month-first: a typo somewhere, and which order the
    # other dates (01/06/2020) are in is not known
    result = import_hire_dates(tmp_path, sandbox, ["13/01/2020", "01/14/2020", "01/06/2020"], date_order=None)
    assert result.exit_code == 2, result.output
    assert result.output == (
        "Error: staff.csv: column 'Hire Date' holds day-first dates ('13/01/2020') and month-first dates "
        "('01/14/2020'); set date_order = \"day-first\" or \"month-first\" in [source] to the order your HR "
        "system writes, and the dates that do not fit it are held back on their rows\n")
    assert sandbox.staff(99) == []


def test_a_configured_order_needs_no_note(tmp_path: Path, sandbox) -> None:
    result = import_hire_dates(tmp_path, sandbox, ["01/06/2020"], date_order="day-first")
    assert result.exit_code == 0 and "Note:" not in result.output
    assert stored_hire_dates(sandbox) == {"000001": "2020-06-01"}


def test_a_two_digit_year_is_a_problem_on_its_row_never_a_century_guess(tmp_path: Path, sandbox) -> None:
    result = import_hire_dates(tmp_path, sandbox, ["31/01/20", "31/01/2020", "5 Mar 19"], date_order=None)
    assert result.exit_code == 1, result.output
    assert ("Row 2, column 'Hire Date': '31/01/20' has a two-digit year, so its century is not known; write "
            "the year in full (such as 2020).") in result.output
    assert "Row 4, column 'Hire Date': '5 Mar 19' has a two-digit year" in result.output
    assert stored_hire_dates(sandbox) == {"000002": "2020-01-31"}
    assert summary(tmp_path)["problems"] == {"two-digit-year": 2}  # never also "not a date"


@pytest.mark.parametrize(
    ("values", "configured", "order", "basis"),
    [
        (["13/01/2020", "01/02/2020"], None, "day-first", "values"),
        (["01/02/2020"], "month-first", "month-first", "config"),
        (["2020-01-02", "43861", "31 Jan 2020"], None, "day-first", "unneeded"),  # no value depends on it
        (["13/01/2020", "01/13/2020"], "month-first", "month-first", "config"),  # both proven: the setting
        (["05/05/2020", "12.12.2020"], None, "day-first", "unneeded"),  # day and month alike
        (["13.01.2020", "01.02.2020"], None, "day-first", "values"),
    ],
)
def test_the_order_of_a_column(values: list[str], configured, order: str, basis: str) -> None:
    decided = decide_date_order("Hire Date", pd.Series(values, dtype="str"), configured)
    assert (decided.order, decided.basis) == (order, basis)


@pytest.mark.parametrize(
    ("values", "configured"),
    [(["01/13/2020"], None), (["01/13/2020"], "day-first"), (["13-01-2020"], "month-first"),
     (["01/02/2020"], None), (["13/01/2020", "01/13/2020"], None)],  # no setting, and no order proven
)
def test_an_order_the_values_contradict_or_do_not_prove_is_refused(values: list[str], configured) -> None:
    with pytest.raises(DateOrderConflict):
        decide_date_order("Hire Date", pd.Series(values, dtype="str"), configured)


def test_cells_that_cannot_be_read_in_the_columns_order_are_named() -> None:
    values = pd.Series(["13/05/2021", "05/13/2021", "1/2/20", "2021-05-13", ""], dtype="str")
    assert date_cell_problems(values, day_first=False) == {"13/05/2021": "date-order-mismatch",
                                                          "1/2/20": "two-digit-year"}
    assert date_cell_problems(values, day_first=True) == {"05/13/2021": "date-order-mismatch",
                                                         "1/2/20": "two-digit-year"}
