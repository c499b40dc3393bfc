"""Ctrl-C or SIGTERM during an import: the run stops sending, reports every row, and exits 130 or 143.

Real processes, real signals: the import runs as ``python -m hrimport`` against the sandbox fixture (slowed
by its latency fault) and gets the signal once some records are stored.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hrimport.outcomes import RunResult, read_outcomes
from tests import staff_files
from tests.child_process import reaped
from tests.test_service_lost import PEOPLE, act_mid_run, leave_rows
from tests.test_timeoff_import import add_staff, write_config, write_xlsx


def interrupt(sandbox: Any, command: list[str], stored: Callable[[], int], signum: int) -> tuple[int, str, str]:
    """Run ``command`` and send it ``signum`` once ``stored()`` counts 10 records; (exit code, out, err)."""
    code, stdout, stderr, _ = act_mid_run(sandbox, command, stored, 10, lambda process: process.send_signal(signum))
    sandbox.clear_faults()
    return code, stdout, stderr


def report_of(stdout: str) -> tuple[Path, RunResult]:
    folder = Path(stdout.split("Report folder: ")[1].splitlines()[0])
    return folder, read_outcomes(folder / "outcomes.jsonl")


def test_ctrl_c_stops_a_time_off_import_with_a_report_and_exit_130(tmp_path: Path, sandbox: Any) -> None:
    add_staff(sandbox, [(p, "SG") for p in PEOPLE])
    rows = leave_rows()
    source = write_xlsx(tmp_path / "leave.xlsx", rows)
    command = [sys.executable, "-m", "hrimport", "timeoff", "import", str(write_config(tmp_path)), str(source),
               "--report-dir", str(tmp_path / "reports")]
    code, stdout, stderr = interrupt(sandbox, command, lambda: len(sandbox.time_off(99)), signal.SIGINT)

    assert code == 130, stderr
    assert "Traceback" not in stderr
    _, run = report_of(stdout)
    assert len(run.rows) == len(rows)
    outcomes = Counter(o.outcome.value for o in run.rows)
    assert set(outcomes) == {"added", "not_sent"}
    # the requests in flight finished and were reported: what the service holds is exactly what was added
    assert len(sandbox.time_off(99)) == outcomes["added"]
    assert "the run was stopped (SIGINT) before sending every row" in stdout
    unsent = next(o for o in run.rows if o.outcome.value == "not_sent")
    assert unsent.message == f"Row {unsent.row}: not sent: the run was stopped (SIGINT); run the import again."

    env = {**os.environ, "HRIMPORT_BASE_URL": sandbox.base_url, "HRIMPORT_TOKEN": "demo-customer-99"}
    again = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert Counter(r["notes"] for r in sandbox.time_off(99)) == Counter(str(r[7]) for r in rows)


def test_sigterm_stops_a_staff_import_with_a_report_and_exit_143(tmp_path: Path, sandbox: Any) -> None:
    people = [staff_files.person(n) for n in range(1, 201)]
    data = staff_files.write_csv(tmp_path / "staff.csv", people)
    command = [sys.executable, "-m", "hrimport", "staff", "import",
               str(staff_files.write_config(tmp_path / "staff.toml")), str(data), "--batch-size", "5",
               "--report-dir", str(tmp_path / "reports")]
    code, stdout, stderr = interrupt(sandbox, command, lambda: len(sandbox.staff(99)), signal.SIGTERM)

    assert code == 143, stderr
    folder, run = report_of(stdout)
    assert (folder / "report.html").exists() and (folder / "report.xlsx").exists()
    assert len(run.rows) == len(people)
    outcomes = Counter(o.outcome.value for o in run.rows)
    assert set(outcomes) == {"added", "not_sent"}
    assert len(sandbox.staff(99)) == outcomes["added"]


def test_a_run_killed_outright_leaves_what_the_service_did_with_every_row_sent(tmp_path: Path, sandbox: Any) -> None:
    people = [staff_files.person(n) for n in range(1, 201)]
    data = staff_files.write_csv(tmp_path / "staff.csv", people)
    config = staff_files.write_config(tmp_path / "staff.toml")
    command = [sys.executable, "-m", "hrimport", "staff", "import", str(config), str(data), "--batch-size", "5",
               "--report-dir", str(tmp_path / "reports")]
    code, _, _, _ = act_mid_run(sandbox, command, lambda: len(sandbox.staff(99)), 20, lambda p: p.kill())
    sandbox.clear_faults()

    assert code == -signal.SIGKILL
    [journal] = (tmp_path / "reports").rglob("outcomes.jsonl")
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["record"] == "journal" and lines[0]["source"] == str(data)
    rows = {line["external_id"]: line["outcome"] for line in lines[1:]}
    stored = {s["customer_system_id"] for s in sandbox.staff(99)}
    # every row the journal says was added is stored; at most the batch in flight is stored but not recorded
    assert set(rows.values()) == {"added"} and set(rows) <= stored
    assert len(stored) - len(rows) <= 5
    assert oct(journal.stat().st_mode & 0o777) == "0o600"

    # `hrimport report` of a journal says what it is in one line
    shown = subprocess.run([sys.executable, "-m", "hrimport", "report", str(journal)], capture_output=True,
                           text=True, check=False, timeout=60)
    assert shown.returncode == 2
    assert shown.stderr.strip().endswith(
        f"is the journal of a run stopped before it finished: {len(rows)} rows sent were recorded as the "
        "service answered, and no report can be made of it; run the import again: nothing is sent twice)")

    # a kill as a line was appended leaves it cut: the journal is still told as one, its whole lines counted
    whole = journal.read_bytes()
    cut = tmp_path / "cut" / "outcomes.jsonl"
    cut.parent.mkdir()
    cut.write_bytes(whole[: whole.rstrip(b"\n").rfind(b"\n") + 30])
    shown = subprocess.run([sys.executable, "-m", "hrimport", "report", str(cut)], capture_output=True,
                           text=True, check=False, timeout=60)
    assert shown.returncode == 2
    assert shown.stderr.strip().endswith(
        f"is the journal of a run stopped before it finished (its last line cut): {len(rows) - 1} rows sent were "
        "recorded as the service answered, and no report can be made of it; run the import again: nothing is sent "
        "twice)")


def alive_in_group(group: int) -> list[str]:
    """The command lines of the live processes (zombies aside) in process group ``group``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # it ended meanwhile
            continue
        if state != "Z" and int(pgrp) == group:
            found.append(command)
    return found


