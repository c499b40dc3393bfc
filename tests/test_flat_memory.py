"""An export four times as long does not need more memory to check (issue 17: flat memory).

The largest employers' exports run to a million rows, and a vendor's machine checks many companies' files
side by side: ``hrimport staff validate`` holds one chunk of rows at a time, so its peak memory does not
grow with the file. Measured as a user runs it, in a child process of its own (``tests.child_process``),
on the benchmark's 40-column export (``tests/bench/bench_files.py``): with 1% of the rows needing attention,
and with every row needing it (a column the export changed the format of). Those rows are kept whole, with
their problems, to be listed (about 1 KB each); past the first 10,000 (``outcomes.HELD_LISTED``) they wait in
a temporary file, so they do not grow memory either.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.bench.bench_files import write_config, write_csv
from tests.child_process import run_hrimport


@pytest.mark.parametrize("bad_share", [0.01, 1.0], ids=["one-row-in-100-to-fix", "every-row-to-fix"])
def test_checking_200000_rows_takes_no_more_memory_than_50000(tmp_path: Path, bad_share: float) -> None:
    peaks = {}
    for rows in (50_000, 200_000):
        folder = tmp_path / f"rows-{rows}"
        folder.mkdir()
        write_config(folder / "staff.toml")
        write_csv(folder / "staff.csv", rows, bad_share=bad_share)
        done = run_hrimport("staff", "validate", "staff.toml", "staff.csv", cwd=folder, timeout=300, ceiling_mb=1000)
        assert done.exit_code == 1  # the rows needing attention, listed
        counts = re.search(rf"Rows read: {rows:,} = (?:([\d,]+) valid \+ )?([\d,]+) invalid", done.stdout)
        assert counts is not None, done.stdout[-500:]
        assert (bad_share - 0.005) * rows < int(counts[2].replace(",", "")) <= bad_share * 1.5 * rows
        peaks[rows] = done.peak_mb
    assert peaks[200_000] <= 1.15 * peaks[50_000], peaks
