"""The benchmark's staff export: N rows x 40 columns as CSV and XLSX, and the config that imports it; and
a leave history of N rows (``leave.csv``, ``leave.toml``) for the time-off commands.

The rows look like an HRIS export: ids with leading zeros (``0000123``), real Excel date cells (day-first
text dates in the CSV), 20 mapped columns, 10 packed as custom data, 10 ignored, and about 5% bad rows
(an e-mail without ``@``, refused since the config's ``email_check`` is ``"strict"``; the country "Atlantis").
The same seed gives the same rows in every file. ``padded_ids=True`` writes the XLSX ids as numbers shown
through a ``000000`` number format, as many HR systems do. Run as a script, it writes the files into a
folder (the bench writes them in a child process, so that its own memory stays small and never counts in a
command's peak)::

    python tests/bench/bench_files.py FOLDER --rows 100000 --kinds csv,xlsx,leave
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import random
import textwrap
from collections.abc import Iterator
from pathlib import Path

MAPPED = {
    "Employee ID": "customer_system_id", "Full Name": "name", "Work Email": "system_email",
    "Country": "country", "Job Title": "job_title", "Hire Date": "job_start_date",
    "Worker Type": "staff_type", "Gender": "gender", "Birth Date": "birthdate", "Nationality": "nationality",
    "Personal Email": "personal_email", "Phone": "phone", "Location": "location", "Manager": "reporting_officer",
    "Is Manager": "is_manager", "Contract Type": "ec_type", "Contract Start": "ec_start_date",
    "Probation End": "probation_end_date", "Passport Number": "passport_number", "Passport Expiry": "passport_expiry_date",
}
CUSTOM = {f"Custom {i}": f"Custom {i}" for i in range(1, 11)}  # packed as customer_data_type entries
IGNORED = [f"Extra {i}" for i in range(1, 11)]
HEADER = [*MAPPED, *CUSTOM, *IGNORED]
assert len(HEADER) == 40

#: The sandbox customer the config imports into, and a token that may write for it (the demo dataset).
CUSTOMER_ID, TOKEN = 99, "demo-customer-99"


def make_rows(n: int, seed: int = 42, bad_share: float = 0.05) -> Iterator[list[str | dt.date]]:
    """``n`` rows, ``bad_share`` of them with an e-mail address that is not one (and every other such row a
    country that does not exist)."""
    rng = random.Random(seed)
    countries = ["SG", "MY", "CN", "Malaysia", "SGP", "US", "Singapore"]
    base = dt.date(2010, 1, 1)
    for i in range(n):
        bad = rng.random() < bad_share
        hire = base + dt.timedelta(days=rng.randrange(5000))
        row: list[str | dt.date] = [
            f"{i:07d}", f"Person {i}", f"person{i}@acme.example" if not bad else f"person{i}.acme",
            rng.choice(countries) if not (bad and i % 2) else "Atlantis", "Analyst", hire,
            rng.choice(["Payroll", "EOR", "payroll"]), rng.choice(["M", "F", "Male", "Female"]),
            base - dt.timedelta(days=rng.randrange(10000, 20000)), "SG", f"p{i}@mail.example",
            f"+65 8{i:07d}", "Singapore", "Boss", rng.choice(["Yes", "No"]), "Indefinite", hire, hire,
            f"K{i:07d}", dt.date(2030, 1, 1),
        ]
        row += [f"value {i % 97}" for _ in CUSTOM] + [f"x{i % 13}" for _ in IGNORED]
        yield row


def write_csv(path: Path, n: int, bad_share: float = 0.05) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        for row in make_rows(n, bad_share=bad_share):
            writer.writerow([v.strftime("%d/%m/%Y") if isinstance(v, dt.date) else v for v in row])
    return path


def write_xlsx(path: Path, n: int, *, padded_ids: bool = False) -> Path:
    import xlsxwriter

    book = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    sheet = book.add_worksheet("Staff")
    date_format = book.add_format({"num_format": "yyyy-mm-dd"})
    id_format = book.add_format({"num_format": "000000"})
    sheet.write_row(0, 0, HEADER)
    for r, row in enumerate(make_rows(n), start=1):
        for c, value in enumerate(row):
            if isinstance(value, dt.date):
                sheet.write_datetime(r, c, dt.datetime.combine(value, dt.time()), date_format)
            elif c == 0 and padded_ids:
                sheet.write_number(r, c, int(value), id_format)  # shows as 000123, like the text id
            else:
                sheet.write_string(r, c, value)
    book.close()
    return path


def write_config(path: Path) -> Path:
    """The benchmark's staff config: its e-mail check strict, so that the ~5% of rows with an e-mail without
    ``@`` are rows to fix (as the results have counted them since the first run), not rows sent with a
    warning."""
    columns = "\n".join(f'"{k}" = "{v}"' for k, v in MAPPED.items())
    custom = "\n".join(f'"{k}" = "{v}"' for k, v in CUSTOM.items())
    path.write_text(textwrap.dedent("""\
        [service]
        customer_id = {customer_id}
        [source]
        date_order = "day-first"
        [report]
        job = "bench"
        [staff]
        customer_system_id_type = "Bench"
        email_check = "strict"
        [staff.columns]
        {columns}
        [staff.custom_fields]
        {custom}
        """).format(customer_id=CUSTOMER_ID, columns=columns, custom=custom), encoding="utf-8")
    return path


LEAVE_CONFIG = """\
[service]
customer_id = 99