def test_a_run_killed_outright_while_another_process_writes_to_fix_leaves_no_process_behind(tmp_path: Path) -> None:
    # every row to fix: 5,000 x 17 cells, past PARALLEL_FIX_CELLS, so to_fix is written by a second process
    people = [staff_files.person(n, Email=f"person{n}-at-acme") for n in range(1, 5001)]
    data = staff_files.write_csv(tmp_path / "staff.csv", people)
    config = staff_files.write_config(tmp_path / "staff.toml", email_check="strict")  # every address refused
    command = [sys.executable, "-m", "hrimport", "staff", "import", str(config), str(data), "--dry-run",
               "--report-dir", str(tmp_path / "reports")]
    crons_log = open(tmp_path / "cron.log", "w+b")  # noqa: SIM115 (closed below, once every process has gone)
    run = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=crons_log)
    try:
        deadline = time.monotonic() + 60
        while not any("hrimport.report.fix_process" in line for line in alive_in_group(run.pid)):
            assert run.poll() is None, "the run ended before its second process started"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        run.kill()  # the run alone, as `kill -9 PID` or the OOM killer (which picks the run: it holds the rows)
        run.wait()
        deadline = time.monotonic() + 10
        while alive_in_group(run.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert alive_in_group(run.pid) == []
        # and nothing in cron's log from what was left: multiprocessing's "There appear to be 5 leaked
        # semaphore objects to clean up at shutdown" once came after the run was gone
        crons_log.seek(0)
        assert crons_log.read() == b""
    finally:
        crons_log.close()
        try:
            os.killpg(run.pid, signal.SIGKILL)  # whatever the run left, so that no test leaves it either
        except ProcessLookupError:
            pass


def signalled_once_written(command: list[str], name: str, folder: Path, signum: int = signal.SIGINT,
                           **env: str) -> tuple[int, str]:
    """Run ``command`` in a process group of its own and send ``signum`` to the whole group (as a terminal sends
    Ctrl-C, as systemd stops a unit) once a file called ``name`` appears under ``folder``; (exit code, stderr)."""
    run = subprocess.Popen(command, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, **env})
    try:
        deadline = time.monotonic() + 60
        while not any(folder.rglob(name)):
            assert run.poll() is None, "the command ended before the moment to press Ctrl-C"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.killpg(run.pid, signum)
        _, stderr = run.communicate(timeout=60)
        return run.returncode, stderr
    finally:
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


CTRL_C_LINE = ("Error: stopped by Ctrl-C (SIGINT) before the command finished; run it again when ready "
               "(nothing is imported twice)")


