"""Benchmark the reporter: every report file for a synthetic 100,000-row run (issue 4: < 15 s, < 1 GB).

``bench_report()`` runs the work in a fresh process so peak RSS is the reporter's own, and returns::

    {"rows": 100000, "seconds": 6.1, "peak_rss_mb": 310.2, "files": {...}}

Run it alone with ``python tests/bench/bench_report.py [ROWS]``.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hrimport.outcomes import Outcome, Problem, RowOutcome, RunInfo, RunResult, SourceInfo

HEADERS = [
    "Employee ID",
    "First name",
    "Last name",
    "Work e-mail",
    "Country",
    "Start date",
    "Passport number",
    "Department",
    "Job title",
    "Manager",
    "Phone",
    "Contract type",
] + [f"Custom {i}" for i in range(1, 29)]  # 40 source columns, like the LIBRARIES.md measurements

_PROBLEMS = [
    ("not-a-date", "Start date", "start_date", "31/02/2024"),
    ("unknown-country", "Country", "country", "Atlantis"),
    ("not-an-email", "Work e-mail", "work_email", "nobody(at)example"),
    ("missing-value", "Last name", "last_name", ""),
    ("duplicate-id", "Employee ID", "external_id", "E000123"),
]


def synthetic_result(n_rows: int = 100_000, *, problem_share: float = 0.05, seed: int = 7) -> RunResult:
    """A staff run of ``n_rows`` rows, ``problem_share`` of them needing attention with original cells."""
    rng = random.Random(seed)
    source = SourceInfo(
        path="/data/hris/staff_export.xlsx",
        name="staff_export.xlsx",
        format="xlsx",
        size=14_500_000,
        sha256="ab" * 32,
        sheet="Staff",
        header_row=3,
        headers=HEADERS,
        preamble=[["HRIS export: all staff"], ["Generated 2024-05-01"]],
        rows_read=n_rows,
    )
    info = RunInfo(
        kind="staff",
        job="monthly-staff",
        source=source,
        service_url="https://sandbox.example.com/api",
        customer_id="CUST-42",
        started_at="2024-05-01T09:00:00+02:00",
        finished_at="2024-05-01T09:03:12+02:00",
        duration_s=192.0,
        tool_version="0.1.0",
        timings={"read": 4.4, "validate": 0.6, "submit": 180.0},
    )
    rows: list[RowOutcome] = []
    for i in range(n_rows):
        row_no = i + 4
        ext = f"E{i:06d}"
        name = f"Person {i} Example"
        if rng.random() < problem_share:
            code, column, fld, value = rng.choice(_PROBLEMS)
            message = f"Row {row_no}: {column} {value!r} is not valid ({code})"
            cells = {h: f"{h} value {i}" for h in HEADERS}
            cells["Employee ID"], cells[column] = ext, value
            outcome = Outcome.INVALID if rng.random() < 0.8 else Outcome.REJECTED
            problem = Problem(code, message, row_no, column, fld, value)
            rows.append(RowOutcome(row_no, ext, name, outcome, (problem,), source=cells))
        else:
            outcome = Outcome.ADDED if rng.random() < 0.3 else Outcome.UPDATED
            rows.append(RowOutcome(row_no, ext, name, outcome))
    return RunResult(info, rows)


def _work(n_rows: int, queue: Any) -> None:
    from hrimport.report import write_report

    result = synthetic_result(n_rows)
    with tempfile.TemporaryDirectory() as tmp:
        cpu_start, start = time.process_time(), time.perf_counter()
        files = write_report(result, Path(tmp) / "report")
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        sizes = {p.name: p.stat().st_size for p in files.paths()}
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    # a big to_fix is written by a child process (hrimport.report.writer.PARALLEL_FIX_CELLS)
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    queue.put(
        {
            "rows": n_rows,
            "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2),
            "peak_rss_mb": round(peak_kb / 1024, 1),
            "peak_rss_child_mb": round(child_kb / 1024, 1),
            "timings": files.timings,
            "files": sizes,
        }
    )


def bench_report(n_rows: int = 100_000) -> dict[str, Any]:
    """Write all report files for a synthetic ``n_rows`` run in a fresh process; return seconds and peak RSS.

    ``seconds`` is the wall time of ``write_report`` only (building the synthetic run is not the reporter's
    cost), ``cpu_seconds`` its CPU time (steadier on a busy machine); ``peak_rss_mb`` is the whole
    process's peak, synthetic run included.
    """
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_work, args=(n_rows, queue))
    proc.start()
    result: dict[str, Any] = queue.get()
    proc.join()
    return result


if __name__ == "__main__":
    print(json.dumps(bench_report(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000), indent=2))
