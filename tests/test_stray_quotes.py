"""A stray quote in a CSV export: the people below it must never vanish into one cell.

The story: someone typed a name with a leading quote (``"Anna``) in the HR system, and its CSV export writes it as
it is. A quote at the start of a cell opens a quoted value, so every line after it, to the next quote in the file
or its end, became that one cell's text: the people on those lines had no row and no outcome, and the summary
said the file held fewer rows than it does (pyarrow even cut the cell where its blocks of a megabyte end, so ~3,300
people vanished from a 100,000-row export). Now the file is refused in one line naming the cell, before anything
is sent; a value whose line breaks are its own (an address on two lines) is read and sent as it is.
"""

from __future__ import annotations

import csv
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from hrimport.cli import main
from hrimport.reader.text import STREAM_BYTES
from tests.staff_files import HEADER, person, write_config, write_csv

TOKEN = "demo-customer-99"


def hrimport(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"HRIMPORT_TOKEN": TOKEN})


def export(path: Path, people: int, prefix: str, **cells: dict[str, str]) -> Path:
    """A staff export of ``people`` people written by the csv module; ``cells`` changes person N's cells
    (keyed ``pN``)."""
    return write_csv(path, [person(n, **{"Employee ID": f"{prefix}{n:06d}", **cells.get(f"p{n}", {})})
                            for n in range(1, people + 1)])


def with_stray_quotes(path: Path, *names: str) -> Path:
    """``path`` with a quote typed before each of ``names`` (``"Person 9``), as an export writes it: raw bytes."""
    text = path.read_text(encoding="utf-8")
    for name in names:
        text = text.replace(f",{name},", f',"{name},', 1)
    path.write_text(text, encoding="utf-8")
    return path


def stored(sandbox: Any, prefix: str) -> dict[str, dict[str, Any]]:
    return {s["customer_system_id"]: s for s in sandbox.staff(99) if str(s["customer_system_id"]).startswith(prefix)}


def test_a_stray_quote_before_a_name_refuses_the_file_in_one_line_and_sends_nobody(
        tmp_path: Path, sandbox: Any) -> None:
    prefix = uuid.uuid4().hex[:6]
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    data = with_stray_quotes(export(tmp_path / "staff.csv", 20, prefix), "Person 9")

    result = hrimport("staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports"))

    first = f"{prefix}000010,Person 10,person10@acme.example"[:40]  # the row swallowed first, cut for the line
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        (f"Error: staff.csv: row 10, column 'Name': a value opening with a quote (\") runs over 12 lines of the file, "
         f"to its end, and 11 of them read as rows of the table (the first: '{first}…'), "
         "which would be lost inside that one cell: a stray quote in the export; remove it, or write it as two quotes "
         "(\"\") if it belongs to the value, and export again")]
    assert stored(sandbox, prefix) == {}


def test_a_quote_closed_by_the_next_persons_name_would_send_their_cells_under_the_first_id_so_it_is_refused(
        tmp_path: Path, sandbox: Any) -> None:
    """'"Person 9' opens a value that 'O"Brien' on the next line closes: person 10's cells after the name then fill
    person 9's row (their e-mail, country, title under person 9's id), and person 10 has no row at all."""
    prefix = uuid.uuid4().hex[:6]
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    data = export(tmp_path / "staff.csv", 20, prefix, p10={"Name": "Person O'Brien"})
    text = data.read_text(encoding="utf-8").replace(",Person 9,", ',"Person 9,', 1)
    data.write_text(text.replace("Person O'Brien", 'Person O"Brien', 1), encoding="utf-8")

    result = hrimport("staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports"))

    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        ("Error: staff.csv: row 10, column 'Name': a value opening with a quote (\") runs over 2 lines of the file "
         f"and one of them reads as a row of the table ('{prefix}000010,Person OBrien'), which would be lost inside "
         "that one cell: a stray quote in the export; remove it, or write it as two quotes (\"\") if it belongs "
         "to the value, and export again")]
    assert stored(sandbox, prefix) == {}


def test_two_stray_quotes_far_down_a_big_export_swallowing_ten_people_refuse_it_too(tmp_path: Path) -> None:
    # a file this big is read in chunks (STREAM_BYTES); the quote opened on row 30,001 closes on row 30,011
    prefix = "E"
    data = export(tmp_path / "staff.csv", 90_000, prefix)
    assert data.stat().st_size > STREAM_BYTES
    text = data.read_text(encoding="utf-8").replace(",Person 30000,", ',"Person 30000,', 1)
    data.write_text(text.replace(",Person 30010,", ',Person 30010",', 1), encoding="utf-8")
    config = write_config(tmp_path / "staff.toml")

    result = hrimport("staff", "validate", str(config), str(data))

    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        ("Error: staff.csv: row 30,001, column 'Name': a value opening with a quote (\") runs over 11 lines of the "
         "file and 10 of them read as rows of the table (the first: 'E030001,Person 30001,person30001@acme.ex…'), which "
         "would be lost inside that one cell: a stray quote in the export; remove it, or write it as two quotes "
         "(\"\") if it belongs to the value, and export again")]


