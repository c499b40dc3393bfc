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

import os
import re
import subprocess
import sys
from pathlib import Path

import openpyxl
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


@pytest.mark.parametrize(("name", "chosen", "pool"), [
    ("staff.xlsx", None, "jemalloc"), ("staff.csv", None, "as before"), ("staff.xlsx", "system", "system")],
    ids=["a-workbook", "a-text-file", "the-user-s-choice"])
def test_the_cells_each_piece_of_a_workbook_frees_are_given_back(tmp_path: Path, name: str, chosen: str | None,
                                                                  pool: str) -> None:
    """pyarrow's default pool (mimalloc) kept the pages each piece of a workbook freed: a 100,000-row XLSX dry
    run peaked at 412 MB, over issue 17's 400 MB (``make bench`` measures it). Reading a workbook makes
    jemalloc's pool the default, which gives them back, unless the user chose a pool with
    ARROW_DEFAULT_MEMORY_POOL; a text file keeps the default (there jemalloc costs CPU for little). In a child
    process: the default pool is the process's."""
    if name.endswith(".xlsx"):
        book = openpyxl.Workbook()
        book.active.append(["Employee ID", "Name"])
        book.active.append(["E1", "Ana"])
        book.save(tmp_path / name)
    else:
        (tmp_path / name).write_text("Employee ID,Name\nE1,Ana\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if chosen:
        env["ARROW_DEFAULT_MEMORY_POOL"] = chosen
    script = ("import pyarrow as pa\nfrom hrimport.reader import read_spreadsheet_chunks\n"
              "print(pa.default_memory_pool().backend_name)\n"
              f"list(read_spreadsheet_chunks({name!r}, chunk_rows=1))\nprint(pa.default_memory_pool().backend_name)")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    before, after = done.stdout.split()
    if pool == "jemalloc" and not _has_jemalloc():
        pool = "as before"
    assert after == (before if pool == "as before" else pool)


def _has_jemalloc() -> bool:
    """Whether this pyarrow is built with jemalloc (its Linux and macOS wheels are; Windows' are not)."""
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


WIDE_CONFIG = """
[service]
customer_id = 99
[report]
job = "wide"
[staff]
customer_system_id_type = "SuccessFactors"
[staff.columns]
"Employee ID" = "customer_system_id"
"Full Name" = "name"
"Work Email" = "system_email"
[staff.constants]
country = "SG"
job_title = "Analyst"
job_start_date = "2020-01-06"
staff_type = "Payroll"
"""


def test_a_wide_export_is_checked_in_fewer_rows_at_a_time_so_memory_follows_the_cells(tmp_path: Path) -> None:
    """An HR system's "all fields" report can run to a thousand columns: 20,000 such rows are 20 million cells,
    which a chunk of 20,000 rows held at once (2,000 columns x 20,000 rows peaked at 2.4 GB). A wide file is
    read in fewer rows at a time (4,000 here), so four times the rows take no more memory here either."""
    header = ["Employee ID", "Full Name", "Work Email", *(f"Field {i}" for i in range(997))]
    peaks = {}
    for rows in (8_000, 32_000):
        folder = tmp_path / f"rows-{rows}"
        folder.mkdir()
        (folder / "staff.toml").write_text(WIDE_CONFIG, encoding="utf-8")
        with open(folder / "staff.csv", "w", encoding="utf-8", newline="") as fh:
            fh.write(",".join(header) + "\r\n")
            fh.writelines(f"{n:06d},Person {n},p{n}@acme.example,{','.join(f'v{(n + i) % 7}' for i in range(997))}\r\n"
                          for n in range(rows))
        done = run_hrimport("staff", "validate", "staff.toml", "staff.csv", cwd=folder, timeout=300, ceiling_mb=1500)
        assert done.exit_code == 0, done.stdout[-500:] + done.stderr[-500:]
        assert f"Rows read: {rows:,} = {rows:,} valid" in done.stdout
        peaks[rows] = done.peak_mb
    assert peaks[32_000] <= 1.15 * peaks[8_000], peaks