def test_ctrl_c_while_a_dry_run_writes_its_report_is_exit_130_in_one_line(tmp_path: Path) -> None:
    people = [staff_files.person(n, Email=f"person{n}-at-acme") for n in range(1, 5001)]  # a report that takes a while
    data = staff_files.write_csv(tmp_path / "staff.csv", people)
    config = staff_files.write_config(tmp_path / "staff.toml", email_check="strict")  # every address refused
    command = [sys.executable, "-m", "hrimport", "staff", "import", str(config), str(data), "--dry-run",
               "--report-dir", str(tmp_path / "reports")]

    code, stderr = signalled_once_written(command, "report.html", tmp_path / "reports")

    # not click's "Aborted!" and exit 1, which says the run finished with rows for HR to fix
    assert code == 130, stderr
    assert stderr.strip().splitlines()[-1] == CTRL_C_LINE
    assert "Traceback" not in stderr and "Aborted" not in stderr


def test_ctrl_c_while_a_job_writes_a_steps_report_is_exit_130_in_one_line(tmp_path: Path, sandbox: Any) -> None:
    people = [staff_files.person(n, Email=f"person{n}-at-acme") for n in range(1, 5001)]
    staff_files.write_csv(tmp_path / "staff.csv", people)
    staff_files.write_config(tmp_path / "staff.toml", base_url=sandbox.base_url, email_check="strict")
    job = tmp_path / "monthly.toml"
    job.write_text('name = "monthly"\nstate_dir = "state"\nreport_dir = "reports"\n\n'
                   '[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "staff.csv"\n', encoding="utf-8")

    code, stderr = signalled_once_written([sys.executable, "-m", "hrimport", "run", str(job)], "report.html",
                                       tmp_path / "reports", HRIMPORT_TOKEN="demo-customer-99")

    assert code == 130, stderr
    assert stderr.strip().splitlines()[-1] == CTRL_C_LINE
    assert "Traceback" not in stderr and "Aborted" not in stderr
    [log] = (tmp_path / "reports").rglob("run.log")
    assert "the run was stopped by Ctrl-C (SIGINT)" in log.read_text(encoding="utf-8")
    assert "Traceback" not in log.read_text(encoding="utf-8")


def test_sigterm_while_a_dry_run_writes_its_report_is_exit_143_in_one_line(tmp_path: Path) -> None:
    """systemd stopping a unit, a container stopped: the same as Ctrl-C, with SIGTERM's exit code (it was the
    signal's default: the process gone without a word in the middle of cron's log)."""
    people = [staff_files.person(n, Email=f"person{n}-at-acme") for n in range(1, 5001)]
    data = staff_files.write_csv(tmp_path / "staff.csv", people)
    config = staff_files.write_config(tmp_path / "staff.toml", email_check="strict")  # every address refused
    command = [sys.executable, "-m", "hrimport", "staff", "import", str(config), str(data), "--dry-run",
               "--report-dir", str(tmp_path / "reports")]

    code, stderr = signalled_once_written(command, "report.html", tmp_path / "reports", signal.SIGTERM)

    assert code == 143, stderr
    assert stderr.strip().splitlines()[-1] == ("Error: stopped by SIGTERM before the command finished; run it "
                                               "again when ready (nothing is imported twice)")
    assert "Traceback" not in stderr


def test_sigterm_once_every_row_was_sent_says_so_not_rows_left_to_send(tmp_path: Path, sandbox: Any) -> None:
    from tests.test_run_job import TIME_OFF, JobFolder, hrimport, wait_for

    job = JobFolder(tmp_path / "job", sandbox, timeoff=True)
    job.export("2024-05", job.people(20))
    job.leave("2024-05", 20)
    # the last record is stored, then its answer held back: SIGTERM lands while it is in flight, all rows sent
    sandbox.set_faults(rules=[{"path": TIME_OFF, "after": True, "delay": 2, "skip": 19, "count": 1}])
    run = hrimport("run", str(job.job))
    with reaped(run):
        wait_for(lambda: len(job.time_off()) == 20, timeout=60, what="every record stored")
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=60)

    assert run.returncode == 143, err
    lines = err.splitlines()
    assert lines[1].startswith("timeoff: 20 of 20 rows imported; the run was stopped (SIGTERM) after every row "
                               "to send was sent (leave_2024-05.csv"), err
    assert lines[-1].startswith(f"monthly: stopped by SIGTERM in the timeoff step after every row to send was sent "
                                f"{job.on_sandbox.strip()}; run again to finish the run (nothing is imported twice)")
    assert "not sent" not in err and "need attention" not in err
