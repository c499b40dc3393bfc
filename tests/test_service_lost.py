"""A service that dies mid-run: the import stops sending within one request's retries, accounts for every
row, and exits 4 with a report; the next run, once the service is back, completes without doubling.

Real processes and real time: the import runs as ``python -m hrimport`` with the default retry policy (no
``instant_retries``), against the sandbox fixture, which the test stops while the import is sending.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hrimport.outcomes import read_outcomes
from tests import staff_files
from tests.test_timeoff_import import add_staff, write_config, write_xlsx

PEOPLE = [f"0002{n:02d}" for n in range(12)]


def leave_rows() -> list[list[object]]:
    """A year of one-day leave for 12 people: 240 rows, 20 distinct days (one calculation each)."""
    rows: list[list[object]] = []
    for week in range(20):
        day = dt.date(2024, 1, 2) + dt.timedelta(weeks=week, days=week % 3)
        rows += [[person, "Annual Leave", day, day, "", 1, "SG", f"{person} {day}", ""] for person in PEOPLE]
    return rows


def act_mid_run(sandbox: Any, command: list[str], stored: Callable[[], int], enough: int,
                act: Callable[[subprocess.Popen[str]], None]) -> tuple[int, str, str, float]:
    """Run ``command`` against the slowed sandbox and ``act`` on it (stop the sandbox, send a signal) once
    ``stored()`` counts ``enough`` records; (exit code, stdout, stderr, seconds from the act to the end)."""
    env = {**os.environ, "HRIMPORT_BASE_URL": sandbox.base_url, "HRIMPORT_TOKEN": "demo-customer-99"}
    sandbox.set_faults(latency=0.05)
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while stored() < enough:
            assert process.poll() is None, "the import ended before the moment to act"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        act(process)
        acted = time.monotonic()
        stdout, stderr = process.communicate(timeout=90)
        return process.returncode, stdout, stderr, time.monotonic() - acted
    finally:
        if process.poll() is None:
            process.kill()


def run_until_stopped(sandbox: Any, command: list[str], stored: Callable[[], int],
                      enough: int) -> tuple[int, str, str, float]:
    """``act_mid_run`` stopping the sandbox."""
    return act_mid_run(sandbox, command, stored, enough, lambda _: sandbox.stop())


def test_a_service_stopped_mid_run_ends_the_import_with_exit_4_and_every_row_accounted_for(
        tmp_path: Path, sandbox: Any) -> None:
    add_staff(sandbox, [(p, "SG") for p in PEOPLE])
    rows = leave_rows()
    source = write_xlsx(tmp_path / "leave.xlsx", rows)
    command = [sys.executable, "-m", "hrimport", "timeoff", "import", str(write_config(tmp_path)), str(source),
               "--report-dir", str(tmp_path / "reports"), "--concurrency", "4"]
    code, stdout, stderr, seconds = run_until_stopped(sandbox, command, lambda: len(sandbox.time_off(99)), 20)

    assert code == 4, stderr
    assert seconds < 60  # one request's retries, not every remaining row's
    assert "Traceback" not in stderr
    folder = Path(stdout.split("Report folder: ")[1].splitlines()[0])
    run = read_outcomes(folder / "outcomes.jsonl")
    assert len(run.rows) == len(rows)  # every row accounted for
    outcomes = Counter(o.outcome.value for o in run.rows)
    assert set(outcomes) <= {"added", "failed", "not_sent"}
    # only requests begun before the run gave up fail: per worker (4), one whose kept-alive connection the
    # stopping server closed and one that could not connect; every row after them is not sent at all
    assert outcomes["failed"] <= 8 and outcomes["not_sent"] == len(rows) - outcomes["added"] - outcomes["failed"]
    codes = Counter(code for o in run.rows if o.outcome.value == "failed" for code in o.problem_codes)
    assert set(codes) <= {"connect-failed", "transport-failed"}
    for o in run.rows:  # a record that could not connect was not sent; one whose connection broke may have been
        if "connect-failed" in o.problem_codes:
            assert o.message.endswith("Not sent: the next run sends it."), o.message
        elif "transport-failed" in o.problem_codes:
            assert o.message.endswith("If the record did reach the service, the next run finds it and reports it "
                                      "added, never a second record."), o.message
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["exit_code"] == 4
    assert summary["verdict"].endswith("; the service became unreachable, so the run stopped sending")
    assert any(note.startswith("The service became unreachable during the run") for note in summary["notes"])

    sandbox.start()  # back on the same database and port
    stored = {(r["customer_system_id"], r["start_date"]) for r in sandbox.time_off(99)}
    assert outcomes["added"] <= len(stored) <= outcomes["added"] + 4
    env = {**os.environ, "HRIMPORT_BASE_URL": sandbox.base_url, "HRIMPORT_TOKEN": "demo-customer-99"}
    again = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    records = sandbox.time_off(99)
    assert Counter(r["notes"] for r in records) == Counter(str(r[7]) for r in rows)  # each exactly once


def test_a_staff_import_whose_service_stops_mid_run_says_so_and_exits_4(tmp_path: Path, sandbox: Any) -> None:
    people = [staff_files.person(n) for n in range(1, 301)]
    data = staff_files.write_csv(tmp_path / "staff.csv", people)
    command = [sys.executable, "-m", "hrimport", "staff", "import",
               str(staff_files.write_config(tmp_path / "staff.toml")), str(data), "--batch-size", "5",
               "--report-dir", str(tmp_path / "reports")]
    code, stdout, stderr, seconds = run_until_stopped(sandbox, command, lambda: len(sandbox.staff(99)), 30)

    assert code == 4, stderr
    assert seconds < 60
    folder = Path(stdout.split("Report folder: ")[1].splitlines()[0])
    run = read_outcomes(folder / "outcomes.jsonl")
    assert len(run.rows) == len(people)
    outcomes = Counter(o.outcome.value for o in run.rows)
    assert set(outcomes) == {"added", "failed", "not_sent"}
    assert outcomes["failed"] == 5  # the batch whose retries found the service gone
    assert {c for o in run.rows if o.outcome.value == "not_sent" for c in o.problem_codes} == {"not-sent"}
    assert "the service became unreachable, so the run stopped sending" in stdout
    unsent = next(o for o in run.rows if o.problem_codes == ["not-sent"])
    assert unsent.message == (f"Row {unsent.row}: not sent: the service became unreachable earlier in this run; run "
                              "the import again once it is reachable.")
