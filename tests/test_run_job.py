"""``hrimport run JOB.toml`` end to end: real processes, the real sandbox over HTTP, real SQLite, real SMTP.

The owner's story (issue 6): a monthly cron run nobody watches. It must be safe to start twice (the second
run exits 3), safe to kill (a ``kill -9`` mid-batch, then a re-run, stores nothing twice and the new report
counts every row), cheap when nothing changed (nothing sent), and loud only when a person must act.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trustme
from click.testing import CliRunner

from hrimport import stages
from hrimport.cli import main
from hrimport.jobs import load_job, prune_runs
from hrimport.stages import ProgressLog
from hrimport.state.lock import lock_path
from hrimport.state.store import STATE_FILE
from tests.child_process import reaped
from tests.mail_relay import Inbox, free_port
from tests.staff_files import person, write_config, write_csv
from tests.test_notify import PASSWORD, start_smtps

TOKEN = "demo-customer-99"
BULK = "/api/bulk_add_edit_staff"
TIME_OFF = "/api/apply-ee-time-off"
LEAVE_HEADER = ["Employee ID", "Leave Type", "From", "To", "Half Day", "Days", "Country", "Reason", "Status"]
LEAVE_CONFIG = """
[service]
customer_id = 99
base_url = "{base_url}"

[source]
date_order = "day-first"

[report]
job = "leave"

[timeoff]
default_country = "MY"
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

