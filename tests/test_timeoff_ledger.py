"""A time-off import killed mid-run loses nothing: the ledger holds every record the service accepted.

The import runs as a real process (``python -m hrimport``) against the sandbox fixture, slowed down by the
sandbox's latency fault, and is killed with SIGKILL once some records are stored. The next run must add the
rest, report the records whose answers the kill lost as imported, and never add a record twice.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hrimport.outcomes import read_outcomes
from hrimport.state.ledger import LEDGER_FILE, open_ledger
from tests.test_timeoff_import import add_staff, write_config, write_xlsx


def test_a_killed_run_loses_nothing_and_the_next_run_adds_each_record_once(tmp_path: Path, sandbox: Any) -> None:
    add_staff(sandbox, [("000101", "SG"), ("000102", "SG")])
    rows: list[list[object]] = []
    for n in range(24):
        day = dt.date(2024, 1, 1) + dt.timedelta(days=n)
        for person in ("000101", "000102"):
            rows.append([person, "Sick Leave", day, day, "", 1, "SG", f"{person} {day}", ""])  # HR says 1, weekends too
    source = write_xlsx(tmp_path / "leave.xlsx", rows)
    config = write_config(tmp_path)
    env = {**os.environ, "HRIMPORT_BASE_URL": sandbox.base_url, "HRIMPORT_TOKEN": "demo-customer-99"}
    command = [sys.executable, "-m", "hrimport", "timeoff", "import", str(config), str(source),
               "--report-dir", str(tmp_path / "reports"), "--concurrency", "3"]

    sandbox.set_faults(latency=0.15)
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(sandbox.time_off(99)) < 8:
            assert process.poll() is None, "the import ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        process.kill()  # SIGKILL: no cleanup of any kind
    finally:
        process.wait(timeout=30)
    time.sleep(0.5)  # a request the server had already received is still stored after the client died
    stored_after_kill = len(sandbox.time_off(99))
    with open_ledger(tmp_path / ".hrimport") as ledger:
        entries = ledger.entries()
    remembered = sum(1 for e in entries if e.stored)
    assert (tmp_path / ".hrimport" / LEDGER_FILE).exists()
    # every record whose answer arrived is in the ledger as stored; the requests in flight as sending
    assert stored_after_kill - 3 <= remembered <= stored_after_kill
    assert remembered + sum(1 for e in entries if not e.stored) >= stored_after_kill
    # and the killed run's folder tells it too: its journal lists each record answered as it was answered (all
    # but those whose answer came as the kill did), not only once every record is done
    [journal] = (tmp_path / "reports").rglob("outcomes.jsonl")
    journaled = len(journal.read_text(encoding="utf-8").splitlines()) - 1  # its first line heads the journal
    assert remembered - 3 <= journaled <= remembered

    sandbox.clear_faults()
    finished = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in finished.stderr
    folder = Path(finished.stdout.split("Report folder: ")[1].splitlines()[0])
    run = read_outcomes(folder / "outcomes.jsonl")
    outcomes = Counter(o.outcome.value for o in run.rows)
    # a record stored whose answer was lost in the kill is found again, not reported as an overlap; those the
    # killed run's journal lists are told as added by it (its report never came), the others already imported
    told = json.loads((folder / "summary.json").read_text(encoding="utf-8"))["stopped_runs"]
    assert [(run["rows"], run["added"]) for run in told] == [(journaled, journaled)]
    assert outcomes["already_imported"] == stored_after_kill - journaled
    assert outcomes["added"] == len(rows) - stored_after_kill + journaled
    assert finished.returncode == 0
    records = sandbox.time_off(99)
    assert len(records) == len(rows)
    assert Counter(r["notes"] for r in records) == Counter(str(r[7]) for r in rows)  # each exactly once


def test_a_run_stopped_by_a_refused_token_lists_every_record_answered_after_the_stop_in_its_journal(
    tmp_path: Path, sandbox: Any
) -> None:
    """Four records go out at once. The fifth request is refused (the token revoked mid-run), which stops the
    run, while the service is still answering three others it stored: those answers arrive after the stop, and
    the stopped run's journal (its record of the rows sent, the report of a run that did not finish) lists
    them, as the ledger does."""
    add_staff(sandbox, [("000101", "SG")])
    days = [dt.date(2024, 1, 8) + dt.timedelta(days=n) for n in range(8)]
    rows: list[list[object]] = [["000101", "Sick Leave", day, day, "", 1, "SG", f"sick {day}", ""] for day in days]
    source = write_xlsx(tmp_path / "leave.xlsx", rows)
    config = write_config(tmp_path)
    sandbox.set_faults(rules=[
        # answered a fifth of a second late, once the other workers have sent theirs
        {"path": "apply-ee-time-off", "skip": 4, "count": 1, "status": 401, "delay": 0.2},
        # the next three are stored at once and answered a second later: after the 401 stopped the run
        {"path": "apply-ee-time-off", "count": 3, "after": True, "delay": 1},
    ])
    env = {**os.environ, "HRIMPORT_BASE_URL": sandbox.base_url, "HRIMPORT_TOKEN": "demo-customer-99"}
    stopped = subprocess.run(
        [sys.executable, "-m", "hrimport", "timeoff", "import", str(config), str(source),
         "--report-dir", str(tmp_path / "reports"), "--concurrency", "4"],
        check=False, env=env, capture_output=True, text=True, timeout=120)
    sandbox.clear_faults()

    assert "Traceback" not in stopped.stderr
    assert stopped.returncode == 4, stopped.stderr  # the service cannot be used
    stored = {r["notes"] for r in sandbox.time_off(99)}
    assert 5 <= len(stored) <= 7  # all but the refused one (fewer if a worker had not taken its row in time)
    [journal] = (tmp_path / "reports").rglob("outcomes.jsonl")
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["record"] == "journal"
    *rows_told, stopped_line = lines[1:]  # the journal ends saying why the run stopped
    assert stopped_line["record"] == "stopped"
    assert stopped_line["why"].startswith("the platform stopped accepting hrimport's token")
    told = {line["row"]: line["outcome"] for line in rows_told}
    assert set(told.values()) == {"added"}
    assert {f"sick {rows[row - 2][2]}" for row in told} == stored  # the file's row 2 is rows[0]
    with open_ledger(tmp_path / ".hrimport") as ledger:
        assert sorted(e.source_row for e in ledger.entries() if e.stored) == sorted(told)
