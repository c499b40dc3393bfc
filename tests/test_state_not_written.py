"""A state folder, or a job's report folder, whose disk fills up mid-run: the run says so in one line each (exit
6, never a traceback), and the next run, once there is room, stores every row exactly once.

The disk is real: a 4 MB tmpfs mounted on the job's state folder in a mount namespace of its own (``unshare``,
which needs root or user namespaces; the test is skipped where neither is allowed). A process holds the
namespace; each ``hrimport run`` enters it (``nsenter``), and the test reaches the tmpfs through the holder's
``/proc/PID/root``. The run is stopped (SIGSTOP) once its first batch reached the sandbox, the tmpfs filled, and
the run let go on (SIGCONT): the next write of the state meets a full disk, at a moment the test chose.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hrimport.jobs import EXIT_MEANINGS
from hrimport.outcomes import read_outcomes
from tests.child_process import reaped
from tests.mail_relay import Inbox, running_relay
from tests.test_run_job import BULK, TOKEN, JobFolder, notify_table, wait_for


def _namespaces_allowed() -> bool:
    if not (shutil.which("unshare") and shutil.which("nsenter")):
        return False
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "tmpfs", "/mnt"],
                           check=False, capture_output=True)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _namespaces_allowed(), reason="needs unshare -m and mount (root)")


class SmallDisk:
    """A 4 MB tmpfs on ``folder`` (or as ``options`` say), seen only by the processes started with ``run``."""

    def __init__(self, folder: Path, options: str = "size=4m") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.holder = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c",
             f"mount -t tmpfs -o {options},mode=0700 tmpfs '{folder}' && echo mounted && exec sleep 600"],
            stdout=subprocess.PIPE, text=True)
        assert self.holder.stdout is not None and self.holder.stdout.readline() == "mounted\n"

    def path(self, name: str) -> Path:
        """``name`` in the tmpfs, as the test process reaches it."""
        return Path(f"/proc/{self.holder.pid}/root") / self.folder.relative_to("/") / name

    def fill(self) -> None:
        fd = os.open(self.path("filler"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 65536)
        except OSError:
            pass  # full
        finally:
            os.close(fd)

    def free(self) -> None:
        self.path("filler").unlink()

    def run(self, *args: str) -> subprocess.Popen[str]:
        """``hrimport ARGS`` inside the namespace, as cron starts it."""
        return subprocess.Popen(["nsenter", "-t", str(self.holder.pid), "-m", sys.executable, "-m", "hrimport", *args],
                                env={**os.environ, "HRIMPORT_TOKEN": TOKEN}, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def close(self) -> None:
        self.holder.kill()
        self.holder.communicate()


@pytest.fixture
def job(tmp_path: Path, sandbox: Any, request: pytest.FixtureRequest) -> Iterator[tuple[JobFolder, SmallDisk]]:
    """The job; its state folder on the small disk, or the folder its parametrization names (``reports``)."""
    job = JobFolder(tmp_path / "job", sandbox, batch_size=10, timeoff=True)
    job.export("2024-05", job.people(60))
    job.leave("2024-05", 40)
    disk = SmallDisk(job.root / getattr(request, "param", "state"))
    try:
        yield job, disk
    finally:
        disk.close()


def fill_after_the_first_batch(run: subprocess.Popen[str], disk: SmallDisk, sandbox: Any) -> str:
    """Stop ``run`` once its first staff batch reached the sandbox, fill the disk, let it go on; its stderr."""
    with reaped(run):
        wait_for(lambda: any(r["path"].endswith(BULK) for r in sandbox.requests()), timeout=60,
                 what="the first staff batch")
        run.send_signal(signal.SIGSTOP)
        disk.fill()
        run.send_signal(signal.SIGCONT)
        _, err = run.communicate(timeout=120)
    return err


def test_a_state_folder_filling_up_mid_run_stops_the_sending_in_one_line_and_the_next_run_loses_and_doubles_nothing(
    job: tuple[JobFolder, SmallDisk], sandbox: Any
) -> None:
    folder, disk = job
    sandbox.set_faults(latency=0.1)
    run = disk.run("run", str(folder.job))
    err = fill_after_the_first_batch(run, disk, sandbox)
    sandbox.clear_faults()

    assert "Traceback" not in err
    assert run.returncode == 6, err  # a full disk to see to, never "rows need attention" (1)
    state_db = folder.root / "state" / "state.db"
    assert err.splitlines()[0] == (
        f"staff: Error: the state database {state_db} could not be written: database or disk is full; free space "
        "there (or fix the folder) and run again: the rows sent so far are in the run's outcomes.jsonl, and "
        "nothing is imported twice")
    assert err.splitlines()[1] == "timeoff: not run: the state folder could not be written in an earlier step"
    assert err.splitlines()[-1].startswith(
        f"monthly: the staff step stopped sending; the state database {state_db} could not be written: database or "
        "disk is full; free space there")
    assert 0 < sum(folder.stored().values()) < 60  # really stopped half way
    # the step's journal (its report folder is on another disk) ends saying why, for whoever reads the folder
    # without run.json (whose step line the history shows) or renders it: `hrimport report` says why too
    [journal] = (folder.root / "reports" / "monthly").glob("*/staff/outcomes.jsonl")
    *lines, last = [json.loads(line) for line in journal.read_text().splitlines()]
    answered = sum(1 for line in lines if line["record"] == "row")
    why = (f"the disk holding hrimport's state folder {state_db.parent} is full, so the run stopped sending (a row "
           "it cannot remember as sent would be sent twice)")
    next_step = ("free space on that disk (delete files nobody needs there, or ask IT for more room), then run the "
                 "import again: the rows not sent are sent then, and nothing is sent twice")
    assert last == {"record": "stopped", "why": why, "next": next_step}
    rendered = subprocess.run([sys.executable, "-m", "hrimport", "report", str(journal)], capture_output=True,
                              text=True, check=False, timeout=60)
    assert rendered.returncode == 2
    assert (f"it is the journal of a run stopped before it finished ({why}): {answered:,} rows sent were recorded as "
            "the service answered") in rendered.stderr

    disk.free()
    again = disk.run("run", str(folder.job))
    _, err = again.communicate(timeout=120)

    assert again.returncode == 0, err
    assert folder.stored() == Counter({folder.ext(n): 1 for n in range(1, 61)})  # each person once
    assert folder.titles() == {p["Employee ID"]: p["Title"] for p in folder.people(60)}  # with the file's values
    assert folder.time_off() == Counter({(folder.ext(n), "2024-03-04"): 1 for n in range(1, 41)})  # each once
    staff, leave = (s["counts"] for s in folder.last_run()["steps"])
    assert sum(staff.values()) == 60 and sum(leave.values()) == 40 and leave["added"] == 40


@pytest.mark.parametrize("job", ["reports"], indirect=True)
def test_a_report_folder_filling_up_mid_run_is_one_line_per_file_not_written_and_exit_6(
    job: tuple[JobFolder, SmallDisk], sandbox: Any
) -> None:
    folder, disk = job
    sandbox.set_faults(latency=0.1)
    run = disk.run("run", str(folder.job))
    err = fill_after_the_first_batch(run, disk, sandbox)
    sandbox.clear_faults()

    assert "Traceback" not in err and "Logging error" not in err  # run.log ends quietly
    assert run.returncode == 6, err  # not 1, "rows need attention"
    [seen] = [p for p in disk.path("monthly").iterdir() if p.is_dir()]  # the report folder is on the small disk, seen through the holder
    run_folder = folder.root / "reports" / "monthly" / seen.name  # as the run names it
    lines = err.splitlines()
    assert lines[0].startswith(f"staff: Error: the report could not be written to {run_folder / 'staff'}: No space "
                               "left on device. 60 of 60 rows imported.")
    assert lines[1].startswith(f"timeoff: Error: the report could not be written to {run_folder / 'timeoff'}: No "
                               "space left on device. 40 of 40 rows imported.")
    assert (f"Error: the run's summary could not be written to {run_folder}: No space left on device; free space "
            "there (the steps' lines say what each sent)") in lines
    assert lines[-1].startswith("monthly: sent, but the staff step's report was not written: ")
    assert sorted(p.name for p in seen.iterdir() if p.name.startswith("run.json")) == []  # no cut run.json.partial

    disk.free()
    again = disk.run("run", str(folder.job))
    _, err = again.communicate(timeout=120)

    assert again.returncode == 0, err
    assert folder.stored() == Counter({folder.ext(n): 1 for n in range(1, 61)})
    assert folder.time_off() == Counter({(folder.ext(n), "2024-03-04"): 1 for n in range(1, 41)})
    last = max(p for p in disk.path("monthly").iterdir() if p.is_dir())
    staff, leave = (s["counts"] for s in json.loads((last / "run.json").read_text())["steps"])
    assert staff["unchanged"] == 60 and leave["already_imported"] == 40  # remembered, though not reported


@pytest.mark.parametrize("job", ["reports"], indirect=True)
def test_the_next_run_writes_a_report_its_full_disk_kept_where_it_belongs_and_says_so(
    job: tuple[JobFolder, SmallDisk], sandbox: Any, relay: tuple[Inbox, int]
) -> None:
    """A cron story: the report folder's disk fills up after the rows were sent (exit 6), the run's outcomes are kept
    in the state folder. Someone frees space; nobody types a command. The next run writes each step's report into
    the folder of the run that sent the rows, removes the kept files, and says so on stderr, in its e-mail and in
    run.json; `hrimport runs` shows the first run's reports, and its rows are not told again as a stopped run's."""
    folder, disk = job
    box, port = relay
    sandbox.set_faults(latency=0.1)
    first = disk.run("run", str(folder.job))
    err = fill_after_the_first_batch(first, disk, sandbox)
    sandbox.clear_faults()
    assert first.returncode == 6, err
    [seen] = [p for p in disk.path("monthly").iterdir() if p.is_dir()]
    run_folder = folder.root / "reports" / "monthly" / seen.name  # as the runs name it
    kept = sorted((folder.root / "state" / "unreported").iterdir())  # named after the import's job, and its start
    assert [re.sub(r"\d", "0", p.name) for p in kept] == ["leave-0000-00-00_000000.jsonl",
                                                            "test-staff-0000-00-00_000000.jsonl"]

    disk.free()
    folder.job.write_text(folder.job.read_text() + notify_table(port) + "\n")  # when = "attention"
    again = disk.run("run", str(folder.job))
    _, err = again.communicate(timeout=120)

    assert again.returncode == 0, err  # the same exports, every row already on the platform
    started = datetime.strptime(seen.name, "%Y-%m-%d_%H%M%S").strftime("%Y-%m-%d %H:%M")  # the run's, not a step's
    step_of = {"leave": "timeoff", "test-staff": "staff"}  # each kept file's import job, and its step
    said = [f"the report of the run of {started}, kept when its disk was full, is now written: "
            f"{run_folder / step_of[p.stem[:-18]]}"
            for p in sorted(kept, key=lambda p: (p.stem[-17:], p.name))]  # oldest first, as every run names them
    assert [line for line in err.splitlines() if "kept when its disk was full" in line] == [
        f"hrimport: {line}" for line in said]
    assert not any((folder.root / "state" / "unreported").iterdir())  # each removed once its report was whole
    staff = read_outcomes(seen / "staff" / "outcomes.jsonl")
    assert [(o.external_id, o.outcome.value) for o in staff.rows] == [(folder.ext(n), "added") for n in range(1, 61)]
    leave = read_outcomes(seen / "timeoff" / "outcomes.jsonl")
    assert [(o.external_id, o.outcome.value) for o in leave.rows] == [(folder.ext(n), "added") for n in range(1, 41)]
    for step in ("staff", "timeoff"):
        assert {"report.html", "report.xlsx", "summary.json"} <= {p.name for p in (seen / step).iterdir()}
    # the e-mail (due under "attention" though the run is clean: HR never had those reports) says it, with them
    [mail] = box.messages
    body = str(mail.get_body(("plain",)).get_content()).replace("\r\n", "\n")  # type: ignore[union-attr]
    for line in said:
        assert f"\n\nNote: {line}\n" in body
    attached = {part.get_filename() for part in mail.iter_attachments()}
    assert {f"{seen.name}-staff-report.html", f"{seen.name}-timeoff-report.html"} <= attached
    last = max(p for p in disk.path("monthly").iterdir() if p.is_dir())
    written = json.loads((last / "run.json").read_text())
    assert [r["said"] for r in written["late_reports"]] == said and written["unreported"] == []
    # the rows the first run sent are its report's: this run finds them unchanged, told as no stopped run's
    staff_counts, leave_counts = (s["counts"] for s in written["steps"])
    assert staff_counts["unchanged"] == 60 and leave_counts["already_imported"] == 40
    runs = disk.run("runs", str(folder.root / "reports" / "monthly"), "--json")
    out, _ = runs.communicate(timeout=60)
    lines = [line for line in json.loads(out)["runs"] if line["run"] == seen.name]
    assert [(line["step"], line["imported"], line["report"]) for line in lines] == [
        ("staff", 60, f"{seen.name}/staff/report.html"), ("timeoff", 40, f"{seen.name}/timeoff/report.html")]

    quiet = disk.run("run", str(folder.job))  # said once: nothing kept any more
    _, err = quiet.communicate(timeout=120)
    assert quiet.returncode == 0 and "kept" not in err, err


class FillingInbox(Inbox):
    """A relay that takes the run's e-mail as the disk of the run's report folder fills up: the run's first
    run.json (the e-mail due) is written, the e-mail goes, and run.json cannot be written again."""

    def __init__(self, disk: SmallDisk) -> None:
        super().__init__()
        self.disk = disk

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.disk.fill()
        return await super().handle_DATA(server, session, envelope)


def test_a_run_json_not_written_after_the_email_went_keeps_the_verdict_and_the_next_run_says_what_it_knows(
    tmp_path: Path, sandbox: Any
) -> None:
    folder = JobFolder(tmp_path / "job", sandbox)
    folder.export("2024-05", folder.people(2, **{"2": {"Country": "Atlantis"}}))  # one row needs attention
    disk = SmallDisk(folder.root / "reports")
    try:
        with running_relay(FillingInbox(disk)) as (box, port):
            folder.job.write_text(folder.job.read_text() + notify_table(port, when="always") + "\n")
            first = disk.run("run", str(folder.job))
            _, err = first.communicate(timeout=120)
        [seen] = [p for p in disk.path("monthly").iterdir() if p.is_dir()]
        run_folder = folder.root / "reports" / "monthly" / seen.name  # as the run names it

        # the e-mail went, with the verdict; then run.json could not be written: exit 6, and the last line still
        # says what happened, the full disk after it, on one line
        assert "Traceback" not in err
        assert first.returncode == 6, err
        [mail] = box.messages
        assert mail["Subject"] == f"[hrimport] monthly: 1 row needs attention{folder.on_sandbox} (exit 1)"
        not_written = (f"the run's summary could not be written to {run_folder} after its e-mail: No space left on "
                       "device; free space there (its run.json still says the e-mail was due: the next run will "
                       "say this run may not have sent it)")
        lines = err.splitlines()
        assert f"Error: {not_written}" in lines
        assert lines[-1] == f"monthly: 1 row needs attention{folder.on_sandbox}; {not_written} (exit 6: {EXIT_MEANINGS[6]})"
        written = json.loads((seen / "run.json").read_text())  # the first one, written before the e-mail
        assert (written["email_pending"], written["verdict"], written["exit_code"]) == (
            True, "1 row needs attention", 1)

        # the next run cannot know whether that e-mail went: it says so, and what that run's verdict was
        disk.free()
        with running_relay() as (box, port):
            folder.job.write_text(folder.job.read_text().replace("port = ", f"port = {port}\n# was ", 1))
            again = disk.run("run", str(folder.job))
            _, err = again.communicate(timeout=120)
    finally:
        disk.close()

    assert again.returncode == 1, err  # the row still needs attention: the file is imported again
    started = datetime.strptime(seen.name, "%Y-%m-%d_%H%M%S").strftime("%Y-%m-%d %H:%M")
    said = (f"the run started {started} finished its steps (1 row needs attention, exit 1) but may not have sent "
            "its e-mail (killed while sending it, or its run.json could not be written after it)")
    assert f"hrimport: {said}: {run_folder}" in err.splitlines()
    assert "sent no e-mail" not in err
    [mail] = box.messages
    body = str(mail.get_body(("plain",)).get_content()).replace("\r\n", "\n")  # type: ignore[union-attr]
    assert f"\n\nNote: {said}. Its folder: {run_folder}\n" in body


def test_a_month_with_no_new_export_whose_run_json_meets_a_full_disk_does_not_say_rows_were_sent(
    tmp_path: Path, sandbox: Any
) -> None:
    folder = JobFolder(tmp_path / "job", sandbox)
    folder.export("2024-05", folder.people(3))
    disk = SmallDisk(folder.root / "reports")
    try:
        first = disk.run("run", str(folder.job))
        _, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        disk.fill()  # June: the same export, and the report folder's disk full

        again = disk.run("run", str(folder.job))
        _, err = again.communicate(timeout=120)
    finally:
        disk.close()

    assert again.returncode == 6, err  # run.json not written
    last = err.splitlines()[-1]
    assert last.startswith("monthly: no new export: ") and "nothing sent;" in last
    assert f"(exit 6: {EXIT_MEANINGS[6]})" in last
    assert "the rows were sent" not in last  # nothing was


def test_a_run_whose_log_cannot_be_created_is_one_line_mailed_and_leaves_no_empty_run_folder(
    tmp_path: Path, sandbox: Any
) -> None:
    # the report folder's disk has room for the run's folder and no more (a file system out of inodes: the
    # tmpfs's root, the job's folder and the run's folder are its three)
    folder = JobFolder(tmp_path / "job", sandbox)
    folder.export("2024-05", folder.people(3))
    disk = SmallDisk(folder.root / "reports", "size=4m,nr_inodes=3")
    try:
        with running_relay() as (box, port):
            folder.job.write_text(folder.job.read_text() + notify_table(port) + "\n")
            run = disk.run("run", str(folder.job))
            _, err = run.communicate(timeout=120)
        assert [p.name for p in disk.path("monthly").iterdir()] == []  # no run folder without a log
    finally:
        disk.close()

    assert "Traceback" not in err
    assert run.returncode == 2, err
    log = folder.root / "reports" / "monthly"
    not_made = (f"cannot create the run's log {log}/{{}}/run.log: No space left on device; free space there, or set "
                "report_dir in monthly.toml to a folder hrimport may write")
    [line] = [line for line in err.splitlines() if line.startswith("Error: ")]
    assert re.fullmatch(re.escape(f"Error: {not_made}").replace(re.escape("{}"), r"[\d_-]+"), line), line
    [mail] = box.messages
    assert mail["Subject"].startswith("[hrimport] monthly: not started: cannot create the run's log ")
    assert folder.stored() == Counter()  # nothing was sent


def test_a_report_folder_full_as_the_report_is_written_ends_the_journal_saying_which_disk_and_how_to_write_it(
    tmp_path: Path, sandbox: Any
) -> None:
    """A staff import's rows are sent; its report, bigger than the room left on the report folder's disk (300 rows
    to fix, each holding a long value), cannot be written (exit 6), and its outcomes are kept in the state folder.
    The journal, small, is still whole: it ends saying which disk is full and the command that writes the report,
    and `hrimport runs` says so, where it said "stopped before it finished (or is still sending)"."""
    folder = JobFolder(tmp_path / "job", sandbox)
    export = folder.export("2024-05", [*folder.people(2), *[
        {**row, "Country": "Atlantis " + "x" * 600} for row in folder.people(302)[2:]]])
    reports = folder.root / "reports"
    disk = SmallDisk(reports, "size=256k")
    try:
        run = disk.run("staff", "import", str(folder.root / "staff.toml"), str(export), "--report-dir", str(reports))
        _, err = run.communicate(timeout=120)

        assert run.returncode == 6, err
        [seen] = [p for p in disk.path("test-staff").iterdir() if p.is_dir()]
        report_folder = reports / "test-staff" / seen.name  # as the run names it
        [kept] = (folder.root / ".hrimport" / "unreported").iterdir()
        assert err.startswith(f"Error: the report could not be written to {report_folder}: No space left on device. "
                              "2 of 302 rows imported; 300 need attention.")
        *lines, last = [json.loads(line) for line in (seen / "outcomes.jsonl").read_text().splitlines()]
        assert [line["record"] for line in lines] == ["journal", "row", "row"]
        why = (f"the disk holding the report folder {report_folder} is full, so the report could not be written "
               "after the rows were sent")
        next_step = ("free space on that disk (delete files nobody needs there, or ask IT for more room), then write "
                     f"the report with: hrimport report {kept} --output {report_folder} (the run's outcomes are kept "
                     "in that file)")
        assert last == {"record": "stopped", "why": why, "next": next_step}
        runs = disk.run("runs", str(reports / "test-staff"), "--json")
        out, err = runs.communicate(timeout=60)
        [line] = json.loads(out)["runs"]
        assert line["problem"] == (f"no report: {why}; the 2 rows the service answered are in its journal, "
                                   f"outcomes.jsonl; {next_step}")
    finally:
        disk.close()