[timeoff.values.decision]
"Approved" = "Approve"
"""


# ----------------------------------------------------------------------------------------- helpers


class JobFolder:
    """A job's folder: its staff config, export and job file, the way an owner lays them out."""

    def __init__(self, root: Path, sandbox: Any, *, notify: str = "", retention: int | None = None,
                 batch_size: int = 100, timeoff: bool = False, max_source_age_days: int | None = None) -> None:
        self.root = root
        self.sandbox = sandbox
        self.prefix = uuid.uuid4().hex[:4]  # external ids unique to this test (the sandbox has demo staff)
        # the rows go to the tests' served sandbox: the verdict says so, as it must to a trial's owner
        self.on_sandbox = f" on the sandbox at {sandbox.base_url}, not the platform"
        (root / "exports").mkdir(parents=True, exist_ok=True)
        config = write_config(root / "staff.toml", base_url=sandbox.base_url)
        config.write_text(config.read_text().replace("[staff]\n", f"[staff]\nbatch_size = {batch_size}\n", 1))
        lines = ['name = "monthly"', 'state_dir = "state"', 'report_dir = "reports"']
        if retention is not None:
            lines.append(f"retention = {retention}")
        if max_source_age_days is not None:
            lines.append(f"max_source_age_days = {max_source_age_days}")
        lines += ["", "[[step]]", 'kind = "staff"', 'config = "staff.toml"', 'source = "exports/staff_*.csv"']
        if timeoff:
            (root / "leave.toml").write_text(LEAVE_CONFIG.format(base_url=sandbox.base_url), encoding="utf-8")
            lines += ["", "[[step]]", 'kind = "timeoff"', 'config = "leave.toml"',
                      'source = "exports/leave_*.csv"']
        lines += ["", notify]
        self.job = root / "monthly.toml"
        self.job.write_text("\n".join(lines) + "\n")

    def ext(self, n: int) -> str:
        return f"{self.prefix}{n:05d}"

    def export(self, month: str, rows: list[dict[str, str]]) -> Path:
        """Write this month's export; it becomes the newest file the glob finds."""
        path = write_csv(self.root / "exports" / f"staff_{month}.csv", rows)
        later = time.time() + len(list((self.root / "exports").iterdir()))  # newest by mtime, however fast
        os.utime(path, (later, later))
        return path

    def leave(self, month: str, count: int) -> Path:
        """This month's leave export: one day of annual leave for each of the first ``count`` people."""
        rows = [{"Employee ID": self.ext(n), "Leave Type": "Annual Leave", "From": "04/03/2024",
                 "To": "05/03/2024", "Country": "MY", "Status": "Approved"}  # a Monday and Tuesday
                for n in range(1, count + 1)]
        path = write_csv(self.root / "exports" / f"leave_{month}.csv", rows, LEAVE_HEADER)
        later = time.time() + len(list((self.root / "exports").iterdir()))
        os.utime(path, (later, later))
        return path

    def days_pass(self, days: int) -> None:
        """Move the job's past ``days`` back: every export's modification time, and when the state says each
        step imported its file. The state's SQLite file is changed with SQLite itself: a test cannot have
        imported a file a month ago."""
        for path in (self.root / "exports").iterdir():
            then = path.stat().st_mtime - days * 86400
            os.utime(path, (then, then))
        with closing(sqlite3.connect(self.root / "state" / STATE_FILE)) as db, db:
            for table in ("source_files", "imported_files"):  # the last import, and every one
                for key, stamp in db.execute(f"SELECT rowid, imported_at FROM {table}").fetchall():
                    earlier = (datetime.fromisoformat(stamp) - timedelta(days=days)).isoformat(timespec="seconds")
                    db.execute(f"UPDATE {table} SET imported_at = ? WHERE rowid = ?", (earlier, key))

    def imported_on(self, step: str = "staff") -> str:
        """When the state says ``step`` imported its file, as the step lines show it: 2024-06-01 06:15."""
        with closing(sqlite3.connect(self.root / "state" / STATE_FILE)) as db:
            [(stamp,)] = db.execute("SELECT imported_at FROM source_files WHERE step = ?", (step,)).fetchall()
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")

    def imports(self, step: str = "staff") -> list[tuple[str, str]]:
        """Every file the state says ``step`` imported, oldest first: (its name, when as the step lines show it)."""
        with closing(sqlite3.connect(self.root / "state" / STATE_FILE)) as db:
            rows = db.execute("SELECT path, imported_at FROM imported_files WHERE step = ? ORDER BY id",
                              (step,)).fetchall()
        return [(Path(path).name, datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M"))
                for path, stamp in rows]

    def titles(self) -> dict[str, str]:
        """Each person's job title as the sandbox holds it."""
        return {s["customer_system_id"]: s.get("job_title") for s in self.sandbox.staff(99)
                if str(s.get("customer_system_id", "")).startswith(self.prefix)}

    def time_off(self) -> Counter[tuple[str, str]]:
        """How many time-off records the sandbox holds per (external id, start date) of this test."""
        return Counter((t["customer_system_id"], t["start_date"]) for t in self.sandbox.time_off(99)
                       if str(t.get("customer_system_id", "")).startswith(self.prefix))

    def people(self, count: int, **changes: dict[str, str]) -> list[dict[str, str]]:
        rows = []
        for n in range(1, count + 1):
            row = person(n, **{"Employee ID": self.ext(n)})
            row.update(changes.get(str(n), {}))
            rows.append(row)
        return rows

    def runs(self) -> list[Path]:
        folder = self.root / "reports" / "monthly"
        return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []

    def last_run(self) -> dict[str, Any]:
        return json.loads((self.runs()[-1] / "run.json").read_text())

    def stored(self) -> Counter[str]:
        """How many records the sandbox holds per external id of this test."""
        return Counter(s["customer_system_id"] for s in self.sandbox.staff(99)
                       if str(s.get("customer_system_id", "")).startswith(self.prefix))


def bulk_elements(sandbox: Any) -> int:
    """Staff elements sent to the bulk endpoint since the log was last cleared."""
    return sum(r["elements"] or 0 for r in sandbox.requests() if r["path"].endswith(BULK))


def run_cli(*args: str, env: dict[str, str] | None = None) -> Any:
    """``hrimport ARGS`` in this process, stderr kept apart (click >= 8.2)."""
    return CliRunner().invoke(main, list(args), env={"HRIMPORT_TOKEN": TOKEN, **(env or {})},
                              catch_exceptions=False)


def hrimport(*args: str, token: str = TOKEN) -> subprocess.Popen[str]:
    """``hrimport ARGS`` as a real process, as cron starts it (no TTY, its own environment)."""
    env = {**os.environ, "HRIMPORT_TOKEN": token}
    return subprocess.Popen([sys.executable, "-m", "hrimport", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(condition: Any, timeout: float = 30, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def job(tmp_path: Path, sandbox: Any) -> JobFolder:
    return JobFolder(tmp_path / "job", sandbox)


# -------------------------------------------------------------------------------------- first runs


def test_a_first_run_imports_everything_with_one_line_per_step_and_a_log(job: JobFolder) -> None:
    job.export("2024-05", job.people(12))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""  # everything for a person is on stderr and in the run folder
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"staff: 12 of 12 rows imported (staff_2024-05.csv, {job.on_sandbox.strip()}); "
                               "report ")
    assert lines[-1].startswith(f"monthly: everything imported{job.on_sandbox} (exit 0")
    assert "\r" not in result.stderr  # no progress bar without a terminal
    [run] = job.runs()
    assert (run / "staff" / "report.html").is_file()
    log = (run / "run.log").read_text()
    assert "step staff:" in log and "staff_2024-05.csv" in log
    assert TOKEN not in log  # never the token
    summary = job.last_run()
    assert summary["exit_code"] == 0
    assert summary["steps"][0]["counts"]["added"] == 12
    assert job.stored() == Counter({job.ext(n): 1 for n in range(1, 13)})


def test_a_long_send_says_in_the_run_log_how_far_it_is_and_how_long_is_left(
    tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a slow platform: 8 batches of 5 rows, a fifth of a second each; a line at most every half second
    job = JobFolder(tmp_path / "job", sandbox, batch_size=5)
    job.export("2024-05", job.people(40))
    sandbox.set_faults(latency=0.2)
    monkeypatch.setattr(stages, "PROGRESS_LOG_SECONDS", 0.5)

    result = run_cli("run", str(job.job))
    sandbox.clear_faults()

    assert result.exit_code == 0, result.stderr
    assert "answered" not in result.stderr  # cron's mail stays one line per step
    log = (job.runs()[-1] / "run.log").read_text()
    said = [re.search(r"hrimport.stages: staff: (\d+) of 40 rows answered \((\d+)%\) after (\d+) s; about "
                      r"(\d+) s left$", line) for line in log.splitlines() if "rows answered" in line]
    assert 1 <= len(said) <= 4 and all(said), log
    done = [int(m.group(1)) for m in said if m]
    assert done == sorted(done) and all(0 < n < 40 and n % 5 == 0 for n in done)  # whole batches, never the end
    assert all(int(m.group(2)) == 100 * int(m.group(1)) // 40 for m in said if m)
    assert log.index("rows answered") > log.index("Sending 40 rows")


def test_a_long_check_of_the_total_days_says_in_the_run_log_how_far_it_is(
    tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 12 leave records of 12 distinct periods, no Days: one calculation each, a fifth of a second each
    job = JobFolder(tmp_path / "job", sandbox, timeoff=True)
    job.export("2024-05", job.people(12))
    rows = [{"Employee ID": job.ext(n), "Leave Type": "Annual Leave", "From": f"{n:02d}/04/2024",
             "To": f"{n:02d}/04/2024", "Country": "MY", "Status": "Approved"} for n in range(1, 13)]
    write_csv(job.root / "exports" / "leave_2024-05.csv", rows, LEAVE_HEADER)
    sandbox.set_faults(rules=[{"path": "calculate-total-days", "delay": 0.2, "count": 12}])
    monkeypatch.setattr(stages, "PROGRESS_LOG_SECONDS", 0.3)

    result = run_cli("run", str(job.job))
    sandbox.clear_faults()

    assert result.exit_code in (0, 1), result.stderr  # a weekend or holiday among the days is not the point
    log = (job.runs()[-1] / "run.log").read_text()
    said = [re.search(r"hrimport.stages: total days: (\d+) of 12 rows checked \((\d+)%\) after (\d+) s", line)
            for line in log.splitlines() if "rows checked" in line]
    assert said and all(said), log
    assert all(0 < int(m.group(1)) < 12 for m in said if m)
    assert log.index("rows checked") > log.index("Checking the total days of 12 rows")
    assert "rows checked" not in result.stderr


def test_the_progress_line_gives_the_pace_since_the_first_answer_and_says_nothing_it_cannot_know(
    caplog: pytest.LogCaptureFixture
) -> None:
    now = [100.0]
    bar: list[tuple[int, int]] = []
    logged = ProgressLog("staff", lambda n, total: bar.append((n, total)), every=60, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="hrimport.stages"):
        for at, answered in [(100, 1_000), (130, 1_000), (170, 1_000), (175, 0), (240, 0), (400, 2_000)]:
            now[0] = at
            logged(answered, 10_000)
    assert [r.getMessage() for r in caplog.records] == [
        # 2,000 rows in 70 s since the first answer: 7,000 left take 4 min 5 s
        "staff: 3,000 of 10,000 rows answered (30%) after 1 min 10 s; about 4 min 5 s left",
        "staff: 3,000 of 10,000 rows answered (30%) after 2 min 20 s; about 8 min 10 s left",
        "staff: 5,000 of 10,000 rows answered (50%) after 5 min 0 s; about 6 min 15 s left"]
    assert sum(n for n, _ in bar) == 5_000  # the terminal's bar is given every count

    caplog.clear()
    stalled = ProgressLog("timeoff", every=60, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="hrimport.stages"):
        for at, answered in [(0, 500), (61, 0)]:  # nothing answered since the first answer: no pace to tell
            now[0] = at
            stalled(answered, 10_000)
    assert [r.getMessage() for r in caplog.records] == ["timeoff: 500 of 10,000 rows answered (5%) after 1 min 1 s"]


def test_the_same_file_again_is_already_imported_and_full_sends_it_all(job: JobFolder) -> None:
    job.export("2024-05", job.people(10))
    assert run_cli("run", str(job.job)).exit_code == 0
    job.sandbox.clear_requests()

    again = run_cli("run", str(job.job))

    assert again.exit_code == 0
    # plainly no new export, not a success: the line, the run's last line (the e-mail's subject) say so
    found = (f"the newest file matching exports/staff_*.csv (staff_2024-05.csv) is the one imported on "
             f"{job.imported_on()}")
    lines = again.stderr.splitlines()
    assert lines[0] == f"staff: no new export: {found}; nothing sent (run with --full to import it again)"
    assert lines[-1].startswith(f"monthly: no new export: {found}; nothing sent (exit 0: ")
    assert job.sandbox.requests() == []  # not even read, let alone sent
    assert job.last_run()["steps"][0]["status"] == "already_imported"

    full = run_cli("run", str(job.job), "--full")

    assert full.exit_code == 0
    assert bulk_elements(job.sandbox) == 10
    assert job.last_run()["steps"][0]["counts"]["updated"] == 10


def test_an_unchanged_month_sends_nothing(job: JobFolder) -> None:
    rows = job.people(20)
    job.export("2024-05", rows)
    assert run_cli("run", str(job.job)).exit_code == 0
    job.sandbox.clear_requests()
    job.export("2024-06", list(reversed(rows)))  # a new export (new bytes), the same people

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    assert job.sandbox.requests() == []  # asserted on the sandbox's own request log
    counts = job.last_run()["steps"][0]["counts"]
    assert counts["unchanged"] == 20 and sum(counts.values()) == 20


def test_a_doubt_on_a_row_not_sent_because_unchanged_does_not_say_it_is_sent(job: JobFolder) -> None:
    """A doubt about a row's data is told every month the export holds the row; in a month the row is not sent
    (unchanged since the platform accepted it), its words say what is true of it: kept as written, not sent."""
    rows = job.people(3, **{"2": {"Move Date": "2024-05-01"}})  # a move date without the country left
    job.export("2024-05", rows)
    assert run_cli("run", str(job.job)).exit_code == 0
    job.export("2024-06", list(reversed(rows)))  # a new export (new bytes), the same people
    job.sandbox.clear_requests()

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    assert job.sandbox.requests() == []
    lines = (job.runs()[-1] / "staff" / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()
    rows_told = [json.loads(line) for line in lines if '"outcome"' in line and '"row"' in line]
    moved = next(o for o in rows_told if o["row"] == 3)
    assert moved["outcome"] == "unchanged"
    assert [(p["code"], p["message"]) for p in moved["problems"]] == [(
        "country-change-incomplete",
        ("Row 3: 'Move Date' is 2024-05-01 and 'Old Country' is empty: a country change needs both, and whether the "
         "country changes only the platform knows (it holds the person's country); kept as written (the platform "
         "refuses the row if it does: then enter the country the person left)."))]


def test_three_changed_of_many_sends_three(job: JobFolder) -> None:
    count = 2000
    job.export("2024-05", job.people(count))
    assert run_cli("run", str(job.job)).exit_code == 0
    job.sandbox.clear_requests()
    changed = {"7": {"Title": "Senior Analyst"}, "1000": {"Email": "new@acme.example"}, "1999": {"Name": "New Name"}}
    job.export("2024-06", job.people(count, **changed))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    assert bulk_elements(job.sandbox) == 3
    counts = job.last_run()["steps"][0]["counts"]
    assert counts["updated"] == 3 and counts["unchanged"] == count - 3
    titles = {s["customer_system_id"]: s.get("job_title") for s in job.sandbox.staff(99)}
    assert titles[job.ext(7)] == "Senior Analyst"


def test_a_clean_run_with_warnings_says_so_in_its_verdict(job: JobFolder) -> None:
    job.sandbox.set_alterations(truncate_text=12)  # the platform cuts long text: a platform-altered warning
    job.export("2024-05", job.people(3, **{"2": {"Title": "Senior Payroll Analyst"}}))

    result = run_cli("run", str(job.job))
    job.sandbox.clear_alterations()

    assert result.exit_code == 0, result.stderr
    assert job.last_run()["verdict"] == "everything imported (1 row with warnings to look at)"


def test_full_sends_unchanged_rows_too(job: JobFolder) -> None:
    rows = job.people(6)
    job.export("2024-05", rows)
    run_cli("run", str(job.job))
    job.sandbox.clear_requests()
    job.export("2024-06", list(reversed(rows)))

    assert run_cli("run", str(job.job), "--full").exit_code == 0
    assert bulk_elements(job.sandbox) == 6


# ---------------------------------------------------------------------------------------- exit codes


def test_exit_1_when_rows_need_attention_and_the_file_is_tried_again_next_time(job: JobFolder) -> None:
    job.export("2024-05", job.people(5, **{"3": {"Hire Date": "2024-02-30"}}))

    first = run_cli("run", str(job.job))
    assert first.exit_code == 1
    assert "4 of 5 rows imported; 1 needs attention" in first.stderr
    assert (job.runs()[-1] / "staff" / "to_fix.csv").is_file()

    # not remembered as imported: the same file is read again (the 4 good rows are unchanged, not sent)
    job.sandbox.clear_requests()
    second = run_cli("run", str(job.job))
    assert second.exit_code == 1
    assert bulk_elements(job.sandbox) == 0
    assert job.last_run()["steps"][0]["counts"]["unchanged"] == 4


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("no export", "staff: Error: no file matches"),
        ("bad job file", "Error: monthly.toml step 1: kind must be \"staff\" or \"timeoff\""),
        ("missing job file", "Error: job file"),
        ("damaged export", "staff_2024-05.csv"),
    ],
)
def test_exit_2_for_a_bad_job_file_or_export_in_one_line(job: JobFolder, breakage: str, message: str) -> None:
    target = str(job.job)
    if breakage == "bad job file":
        job.job.write_text(job.job.read_text().replace('kind = "staff"', 'kind = "people"'))
    elif breakage == "missing job file":
        target = str(job.root / "nope.toml")
    elif breakage == "damaged export":
        job.export("2024-05", []).write_bytes(b"PK\x03\x04 not really a zip")

    result = run_cli("run", target)

    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_exit_3_when_another_process_runs_the_job(job: JobFolder) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", ("import sys; from pathlib import Path; from hrimport.state.lock import job_lock\n"
         "with job_lock(Path(sys.argv[1]), 'monthly'):\n    print('locked', flush=True); sys.stdin.readline()"),
         str(job.root / "state")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        job.export("2024-05", job.people(3))

        result = run_cli("run", str(job.job))

        assert result.exit_code == 3
        assert f"job 'monthly' is already running (pid {holder.pid}" in result.stderr
        assert job.runs() == []  # nothing done, not even a report folder
        assert job.sandbox.requests() == []
    finally:
        holder.kill()
        holder.wait(timeout=10)
        for stream in (holder.stdin, holder.stdout):
            if stream is not None:
                stream.close()


def test_exit_4_when_the_service_refuses_the_token(job: JobFolder) -> None:
    job.export("2024-05", job.people(3))

    result = run_cli("run", str(job.job), env={"HRIMPORT_TOKEN": "not-a-real-token"})

    assert result.exit_code == 4
    assert "the service refused the token" in result.stderr and "HRIMPORT_TOKEN" in result.stderr
    assert "not-a-real-token" not in (job.runs()[-1] / "run.log").read_text()


def test_exit_4_when_the_service_is_unreachable(job: JobFolder) -> None:
    import stamina

    job.export("2024-05", job.people(3))
    with stamina.set_testing(True, attempts=3):  # the retries without their real waits
        result = run_cli("run", str(job.job), "--base-url", f"http://127.0.0.1:{free_port()}/sandbox")

    assert result.exit_code == 4
    assert "cannot connect to the service" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_locked_run_tells_the_people_on_call(tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    box, port = relay
    job = JobFolder(tmp_path / "lockmail", sandbox, notify=notify_table(port))
    job.export("2024-05", job.people(2))
    from hrimport.state.lock import job_lock

    with job_lock(job.root / "state", "monthly"):  # this process holds it: the run is refused all the same
        result = run_cli("run", str(job.job))

    assert result.exit_code == 3
    [msg] = box.messages
    assert msg["Subject"].startswith("[hrimport] monthly: not started: job 'monthly' is already running (pid ")
    assert "Exit code 3: another run of the same job is in progress" in msg.get_body(("plain",)).get_content()


# ------------------------------------------------------------------------------ two runs, kill -9


def test_two_overlapping_runs_the_second_exits_3(tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "overlap", sandbox, batch_size=5)
    job.export("2024-05", job.people(30))
    job.sandbox.set_faults(latency=1.0)  # six slow batches: the first run is still going when the second starts
    first = hrimport("run", str(job.job))
    with reaped(first):
        lock = lock_path(job.root / "state", "monthly")
        wait_for(lambda: lock.exists() and f"pid={first.pid}" in lock.read_text(), what="the first run's lock")

        second = hrimport("run", str(job.job))
        _out, err = second.communicate(timeout=60)

        assert second.returncode == 3, err
        assert f"pid {first.pid}" in err
        assert "Traceback" not in err
        job.sandbox.clear_faults()
        _, first_err = first.communicate(timeout=120)
        assert first.returncode == 0, first_err
    assert job.stored() == Counter({job.ext(n): 1 for n in range(1, 31)})


def test_new_hires_exist_before_their_time_off_is_imported(tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "both", sandbox, timeoff=True)
    job.export("2024-05", job.people(5))
    job.leave("2024-05", 5)

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    assert [line.split(":")[0] for line in result.stderr.splitlines()[:2]] == ["staff", "timeoff"]
    steps = job.last_run()["steps"]
    assert steps[0]["counts"]["added"] == 5 and steps[1]["counts"]["added"] == 5
    assert len(job.time_off()) == 5
    run = job.runs()[-1]
    assert (run / "staff" / "report.html").is_file() and (run / "timeoff" / "report.html").is_file()


def test_a_job_moved_without_its_state_folder_books_no_leave_twice(tmp_path: Path, sandbox: Any) -> None:
    """The job is copied to a new server without its state folder. The staff step sends the people again (the
    platform updates them by external id), but the time-off step stops (exit 2, one line) rather than send May's
    leave again. `hrimport timeoff rebuild-ledger` reads the job's reports back into the job's ledger, and the
    next run finds May's leave imported; --new-ledger, for time off that is not on the platform, sends it."""
    job = JobFolder(tmp_path / "moved", sandbox, timeoff=True)
    job.export("2024-05", job.people(3))
    job.leave("2024-05", 3)
    assert run_cli("run", str(job.job)).exit_code == 0
    shutil.rmtree(job.root / "state")

    stopped = run_cli("run", str(job.job))

    assert stopped.exit_code == 2, stopped.stderr
    line = next(line for line in stopped.stderr.splitlines() if line.startswith("timeoff: "))
    assert line.startswith(f"timeoff: Error: the time-off ledger {job.root / 'state' / 'timeoff_ledger.db'} knows "
                           "no time off sent to this service for customer 99, but 1 earlier import(s) in ")
    assert line.endswith("run again with --new-ledger")
    assert len(job.time_off()) == 3
    # the staff step says why its plan counts everyone as new
    first, moved = (json.loads((run / "staff" / "summary.json").read_text())["notes"] for run in job.runs()[-2:])
    assert not [n for n in first if "state folder" in n]
    (note,) = [n for n in moved if "remembers no staff import" in n]
    assert note.startswith(f"The state folder {job.root / 'state'} remembers no staff import to this service, but 1 "
                           f"earlier import(s) in {job.root / 'reports' / 'monthly'} sent staff there (the last: ")
    assert note.endswith("the state folder was lost or moved. So everyone counts as new in the plan, and the drift "
                         "guard had no earlier file to compare this one with; the platform updates people by their "
                         "external id, so no one is added twice. Bring the folder back for the next run to compare "
                         "again.")
    kept = job.root / "kept"
    shutil.copytree(job.root / "state", kept)

    rebuilt = run_cli("timeoff", "rebuild-ledger", str(job.job))
    again = run_cli("run", str(job.job), "--full")

    assert rebuilt.exit_code == 0, rebuilt.stderr
    assert rebuilt.stdout.startswith(f"Rebuilt the time-off ledger {job.root / 'state' / 'timeoff_ledger.db'} from 1 "
                                     f"report(s) in {job.root / 'reports' / 'monthly'}: 3 record(s) added")
    assert again.exit_code == 0, again.stderr
    assert job.last_run()["steps"][1]["counts"]["already_imported"] == 3

    shutil.rmtree(job.root / "state")
    shutil.move(kept, job.root / "state")
    anew = run_cli("run", str(job.job), "--new-ledger")
    assert anew.exit_code == 1, anew.stderr  # the sandbox refuses May's leave as overlapping: nothing twice
    assert job.last_run()["steps"][1]["counts"]["overlaps_existing"] == 3
    assert len(job.time_off()) == 3


@pytest.mark.parametrize("killed_in", ["staff", "timeoff"])
def test_a_run_killed_mid_batch_then_run_again_stores_everything_once(
    tmp_path: Path, sandbox: Any, killed_in: str
) -> None:
    job = JobFolder(tmp_path / "killed", sandbox, batch_size=10, timeoff=True)
    job.export("2024-05", job.people(60))
    job.leave("2024-05", 40)
    path = BULK if killed_in == "staff" else TIME_OFF
    sandbox.set_faults(latency=0.4)  # every request waits 0.4 s before the endpoint: the kill lands mid-request
    run = hrimport("run", str(job.job))
    with reaped(run):
        wait_for(lambda: sum(1 for r in sandbox.requests() if r["path"].endswith(path)) >= 2,
                 timeout=60, what=f"two {path} requests answered")
        time.sleep(0.2)
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=30)
    assert run.returncode == -signal.SIGKILL
    if killed_in == "staff":
        assert 0 < sum(job.stored().values()) < 60 and not job.time_off()  # really killed half way
    else:
        assert 0 < sum(job.time_off().values()) < 40
    sandbox.clear_faults()
    sandbox.clear_requests()

    again = hrimport("run", str(job.job))
    _, err = again.communicate(timeout=120)

    assert "Traceback" not in err
    assert job.stored() == Counter({job.ext(n): 1 for n in range(1, 61)})  # each staff once
    assert set(job.time_off().values()) == {1} and len(job.time_off()) == 40  # each time off once
    staff_step, leave_step = job.last_run()["steps"]
    staff, leave = staff_step["counts"], leave_step["counts"]
    assert sum(leave.values()) == 40  # the new report counts every row
    # the rows the killed run's journal lists are told as added by it (its report never came), where they would
    # read unchanged or already imported
    [told] = json.loads((job.runs()[-1] / killed_in / "summary.json").read_text())["stopped_runs"]
    assert told["added"] == told["rows"]
    if killed_in == "staff":
        assert sum(staff.values()) == 60
        assert again.returncode == 0, err
        # the batches accepted before the kill were remembered at once, so not sent again
        assert told["rows"] + staff["unchanged"] >= 20 and staff["added"] >= told["rows"]
        assert bulk_elements(sandbox) == 60 - told["rows"] - staff["unchanged"]
        assert leave["added"] == 40
    else:
        # the staff step had finished before the kill: its file is remembered as imported
        assert staff_step["status"] == "already_imported" and bulk_elements(sandbox) == 0
        assert told["rows"] >= 2 and leave["added"] >= told["rows"]
        # a record stored by the service whose answer the kill swallowed is reported as overlapping
        # (issue 5's ledger note), never stored twice
        assert leave["added"] + leave["already_imported"] + leave["overlaps_existing"] == 40
        assert again.returncode == (0 if leave["overlaps_existing"] == 0 else 1), err


# -------------------------------------------------------------------------------- e-mail, retention


def notify_table(port: int, when: str = "attention") -> str:
    return "\n".join([
        "[notify]", f'when = "{when}"', 'host = "127.0.0.1"', f"port = {port}", 'from = "hrimport@acme.example"',
        'to = ["payroll@acme.example"]',
    ])


def test_rows_needing_attention_are_emailed_with_the_report(tmp_path: Path, sandbox: Any,
                                                            relay: tuple[Inbox, int]) -> None:
    box, port = relay
    job = JobFolder(tmp_path / "mail", sandbox, notify=notify_table(port))
    job.export("2024-05", job.people(4, **{"2": {"Country": "Atlantis"}}))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 1
    [msg] = box.messages
    assert msg["Subject"] == f"[hrimport] monthly: 1 row needs attention{job.on_sandbox} (exit 1)"
    assert msg["To"] == "payroll@acme.example"
    body = msg.get_body(("plain",)).get_content()
    # when, as a person reads it: to the minute, with the machine's offset from UTC
    started = datetime.fromisoformat(job.last_run()["started_at"])
    assert body.startswith(f"hrimport job 'monthly' ({job.job}), started {started:%Y-%m-%d %H:%M} (UTC")
    assert f"staff: 3 of 4 rows imported; 1 needs attention (staff_2024-05.csv, {job.on_sandbox.strip()})" in body
    assert "Exit code 1: some rows need attention" in body
    attachments = {p.get_filename(): p for p in msg.iter_attachments()}
    assert set(attachments) == {"report.html", "to_fix.xlsx"}  # the to_fix to open in Excel
    html = (job.runs()[-1] / "staff" / "report.html").read_text(encoding="utf-8")
    # the same page, line endings aside (SMTP carries text with CRLF)
    assert attachments["report.html"].get_content().replace("\r\n", "\n").strip() == html.strip()
    assert job.last_run()["notified"] is True


def test_a_leaver_who_comes_back_unchanged_counts_as_missing_when_they_leave_again(tmp_path: Path,
                                                                                  sandbox: Any) -> None:
    # After a month without them, a leaver is no longer the job's (so leavers never add up to a held month);
    # back as they were, they are not sent again, and that alone must make them the job's again
    job = JobFolder(tmp_path / "back", sandbox)
    everyone = job.people(30)
    # July: the leaver is back, and person 1 promoted (an export the same byte for byte as May's would be
    # refused as May's found again)
    july = job.people(30, **{"1": {"Title": "Senior Analyst"}})
    for month, rows in [("2024-05", everyone), ("2024-06", everyone[:-1]), ("2024-07", july)]:
        job.export(month, rows)
        assert run_cli("run", str(job.job)).exit_code == 0

    job.export("2024-08", july[:-1])
    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    plan = json.loads((job.runs()[-1] / "staff" / "outcomes.jsonl").read_text().splitlines()[0])["plan"]
    assert plan["counts"] == {"new": 0, "changed": 0, "unchanged": 29, "invalid": 0, "missing": 1}
    assert [m["external_id"] for m in plan["missing"]["examples"]] == [job.ext(30)]


def test_a_held_month_is_emailed_as_held_for_review_not_as_a_failure(tmp_path: Path, sandbox: Any,
                                                                     relay: tuple[Inbox, int]) -> None:
    box, port = relay
    job = JobFolder(tmp_path / "held", sandbox, notify=notify_table(port))
    job.export("2024-05", job.people(20))
    assert run_cli("run", str(job.job)).exit_code == 0
    job.export("2024-06", job.people(12))  # 8 people gone: a broken export, not a month of leavers

    result = run_cli("run", str(job.job))

    assert result.exit_code == 5, result.stderr
    verdict = ("held for review: the staff step sent nothing, the drift guard tripped on 2 checks (see the step's "
               f"line){job.on_sandbox}; run again with --accept-drift if the file is right")
    assert f"monthly: {verdict} (exit 5: held for review" in result.stderr
    # the step's own line: the 12 people were on the platform already, which is no import ("12 of 12 rows
    # imported" beside exit 5 read as one), and why it was held, with the people missing
    [step_line] = [line for line in result.stderr.splitlines() if line.startswith("staff: ")]
    assert step_line.startswith("staff: Held for review, nothing sent: the file differs from last time more than "
                                "the drift guard allows; 12 of 12 rows unchanged since last time (staff_2024-06.csv, "
                                f"{job.on_sandbox.strip()})")
    assert step_line.endswith(
        ". Why: headcount down 40%: 20 people were accepted from this job, this file has 12 (the guard holds a drop "
        f"over 10%). 8 of the 20 people accepted before (40%) are not in this file, e.g. {job.ext(13)} Person 13, "
        f"{job.ext(14)} Person 14, {job.ext(15)} Person 15 (the guard holds over 5%).")
    message = box.messages[-1]
    # the subject names nobody: it shows on lock screens and in the relay's log; the body says who
    assert message["Subject"] == f"[hrimport] monthly: {verdict} (exit 5)"
    assert f"{job.ext(13)} Person 13" in message.get_body(("plain",)).get_content()
    assert job.last_run()["verdict"] == verdict.replace(job.on_sandbox, "")  # run.json: the verdict alone


@pytest.fixture
def smtps_inbox() -> Iterator[tuple[Inbox, int, trustme.CA]]:
    """A relay speaking implicit TLS only, with the private CA that signed its certificate."""
    ca = trustme.CA()
    controller, box, port = start_smtps(ca)
    yield box, port, ca
    controller.stop()


def test_the_email_goes_over_implicit_tls_when_the_job_says_ssl(
    tmp_path: Path, sandbox: Any, smtps_inbox: tuple[Inbox, int, trustme.CA]
) -> None:
    box, port, ca = smtps_inbox
    root = tmp_path / "smtps"
    root.mkdir()
    ca.cert_pem.write_to_path(str(root / "relay-ca.pem"))
    notify = notify_table(port, when="always") + (
        '\nssl = true\nca_file = "relay-ca.pem"\nuser = "robot"\npassword_env = "TEST_SMTP_PASSWORD"')
    job = JobFolder(root, sandbox, notify=notify)
    job.export("2024-05", job.people(2))

    result = run_cli("run", str(job.job), env={"TEST_SMTP_PASSWORD": PASSWORD})

    assert result.exit_code == 0, result.output
    [msg] = box.messages
    assert box.tls[0] in ("TLSv1.2", "TLSv1.3")  # the relay speaks only implicit TLS: login and mail inside it
    assert msg["Subject"].startswith("[hrimport] monthly: ")
    assert job.last_run()["notified"] is True
    assert PASSWORD not in result.output and PASSWORD not in result.stderr


def test_a_clean_run_sends_no_email_unless_always(tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    box, port = relay
    job = JobFolder(tmp_path / "quiet", sandbox, notify=notify_table(port))
    job.export("2024-05", job.people(3))
    assert run_cli("run", str(job.job)).exit_code == 0
    assert box.messages == []  # quiet unless something needs a person

    job.job.write_text(job.job.read_text().replace('when = "attention"', 'when = "always"'))
    assert run_cli("run", str(job.job)).exit_code == 0
    [msg] = box.messages
    assert msg["Subject"] == (f"[hrimport] monthly: no new export: the newest file matching exports/staff_*.csv "
                              f"(staff_2024-05.csv) is the one imported on {job.imported_on()}; nothing sent (exit 0)")


def test_an_email_that_cannot_be_sent_is_said_but_keeps_the_exit_code(tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "nomail", sandbox, notify=notify_table(free_port(), when="always"))
    job.export("2024-05", job.people(2))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0
    assert "Error: e-mail not sent: cannot connect to the SMTP server" in result.stderr
    assert job.last_run()["notify_error"].startswith("cannot connect")


def test_old_run_folders_beyond_the_retention_are_removed(tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "keep", sandbox, retention=2)
    job.export("2024-05", job.people(2))
    stray = job.root / "reports" / "monthly" / "notes"  # something a person put there: never removed
    stray.mkdir(parents=True)
    for _ in range(4):
        assert run_cli("run", str(job.job)).exit_code == 0
    runs = [p for p in job.runs() if p.name != "notes"]
    assert len(runs) == 2
    assert stray.is_dir()
    assert "removed the old run folder" in (runs[-1] / "run.log").read_text()


def test_a_killed_runs_folder_counts_for_the_retention_and_nothing_else_is_removed(tmp_path: Path) -> None:
    base = tmp_path / "reports" / "job"
    made = {"2024-04-01_090000": "run.log", "2024-05-01_090000": "run.json", "2024-06-01_090000": "run.log",
            "2024-07-01_090000": "run.json", "2024-03-01_090000": "notes.txt"}  # the last: a person's folder
    for name, file in made.items():
        (base / name).mkdir(parents=True)
        (base / name / file).write_text("{}")
    removed = prune_runs(tmp_path / "reports", "job", 2)
    assert sorted(p.name for p in removed) == ["2024-04-01_090000", "2024-05-01_090000"]
    assert sorted(p.name for p in base.iterdir()) == ["2024-03-01_090000", "2024-06-01_090000", "2024-07-01_090000"]


def test_prune_keeps_the_newest_even_within_one_second(tmp_path: Path) -> None:
    base = tmp_path / "reports" / "job"
    names = ["2024-05-01_090000", "2024-05-01_090000-2", "2024-05-01_090000-10", "2024-06-01_090000"]
    for name in names:
        (base / name).mkdir(parents=True)
        (base / name / "run.json").write_text("{}")
    removed = prune_runs(tmp_path / "reports", "job", 2)
    assert sorted(p.name for p in removed) == ["2024-05-01_090000", "2024-05-01_090000-2"]


# ----------------------------------------------------------------------- a month whose export never came


def test_a_month_whose_export_never_came_exits_2_and_is_emailed(tmp_path: Path, sandbox: Any,
                                                                relay: tuple[Inbox, int]) -> None:
    # The monthly cron run of 1 July: June's export never arrived, so the glob finds May's file again
    box, port = relay
    job = JobFolder(tmp_path / "late", sandbox, notify=notify_table(port), max_source_age_days=20)
    job.export("2024-05", job.people(5))
    assert run_cli("run", str(job.job)).exit_code == 0
    job.days_pass(31)
    job.sandbox.clear_requests()

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2, result.stderr
    refusal = (f"no new export: the newest file matching exports/staff_*.csv (staff_2024-05.csv) is the one "
               f"imported on {job.imported_on()}, 31 days ago, more than max_source_age_days = 20 (monthly.toml); "
               f"nothing sent: put the new export in exports/")
    lines = result.stderr.splitlines()
    assert lines[0] == f"staff: Error: {refusal}"
    assert lines[-1] == (f"monthly: staff: {refusal} (exit 2: a usage, config or input-file error (among them an "
                         f"export missing, unreadable, too old, or older than the last one imported): fix the job "
                         f"file, config or source file it names, then run again)")
    assert job.sandbox.requests() == []
    assert job.last_run()["steps"][0]["status"] == "too_old"
    # when = "attention": on-call hears of it, in the subject and the body
    [msg] = box.messages
    assert msg["Subject"] == f"[hrimport] monthly: staff: {refusal} (exit 2)"
    body = msg.get_body(("plain",)).get_content()
    assert f"- staff: Error: {refusal}" in body.splitlines()
    assert "Exit code 2: a usage, config or input-file error (among them an export missing, unreadable" in body

    # June's export arrives: the next run imports it
    job.export("2024-06", job.people(6))
    assert run_cli("run", str(job.job)).exit_code == 0
    assert job.stored() == Counter({job.ext(n): 1 for n in range(1, 7)})


def test_last_months_file_touched_again_by_a_copy_is_still_no_new_export(job: JobFolder) -> None:
    # A nightly sync copies the exports folder again: May's file gets a new modification time, but it is
    # still the file imported a month ago
    job.job.write_text(job.job.read_text().replace('report_dir = "reports"\n',
                                                   'report_dir = "reports"\nmax_source_age_days = 20\n'))
    source = job.export("2024-05", job.people(3))
    assert run_cli("run", str(job.job)).exit_code == 0
    job.days_pass(31)
    os.utime(source)  # now

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        f"staff: Error: no new export: the newest file matching exports/staff_*.csv (staff_2024-05.csv) is the "
        f"one imported on {job.imported_on()}, 31 days ago, more than max_source_age_days = 20 (monthly.toml); "
        f"nothing sent: put the new export in exports/")


def test_an_old_file_never_imported_is_refused_by_its_date_unless_its_step_lifts_the_limit(
    tmp_path: Path, sandbox: Any
) -> None:
    job = JobFolder(tmp_path / "old", sandbox, max_source_age_days=20)
    source = job.export("2024-05", job.people(3))
    forty_days_ago = time.time() - 40 * 86400
    os.utime(source, (forty_days_ago, forty_days_ago))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2
    modified = datetime.fromtimestamp(forty_days_ago).strftime("%Y-%m-%d %H:%M")
    assert result.stderr.splitlines()[0] == (
        f"staff: Error: no new export: the newest file matching exports/staff_*.csv (staff_2024-05.csv) was "
        f"modified on {modified}, 40 days ago, more than max_source_age_days = 20 (monthly.toml); nothing sent: "
        f"put the new export in exports/, or raise max_source_age_days if this file is the right one")
    assert job.stored() == Counter()

    # the step's own setting outranks the job's: false is no limit
    job.job.write_text(job.job.read_text().replace('source = "exports/staff_*.csv"',
                                                   'source = "exports/staff_*.csv"\nmax_source_age_days = false'))
    assert run_cli("run", str(job.job)).exit_code == 0
    assert job.stored() == Counter({job.ext(n): 1 for n in range(1, 4)})


def test_within_the_limit_no_new_export_stays_exit_0_without_an_email(tmp_path: Path, sandbox: Any,
                                                                     relay: tuple[Inbox, int]) -> None:
    # A daily run of a monthly export: three days after May's file came, there is simply nothing new yet
    box, port = relay
    job = JobFolder(tmp_path / "daily", sandbox, notify=notify_table(port), max_source_age_days=35)
    job.export("2024-05", job.people(3))
    assert run_cli("run", str(job.job)).exit_code == 0
    job.days_pass(3)

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        f"staff: no new export: the newest file matching exports/staff_*.csv (staff_2024-05.csv) is the one "
        f"imported on {job.imported_on()}; nothing sent (run with --full to import it again)")
    assert box.messages == []


def test_a_new_file_with_the_same_bytes_as_the_last_one_is_named_beside_it(job: JobFolder) -> None:
    # June's export came, but byte for byte it is May's: nothing in it was not imported already
    rows = job.people(3)
    job.export("2024-05", rows)
    assert run_cli("run", str(job.job)).exit_code == 0
    job.export("2024-06", rows)

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0
    assert result.stderr.splitlines()[0] == (
        f"staff: no new export: the newest file matching exports/staff_*.csv (staff_2024-06.csv) has the same "
        f"content as staff_2024-05.csv, imported on {job.imported_on()}; nothing sent (run with --full to import "
        f"it again)")


def test_a_step_without_a_new_export_beside_one_that_imported_is_named_in_the_verdict(
    tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]
) -> None:
    box, port = relay
    job = JobFolder(tmp_path / "mixed", sandbox, timeoff=True, notify=notify_table(port, when="always"))
    job.export("2024-05", job.people(3))
    job.leave("2024-05", 2)
    assert run_cli("run", str(job.job)).exit_code == 0
    job.export("2024-06", job.people(4))  # June's staff export came, June's leave export did not

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    verdict = (f"staff: everything imported{job.on_sandbox}; timeoff: no new export: the newest file matching "
               f"exports/leave_*.csv (leave_2024-05.csv) is the one imported on {job.imported_on('timeoff')}")
    assert result.stderr.splitlines()[-1].startswith(f"monthly: {verdict} (exit 0: ")
    assert box.messages[-1]["Subject"] == f"[hrimport] monthly: {verdict} (exit 0)"


# ------------------------------------------------------------------- an older export found again


def may_then_june(job: JobFolder, days_between: int = 31) -> tuple[Path, Path]:
    """May's export imported on the 1st of May, June's (person 2 promoted) on the 1st of June, ten days ago."""
    may = job.export("2024-05", job.people(5))
    assert run_cli("run", str(job.job)).exit_code == 0
    job.days_pass(days_between)
    june = job.export("2024-06", job.people(5, **{"2": {"Title": "Senior Analyst"}}))
    assert run_cli("run", str(job.job)).exit_code == 0
    job.days_pass(10)
    assert job.titles()[job.ext(2)] == "Senior Analyst"
    return may, june


def refusal_of(job: JobFolder, taken: str, may: tuple[str, str], june: tuple[str, str]) -> str:
    named = f" as {may[0]}" if taken != may[0] else ""
    return (f"the newest file matching exports/staff_*.csv ({taken}) holds the export imported on {may[1]}{named}, "
            f"older than the last one imported ({june[0]}, on {june[1]}); sending it would put its values back "
            f"over the newer ones, so nothing was sent: remove it from exports/ (if its values are meant to go "
            f"back, import it by hand first with hrimport staff import)")


def test_mays_export_touched_after_junes_import_is_refused_and_emailed(tmp_path: Path, sandbox: Any,
                                                                       relay: tuple[Inbox, int]) -> None:
    # A sync copies the exports folder again ten days after June's import: May's file is now the newest,
    # and sending it would make person 2 an Analyst again on payroll, a change too small for the drift guard
    box, port = relay
    job = JobFolder(tmp_path / "synced", sandbox, notify=notify_table(port))
    may, _ = may_then_june(job)
    os.utime(may)  # touched now: its modification time is the newest
    job.sandbox.clear_requests()

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2, result.stderr
    may_import, june_import = job.imports()
    refusal = refusal_of(job, "staff_2024-05.csv", may_import, june_import)
    lines = result.stderr.splitlines()
    assert lines[0] == f"staff: Error: {refusal}"
    assert lines[-1].startswith(f"monthly: staff: {refusal} (exit 2: a usage, config or input-file error")
    assert job.sandbox.requests() == []  # not a row sent
    assert job.titles()[job.ext(2)] == "Senior Analyst"  # payroll keeps June's values
    assert job.last_run()["steps"][0]["status"] == "older_export"
    [msg] = box.messages  # when = "attention": on-call hears of it
    assert msg["Subject"] == f"[hrimport] monthly: staff: {refusal} (exit 2)"
    assert f"- staff: Error: {refusal}" in msg.get_body(("plain",)).get_content().splitlines()

    # done as the line says: June's file is the newest again, and it is the one imported last
    may.unlink()
    again = run_cli("run", str(job.job))
    assert again.exit_code == 0, again.stderr
    assert again.stderr.splitlines()[0].startswith(
        "staff: no new export: the newest file matching exports/staff_*.csv (staff_2024-06.csv) is the one imported")


def test_full_does_not_send_an_older_export_either_whatever_its_name(job: JobFolder) -> None:
    # --full in a cron line must not send May's values over June's; last month's file dropped again under
    # this month's name holds May's export all the same
    may, _ = may_then_june(job)
    redropped = job.root / "exports" / "staff_2024-07.csv"
    redropped.write_bytes(may.read_bytes())
    os.utime(redropped, (time.time() + 60, time.time() + 60))
    job.sandbox.clear_requests()

    result = run_cli("run", str(job.job), "--full")

    assert result.exit_code == 2, result.stderr
    may_import, june_import = job.imports()
    assert result.stderr.splitlines()[0] == (
        f"staff: Error: {refusal_of(job, 'staff_2024-07.csv', may_import, june_import)}")
    assert job.sandbox.requests() == []
    assert job.titles()[job.ext(2)] == "Senior Analyst"
    # --full still imports again the file imported last, as it always did
    redropped.unlink()
    assert run_cli("run", str(job.job), "--full").exit_code == 0
    assert bulk_elements(job.sandbox) == 5


def test_an_export_with_rows_needing_attention_was_imported_all_the_same(job: JobFolder) -> None:
    # Most months some row needs attention (exit 1): May's file was still sent, and is older than June's
    may = job.export("2024-05", job.people(5, **{"4": {"Country": "Atlantis"}}))
    assert run_cli("run", str(job.job)).exit_code == 1
    job.export("2024-06", job.people(5, **{"2": {"Title": "Senior Analyst"}}))
    assert run_cli("run", str(job.job)).exit_code == 0
    os.utime(may, (time.time() + 60, time.time() + 60))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2, result.stderr
    may_import, june_import = job.imports()
    assert result.stderr.splitlines()[0] == f"staff: Error: {refusal_of(job, may.name, may_import, june_import)}"
    assert job.titles()[job.ext(2)] == "Senior Analyst"


def test_an_older_leave_export_is_refused_too(tmp_path: Path, sandbox: Any) -> None:
    # the ledger never adds a record twice, but May's file may hold records June's corrected or left out
    job = JobFolder(tmp_path / "leave", sandbox, timeoff=True)
    job.export("2024-05", job.people(3))
    may_leave = job.leave("2024-05", 2)
    assert run_cli("run", str(job.job)).exit_code == 0
    job.leave("2024-06", 3)
    assert run_cli("run", str(job.job)).exit_code == 0
    os.utime(may_leave, (time.time() + 60, time.time() + 60))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2, result.stderr
    (_, may_at), (_, june_at) = job.imports("timeoff")
    assert result.stderr.splitlines()[1] == (
        f"timeoff: Error: the newest file matching exports/leave_*.csv (leave_2024-05.csv) holds the export "
        f"imported on {may_at}, older than the last one imported (leave_2024-06.csv, on {june_at}); sending it "
        f"could add records that the newer one corrected or left out, so nothing was sent: remove it from "
        f"exports/ (if its values are meant to go back, import it by hand first with hrimport timeoff import)")


# The state.db tables of the version before every import was remembered (only each step's last one was)
STATE_BEFORE_IMPORT_HISTORY = """
CREATE TABLE staff_accepted (
    service TEXT NOT NULL, customer_id TEXT NOT NULL, external_id TEXT NOT NULL, fingerprint TEXT NOT NULL,
    accepted_at TEXT NOT NULL, name TEXT NOT NULL DEFAULT '', payload TEXT, job TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (service, customer_id, external_id));
CREATE TABLE staff_sending (
    service TEXT NOT NULL, customer_id TEXT NOT NULL, external_id TEXT NOT NULL, sent_at TEXT NOT NULL,
    PRIMARY KEY (service, customer_id, external_id));
CREATE TABLE source_files (
    job TEXT NOT NULL, step TEXT NOT NULL, sha256 TEXT NOT NULL, path TEXT NOT NULL, imported_at TEXT NOT NULL,
    PRIMARY KEY (job, step));
"""


def as_state_before_import_history(state_dir: Path) -> None:
    """Make ``state_dir``'s state.db the one the version before would have left after the same imports: its
    tables, with what it wrote in them."""
    current, old = state_dir / STATE_FILE, state_dir / "old.db"
    with closing(sqlite3.connect(old)) as db:
        db.executescript(STATE_BEFORE_IMPORT_HISTORY)
        db.execute("ATTACH DATABASE ? AS current", (str(current),))
        with db:
            for table in ("staff_accepted", "staff_sending", "source_files"):
                db.execute(f"INSERT INTO {table} SELECT * FROM current.{table}")
        db.execute("DETACH DATABASE current")
    for leftover in (state_dir / f"{STATE_FILE}-wal", state_dir / f"{STATE_FILE}-shm"):
        leftover.unlink(missing_ok=True)
    os.replace(old, current)


def test_a_state_folder_from_before_knows_its_last_import_as_an_older_export_once_a_newer_one_comes(
    job: JobFolder,
) -> None:
    _, june = may_then_june(job)
    (june_name, june_at) = job.imports()[-1]
    as_state_before_import_history(job.root / "state")

    # the upgrade: the last import the old state folder knew is still the one imported
    same = run_cli("run", str(job.job))
    assert same.exit_code == 0, same.stderr
    assert same.stderr.splitlines()[0] == (
        f"staff: no new export: the newest file matching exports/staff_*.csv (staff_2024-06.csv) is the one "
        f"imported on {june_at}; nothing sent (run with --full to import it again)")
    job.export("2024-07", job.people(5, **{"2": {"Title": "Lead Analyst"}}))
    assert run_cli("run", str(job.job)).exit_code == 0
    os.utime(june, (time.time() + 60, time.time() + 60))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2, result.stderr
    assert result.stderr.splitlines()[0].startswith(
        f"staff: Error: the newest file matching exports/staff_*.csv (staff_2024-06.csv) holds the export imported "
        f"on {june_at}, older than the last one imported (staff_2024-07.csv, on ")
    assert job.titles()[job.ext(2)] == "Lead Analyst"
    assert [name for name, _ in job.imports()] == [june_name, "staff_2024-07.csv"]


def test_a_person_importing_an_older_export_by_hand_is_told_but_not_stopped(job: JobFolder) -> None:
    # Principle 2: `hrimport staff import` is a person's decision about this very file; the plan and the
    # report say which export it holds, so the person sees that it puts older values back
    config = job.root / "staff.toml"
    config.write_text('state_dir = "state"\n' + config.read_text())  # the job's state folder
    may, _ = may_then_june(job)
    (_, may_at), (_, june_at) = job.imports()
    note = (f"Note: This file holds the export imported on {may_at} (staff_2024-05.csv; job monthly, step staff), "
            f"before the last import (staff_2024-06.csv, on {june_at}): what it changes puts that older export's "
            f"values back over newer ones (the plan shows each change).")
    reports = str(job.root / "by-hand")

    planned = run_cli("staff", "plan", str(config), str(may), "--report-dir", reports)

    assert planned.exit_code == 0, planned.output
    assert planned.stdout.splitlines()[:2] == [
        note, ("Plan: 0 new, 1 changed (job_title 1), 4 unchanged (would be sent again; hrimport run without --full "
               "skips them), 0 invalid, 0 missing; job changes 1")]

    imported = run_cli("staff", "import", str(config), str(may), "--report-dir", reports)

    assert imported.exit_code == 0, imported.output
    assert note in imported.stdout.splitlines()
    assert job.titles()[job.ext(2)] == "Analyst"  # sent, as the person asked
    [folder] = [line.removeprefix("Report folder: ") for line in imported.stdout.splitlines()
                if line.startswith("Report folder: ")]
    summary = json.loads((Path(folder) / "summary.json").read_text())
    assert note.removeprefix("Note: ") in summary["notes"]
    assert f"before the last import (staff_2024-06.csv, on {june_at})" in (Path(folder) / "report.html").read_text()


# ---------------------------------------------------------------------------------------- job file


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "needs at least one [[step]]"),
        ('[[step]]\nkind = "staff"\nconfig = "staff.toml"\n', "source must be a path"),
        ('retention = 0\n[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "a.csv"\n', "retention must be"),
        ('[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "a.csv"\nsorce = "b"\n',
         "unknown key 'sorce' (did you mean source?)"),
        ('[[step]]\nkind = "timeoff"\nconfig = "staff.toml"\nsource = "a.csv"\n',
         "has no [timeoff] section"),
        (('[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "a.csv"\n[notify]\nto = ["a@b.c"]\n'
         'from = "x@y.z"\npassword = "hunter2"\n'), "never put the password in a file"),
        (('[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "a.csv"\n[notify]\nto = ["a@b.c"]\n'
         'from = "x@y.z"\nuser = "robot"\n'), "password_env is not"),
        (('[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "a.csv"\n[notify]\nto = ["a@b.c"]\n'
         'from = "x@y.z"\nwhen = "sometimes"\n'), "when must be one of always, attention, never"),
        ('[[step]]\nkind = "staff"\nconfig = "missing.toml"\nsource = "a.csv"\n', "missing.toml does not exist"),
        ('max_source_age_days = 0\n[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "a.csv"\n',
         ("job.toml: max_source_age_days must be a whole number of days, at least 1 (e.g. 20 for a monthly "
          "export), or false for no limit")),
        ('[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "a.csv"\nmax_source_age_days = "20"\n',
         "job.toml step 1: max_source_age_days must be a whole number of days"),
        ('[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "a.csv"\nmax_source_age_days = true\n',
         "job.toml step 1: max_source_age_days must be a whole number of days"),
    ],
)
def test_job_file_mistakes_are_one_clear_config_error(tmp_path: Path, text: str, message: str) -> None:
    from hrimport.errors import ConfigError

    write_config(tmp_path / "staff.toml")
    (tmp_path / "job.toml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_job(tmp_path / "job.toml")
    assert message in str(caught.value)


def test_a_job_file_with_defaults(tmp_path: Path) -> None:
    write_config(tmp_path / "staff.toml")
    (tmp_path / "job.toml").write_text('[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "x_*.csv"\n')
    job = load_job(tmp_path / "job.toml")
    assert job.name == "job"
    assert job.retention == 12
    assert job.state_dir == tmp_path / ".hrimport"
    assert job.report_dir == tmp_path / "reports"
    assert [(s.name, s.kind) for s in job.steps] == [("staff", "staff")]
    assert job.notify is None
    assert job.steps[0].max_source_age_days is None  # any age, as before the setting existed


def test_max_source_age_days_of_the_job_holds_for_each_step_unless_the_step_says_otherwise(tmp_path: Path) -> None:
    write_config(tmp_path / "staff.toml")
    step = '[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "x_*.csv"\nname = "{}"\n{}\n'
    (tmp_path / "job.toml").write_text("max_source_age_days = 20\n" + step.format("a", "") + step.format(
        "b", "max_source_age_days = 40") + step.format("c", "max_source_age_days = false"))
    job = load_job(tmp_path / "job.toml")
    assert [(s.name, s.max_source_age_days) for s in job.steps] == [("a", 20), ("b", 40), ("c", None)]