def test_an_address_on_two_lines_is_sent_as_written_in_a_small_and_a_big_export(
        tmp_path: Path, sandbox: Any) -> None:
    prefix = uuid.uuid4().hex[:6]
    # a custom field holding a line break, and commas, as an address does: no line of it is a whole row
    address = "Block 5, Level 2\nJalan Ampang, 50450 Kuala Lumpur"
    header = [*HEADER, "Address"]
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url, extra='"Address" = "Division"')
    for people in (3, 90_000):
        rows = [person(n, **{"Employee ID": f"{prefix}{people}-{n}"}) for n in range(1, people + 1)]
        rows[1]["Address"] = address
        data = write_csv(tmp_path / f"staff-{people}.csv", rows, header)

        result = hrimport("staff", "validate", str(config), str(data))

        assert result.exit_code == 0, result.output
        assert f"{people:,} of {people:,} rows checked." in result.output
    small = tmp_path / "staff-3.csv"

    result = hrimport("staff", "import", str(config), str(small), "--report-dir", str(tmp_path / "reports"))

    assert result.exit_code == 0, result.output
    sent = stored(sandbox, prefix)
    assert {d["name"]: d["value"] for d in sent[f"{prefix}3-2"]["customer_data_type"]}["Division"] == address


LEAVE_CONFIG = """
[service]
customer_id = 99

[source]
date_order = "day-first"

[report]
job = "stray-quote-leave"

[timeoff]
default_country = "SG"

[timeoff.columns]
"Employee ID" = "customer_system_id"
"Leave Type" = "leave_type"
"From" = "start_date"
"To" = "end_date"
"Reason" = "notes"
"""


def test_a_reason_holding_a_pasted_email_whose_line_has_as_many_commas_as_the_table_is_read_as_written(
        tmp_path: Path) -> None:
    """A five-column time-off export whose Reason is an e-mail of several lines, written with its quotes as CSV
    wants them: its second line happens to hold four commas, as many cells as the table has. The quotes close
    where the value ends: no stray quote, nothing swallowed, and the file imported last month."""
    config = tmp_path / "leave.toml"
    config.write_text(LEAVE_CONFIG, encoding="utf-8")
    reason = "Hi HR,\nCovering while I am away: Bob, Carl, Dina, Ed, Fay\n\nThanks, Anna"
    data = tmp_path / "leave.csv"
    with open(data, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Employee ID", "Leave Type", "From", "To", "Reason"])
        writer.writerow(["E1", "Annual Leave", "02/01/2025", "03/01/2025", "Family trip"])
        writer.writerow(["E2", "Annual Leave", "06/01/2025", "07/01/2025", reason])
        writer.writerow(["E3", "Sick Leave", "08/01/2025", "08/01/2025", "flu"])

    result = hrimport("timeoff", "validate", str(config), str(data))

    assert result.exit_code == 0, result.output
    assert "3 of 3 rows checked." in result.output


def test_an_address_whose_lines_end_and_start_a_row_is_read_as_written(tmp_path: Path) -> None:
    """An address in the fourth of six columns, its first line holding three cells' worth of commas (as many as
    end a row from there) and its last four (as many as start one): quoted as CSV wants it, so no second stray
    quote closed it there, and it is read as written."""
    config = tmp_path / "staff.toml"
    config.write_text(NARROW_STAFF_CONFIG, encoding="utf-8")
    address = "Block 5, Level 2, Tower A\nJalan Ampang, 50450 Kuala Lumpur, Malaysia, MY"
    data = tmp_path / "staff.csv"
    with open(data, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Employee ID", "Name", "Email", "Address", "Country", "Cost Centre"])
        for n in range(1, 4):
            writer.writerow([f"{n:06d}", f"Person {n}", f"person{n}@acme.example",
                             address if n == 2 else "1 Main Street", "MY", "CC-1"])

    result = hrimport("staff", "validate", str(config), str(data))

    assert result.exit_code == 0, result.output
    assert "3 of 3 rows checked." in result.output


NARROW_STAFF_CONFIG = """
[service]
customer_id = 99

[report]
job = "stray-quote-staff"

[staff]
customer_system_id_type = "TestHRIS"

[staff.columns]
"Employee ID" = "customer_system_id"
"Name" = "name"
"Email" = "system_email"
"Country" = "country"

[staff.constants]
job_title = "Analyst"
job_start_date = "2020-01-31"
staff_type = "Payroll"

[staff.custom_fields]
"Address" = "Division"
"Cost Centre" = "Cost Center"
"""