[source]
date_order = "day-first"

[timeoff]
default_country = "SG"
half_day = "Half Day"

[timeoff.columns]
"Employee ID" = "customer_system_id"
"Leave Type" = "leave_type"
"From" = "start_date"
"To" = "end_date"
"Days" = "total_days"
"Country" = "country"
"Reason" = "notes"
"Status" = "decision"

[timeoff.values.leave_type]
"AL" = "Annual Leave"
"MC" = "Sick Leave"

[timeoff.values.decision]
"Approved" = "Approve"
"""
LEAVE_TYPES = ["Annual Leave", "AL", "Sick Leave", "MC", "年假", "病假"]
HALVES = ["", "", "", "", "AM", "PM", "", ""]


def write_leave_csv(path: Path, n: int) -> Path:
    """``n`` leave records, five a person a month or more apart, English and Chinese leave types, half
    days, empty day figures; every 100th row needs attention (an unknown leave type, a period overlapping the
    row before)."""
    lines = ["Employee ID,Leave Type,From,To,Half Day,Days,Country,Reason,Status"]
    for i in range(n):
        start = dt.date(2024, 1, 1) + dt.timedelta(days=61 * (i % 5) + i % 17)
        end = start + dt.timedelta(days=i % 3)
        if i % 200 == 199:
            start -= dt.timedelta(days=61)  # within the period of the row before: both overlap
        leave_type = "Holidayz" if i % 200 == 99 else LEAVE_TYPES[i % len(LEAVE_TYPES)]
        days = "" if i % 2 else str(1 + i % 3)
        lines.append(f"E{i // 5:07d},{leave_type},{start:%d/%m/%Y},{end:%d/%m/%Y},{HALVES[i % 8] if i % 3 == 0 else ''},"
                     f"{days},SG,trip {i % 50},Approved")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.with_name("leave.toml").write_text(LEAVE_CONFIG, encoding="utf-8")
    return path


#: What the script can write, by name: the file's name in the folder and its writer.
KINDS = {
    "csv": ("staff.csv", write_csv),
    "xlsx": ("staff.xlsx", write_xlsx),
    "padded": ("staff-padded.xlsx", lambda path, n: write_xlsx(path, n, padded_ids=True)),
    "leave": ("leave.csv", write_leave_csv),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--kinds", default="csv,xlsx", help=f"comma-separated: {', '.join(KINDS)}")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    write_config(args.folder / "staff.toml")
    for kind in args.kinds.split(","):
        name, write = KINDS[kind]
        write(args.folder / name, args.rows)


if __name__ == "__main__":
    main()
