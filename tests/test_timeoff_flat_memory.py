"""A leave history four times as long does not need more memory to check (issue 17: flat memory).

A leave-history migration of a large employer is a million rows: ``hrimport timeoff validate`` holds one
chunk of rows at a time, and of the whole file only what the overlap check needs, a few numbers a row
(``hrimport.timeoff.table``), so its peak memory does not grow with the file. Measured as a user runs it,
in a child process of its own (``tests.child_process``), with 1% of the rows needing attention (an unknown
leave type, a period overlapping the row before), and with every row needing it (a date column the config
reads wrong): those rows are kept whole, with their problems, to be listed; past the first 10,000 they wait in
a temporary file, so they do not grow memory either.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.bench.bench_files import write_leave_csv
from tests.child_process import run_hrimport


def _every_date_unreadable(config: Path) -> None:
    """The config reads the start date from the Reason column ("trip 7"): every row needs attention."""
    text = config.read_text(encoding="utf-8")
    text = text.replace('"From" = "start_date"\n', "").replace('"Reason" = "notes"', '"Reason" = "start_date"')
    config.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("every_row_to_fix", [False, True], ids=["one-row-in-100-to-fix", "every-row-to-fix"])
def test_checking_200000_leave_rows_takes_no_more_memory_than_50000(tmp_path: Path, every_row_to_fix: bool) -> None:
    peaks = {}
    for rows in (50_000, 200_000):
        folder = tmp_path / f"rows-{rows}"
        folder.mkdir()
        write_leave_csv(folder / "leave.csv", rows)  # and leave.toml beside it
        if every_row_to_fix:
            _every_date_unreadable(folder / "leave.toml")
        done = run_hrimport("timeoff", "validate", "leave.toml", "leave.csv", cwd=folder, timeout=300,
                            ceiling_mb=1000)
        assert done.exit_code == 1, done.stdout[-500:] + done.stderr[-500:]  # the rows needing attention, listed
        counts = re.search(rf"Rows read: {rows:,} = (?:([\d,]+) valid \+ )?([\d,]+) invalid", done.stdout)
        assert counts is not None, done.stdout[-500:]
        invalid = int(counts[2].replace(",", ""))
        assert invalid == rows if every_row_to_fix else 0.005 * rows < invalid < 0.015 * rows
        peaks[rows] = done.peak_mb
    assert peaks[200_000] <= 1.15 * peaks[50_000], peaks
