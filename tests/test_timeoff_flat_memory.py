"""A leave history four times as long does not need more memory to check (issue 17: flat memory).

A leave-history migration of a large employer is a million rows: ``hrimport timeoff validate`` holds one
chunk of rows at a time, and of the whole file only what the overlap check needs, a few numbers a row
(``hrimport.timeoff.table``), so its peak memory does not grow with the file. Measured as a user runs it,
in a child process of its own (``tests.child_process``), with 1% of the rows needing attention (an unknown
leave type, a period overlapping the row before): those rows are kept whole, with their problems, to be
listed, so they are the one part that grows.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from tests.child_process import run_hrimport

CONFIG = """
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

TYPES = ["Annual Leave", "AL", "Sick Leave", "MC", "年假", "病假"]
HALVES = ["", "", "", "", "AM", "PM", "", ""]


def write_leave_csv(path: Path, rows: int) -> None:
    """``rows`` leave records, five a person a month or more apart; every 100th row needs attention."""
    lines = ["Employee ID,Leave Type,From,To,Half Day,Days,Country,Reason,Status"]
    for n in range(rows):
        start = dt.date(2024, 1, 1) + dt.timedelta(days=61 * (n % 5) + n % 17)
        end = start + dt.timedelta(days=n % 3)
        if n % 200 == 199:
            start -= dt.timedelta(days=61)  # within the period of the row before: both overlap
        leave_type = "Holidayz" if n % 200 == 99 else TYPES[n % len(TYPES)]
        days = "" if n % 2 else str(1 + n % 3)
        lines.append(f"E{n // 5:07d},{leave_type},{start:%d/%m/%Y},{end:%d/%m/%Y},{HALVES[n % 8] if n % 3 == 0 else ''},"
                     f"{days},SG,trip {n % 50},Approved")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_checking_200000_leave_rows_takes_no_more_memory_than_50000(tmp_path: Path) -> None:
    peaks = {}
    for rows in (50_000, 200_000):
        folder = tmp_path / f"rows-{rows}"
        folder.mkdir()
        (folder / "leave.toml").write_text(CONFIG, encoding="utf-8")
        write_leave_csv(folder / "leave.csv", rows)
        done = run_hrimport("timeoff", "validate", "leave.toml", "leave.csv", cwd=folder, timeout=300,
                            ceiling_mb=1000)
        assert done.exit_code == 1, done.stdout[-500:] + done.stderr[-500:]  # the rows needing attention, listed
        counts = re.search(rf"Rows read: {rows:,} = ([\d,]+) valid \+ ([\d,]+) invalid", done.stdout)
        assert counts is not None, done.stdout[-500:]
        assert 0.005 * rows < int(counts[2].replace(",", "")) < 0.015 * rows
        peaks[rows] = done.peak_mb
    assert peaks[200_000] <= 1.15 * peaks[50_000], peaks
