"""An error nobody foresaw (a bug of ours, a library's error never met) ends a command in one line and exit 70.

The story: the monthly run crashes on a bug. Python's traceback would exit 1, "some rows need attention", which
cron's wrapper and the README's systemd unit (``SuccessExitStatus=1``) take for a finished month; the run would
write no run.json, send no e-mail, and the next run would tell it as a run killed. Now the person at the terminal
reads one line saying it is a bug and how to get the traceback (``--debug``), and whoever is on call gets the
e-mail, with what was sent before it.

A bug cannot be caused for real: each test makes one function of ours raise (``monkeypatch``), said where it does.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, NoReturn

import pytest
from click.testing import CliRunner, Result

from hrimport import report as report_package
from hrimport.cli import main
from hrimport.errors import ConfigError
from hrimport.imports import timeoff as timeoff_import
from hrimport.interrupts import Terminated
from hrimport.jobs import EXIT_MEANINGS
from hrimport.outcomes import read_outcomes
from hrimport.state.store import StateStore
from tests.mail_relay import Inbox
from tests.staff_files import person, write_config, write_csv
from tests.test_run_email import body_of
from tests.test_run_job import JobFolder, notify_table, run_cli
from tests.test_timeoff_import import HEADER as LEAVE_HEADER
from tests.test_timeoff_import import add_staff
from tests.test_timeoff_import import write_config as write_leave_config

TOKEN = "demo-customer-99"
# what a library's exception might say: the request it was making, token and all
BUG = f"unsupported operand type(s) for +: 'int' and 'str' (Authorization: Bearer {TOKEN})"
SAID = ("hrimport stopped on an unexpected error (TypeError: unsupported operand type(s) for +: 'int' and 'str' "
        "(Authorization: Bearer <hidden>))")


def a_bug(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(BUG)


def hrimport(*args: str, base_url: str = "") -> Result:
    return CliRunner().invoke(main, list(args), env={"HRIMPORT_TOKEN": TOKEN, "HRIMPORT_BASE_URL": base_url},
                              catch_exceptions=False)


@pytest.fixture
def staff_import(tmp_path: Path, sandbox: Any) -> tuple[list[str], Any]:
    """``staff import`` of two people (ids unique to the test) to the served sandbox, and how to count them there."""
    prefix = uuid.uuid4().hex[:4]
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    data = write_csv(tmp_path / "staff.csv", [person(n, **{"Employee ID": f"{prefix}{n}"}) for n in (1, 2)])

    def stored() -> Counter[str]:
        return Counter(s["customer_system_id"] for s in sandbox.staff(99)
                       if str(s["customer_system_id"]).startswith(prefix))

    return ["staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports")], stored


# ------------------------------------------------------------------------------------------ single commands


def test_a_bug_in_a_staff_import_is_one_line_and_exit_70_never_a_traceback_nor_the_token(
        staff_import: tuple[list[str], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    args, stored = staff_import
    monkeypatch.setattr(report_package, "write_report", a_bug)  # the bug: writing the report, after the sending

    result = hrimport(*args)

    assert result.exit_code == 70  # never 1, "some rows need attention"
    assert "Traceback" not in result.stderr
    [journal] = (Path(args[-1]) / "test-staff").glob("*/outcomes.jsonl")
    # the line names the journal the run left, as hrimport run's line does, where it named nothing
    assert result.stderr.splitlines()[-1] == (
        f"Error: {SAID}: this is a bug in hrimport; each row's outcome before it is in the run's journal {journal}, "
        "and running the import again imports nothing twice; run the command again with --debug for the traceback, "
        "and report it")
    assert TOKEN not in result.output
    assert sorted(stored().values()) == [1, 1]  # sent before the bug, once each
    # the journal ends saying why, so hrimport runs tells a bug from a run killed or still sending
    assert json.loads(journal.read_text().splitlines()[-1]) == {
        "record": "stopped", "why": SAID,
        "next": "report the bug, and run the import again once it is fixed: nothing is sent twice"}
    runs = hrimport("runs", str(journal.parent.parent), "--json")
    [line] = json.loads(runs.stdout)["runs"]
    assert (line["file"], line["problem"]) == ("staff.csv", (
        f"no report: {SAID}; the 2 rows the service answered are in its journal, outcomes.jsonl; report the bug, "
        "and run the import again once it is fixed: nothing is sent twice"))
    with pytest.raises(ValueError, match=r"^it is the journal of a run stopped before it finished \(hrimport stopped "
                       r"on an unexpected error \(TypeError: .*\)\): 2 rows sent were recorded"):
        read_outcomes(journal)  # as `hrimport report` reads it
    assert TOKEN not in journal.read_text() + runs.stdout

    assert hrimport(*args).exit_code == 70  # the bug met again: the same two people, each once
    assert sorted(stored().values()) == [1, 1]


def test_a_bug_under_debug_shows_its_traceback_above_the_line_and_still_exits_70(
        staff_import: tuple[list[str], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    args, _ = staff_import
    monkeypatch.setattr(report_package, "write_report", a_bug)

    result = hrimport("--debug", *args)

    assert result.exit_code == 70
    lines = result.stderr.splitlines()
    assert "Traceback (most recent call last):" in lines
    assert lines.index("Traceback (most recent call last):") < len(lines) - 1
    assert f"TypeError: {BUG.replace(TOKEN, '<hidden>')}" in lines  # the traceback hides the token too
    assert lines[-1].startswith(f"Error: {SAID}: this is a bug in hrimport; each row's outcome before it is in the "
                                "run's journal ")
    assert lines[-1].endswith("; report it with the traceback above")
    assert TOKEN not in result.output


def test_a_bug_in_the_middle_of_a_timeoff_import_names_its_journal_and_ends_it_saying_why(
        tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    add_staff(sandbox, [("000101", "MY"), ("000106", "SG")])
    source = write_csv(tmp_path / "leave.csv", [
        {"Employee ID": sid, "Leave Type": "Annual Leave", "From": "04/03/2024", "To": "05/03/2024",
         "Status": "Approved"} for sid in ("000101", "000106")], LEAVE_HEADER)
    sent = timeoff_import.post_time_off

    def post_then_a_bug(*args: Any, **kwargs: Any) -> NoReturn:  # the bug: after the service answered the rows
        sent(*args, **kwargs)
        a_bug()

    monkeypatch.setattr(timeoff_import, "post_time_off", post_then_a_bug)
    args = ["timeoff", "import", str(write_leave_config(tmp_path)), str(source), "--report-dir",
            str(tmp_path / "reports")]

    result = hrimport(*args, base_url=sandbox.base_url)

    assert result.exit_code == 70, result.output
    [journal] = (tmp_path / "reports").glob("*/*/outcomes.jsonl")
    assert result.stderr.splitlines()[-1] == (
        f"Error: {SAID}: this is a bug in hrimport; each row's outcome before it is in the run's journal {journal}, "
        "and running the import again imports nothing twice; run the command again with --debug for the traceback, "
        "and report it")
    assert [json.loads(line)["record"] for line in journal.read_text().splitlines()] == [
        "journal", "row", "row", "stopped"]
    [line] = json.loads(hrimport("runs", str(journal.parent.parent), "--json").stdout)["runs"]
    assert line["problem"].startswith(f"no report: {SAID}; the 2 rows the service answered are in its journal")
    assert sorted(r["customer_system_id"] for r in sandbox.time_off(99)) == ["000101", "000106"]

    monkeypatch.undo()  # the bug fixed
    again = hrimport(*args, base_url=sandbox.base_url)

    assert again.exit_code == 0, again.output
    assert sorted(r["customer_system_id"] for r in sandbox.time_off(99)) == ["000101", "000106"]  # none twice


def test_a_bug_in_a_timeoff_validate_is_one_line_and_exit_70(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = write_csv(tmp_path / "leave.csv", [{"Employee ID": "000101", "Leave Type": "Annual Leave",
                                                 "From": "04/03/2024", "To": "05/03/2024", "Status": "Approved"}],
                       LEAVE_HEADER)
    # the bug: gathering the rows read (validate sends nothing; the line says the exception's text as it is)
    def gather(*_args: Any, **_kwargs: Any) -> NoReturn:
        raise IndexError("list index out of range")

    monkeypatch.setattr(timeoff_import, "_gather", gather)
    args = ["timeoff", "validate", str(write_leave_config(tmp_path)), str(source)]

    result = hrimport(*args)

    assert result.exit_code == 70
    assert "Traceback" not in result.stderr
    assert result.stderr == ("Error: hrimport stopped on an unexpected error (IndexError: list index out of range): "
                             "this is a bug in hrimport; run the command again with --debug for the traceback, and "
                             "report it\n")

    debugged = hrimport("--debug", *args)

    assert debugged.exit_code == 70
    assert debugged.stderr.startswith("Traceback (most recent call last):\n")
    assert debugged.stderr.endswith("IndexError: list index out of range\nError: hrimport stopped on an unexpected "
                                    "error (IndexError: list index out of range): this is a bug in hrimport; report "
                                    "it with the traceback above\n")


def test_running_out_of_memory_says_the_machine_may_be_too_small_before_calling_it_a_bug(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = write_csv(tmp_path / "leave.csv", [{"Employee ID": "000101", "Leave Type": "Annual Leave",
                                                 "From": "04/03/2024", "To": "05/03/2024", "Status": "Approved"}],
                       LEAVE_HEADER)
    # a machine too small cannot be made here for real: the stage raises what it would
    def gather(*_args: Any, **_kwargs: Any) -> NoReturn:
        raise MemoryError

    monkeypatch.setattr(timeoff_import, "_gather", gather)

    result = hrimport("timeoff", "validate", str(write_leave_config(tmp_path)), str(source))

    assert result.exit_code == 70
    assert result.stderr == ("Error: hrimport stopped on an unexpected error (MemoryError): the machine or the "
                             "process's memory limit may be smaller than the README's figures (Bounded memory); if "
                             "not, this is a bug in hrimport; run the command again with --debug for the traceback, "
                             "and report it\n")


@pytest.mark.parametrize(("raised", "code", "line"), [
    (ConfigError("staff.toml: no such column"), 2, "Error: staff.toml: no such column"),
    (KeyboardInterrupt(), 130, ("Error: stopped by Ctrl-C (SIGINT) before the command finished; run it again when "
                                "ready (nothing is imported twice)")),
    (Terminated(), 143, ("Error: stopped by SIGTERM before the command finished; run it again when ready (nothing is "
                         "imported twice)")),
])
def test_known_errors_ctrl_c_and_sigterm_keep_their_own_exit_codes(
        staff_import: tuple[list[str], Any], monkeypatch: pytest.MonkeyPatch, raised: BaseException, code: int,
        line: str) -> None:
    args, _ = staff_import

    def stops(*_args: Any, **_kwargs: Any) -> NoReturn:
        raise raised

    monkeypatch.setattr(report_package, "write_report", stops)

    result = hrimport(*args)

    assert (result.exit_code, result.stderr.splitlines()[-1]) == (code, line)
    assert "unexpected" not in result.stderr


# ------------------------------------------------------------------------------------------ hrimport run


def test_a_bug_in_a_monthly_run_is_mailed_in_run_json_exit_70_and_not_told_as_killed_by_the_next_run(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int], monkeypatch: pytest.MonkeyPatch) -> None:
    box, port = relay
    job = JobFolder(tmp_path / "bug", sandbox, notify=notify_table(port), timeoff=True)
    job.export("2024-05", job.people(2))
    job.leave("2024-05", 2)
    with monkeypatch.context() as patched:
        patched.setattr(report_package, "write_report", a_bug)  # the bug: the staff step's report, after sending

        result = run_cli("run", str(job.job))

    assert result.exit_code == 70, result.stderr
    assert "Traceback" not in result.stderr
    [folder] = job.runs()
    journal = folder / "staff" / "outcomes.jsonl"
    line = (f"{SAID} in the staff step: this is a bug in hrimport; its traceback is in run.log; each row's outcome "
            f"before it is in the step's journal {journal}, and what the service accepted is remembered in the state "
            "folder, so the next run does not send it again; report it with run.log")
    assert result.stderr.splitlines() == [
        f"staff: Error: {line}",
        "timeoff: not run: hrimport stopped on an unexpected error in an earlier step",
        f"Report folder: {folder}",
        f"monthly: {line} (exit 70: {EXIT_MEANINGS[70]})",
    ]
    assert job.stored() == Counter({job.ext(1): 1, job.ext(2): 1})  # sent before the bug, once each
    assert job.time_off() == Counter()
    run = json.loads((folder / "run.json").read_text())
    assert (run["exit_code"], run["verdict"], run["notified"]) == (70, line, True)
    assert [s["status"] for s in run["steps"]] == ["unexpected_error", "not_run"]
    [msg] = box.messages
    assert " ".join(msg["Subject"].split()) == f"[hrimport] monthly: {line} (exit 70)"
    assert f"- staff: Error: {line}\n" in body_of(msg)
    assert f"Exit code 70: {EXIT_MEANINGS[70]}." in body_of(msg)
    log = (folder / "run.log").read_text()
    assert "Traceback (most recent call last):" in log and f"TypeError: {BUG.replace(TOKEN, '<hidden>')}" in log
    assert TOKEN not in log + result.output + body_of(msg)
    with pytest.raises(ValueError, match="2 rows sent were recorded as the service answered"):
        read_outcomes(journal)  # as `hrimport report` reads it

    again = run_cli("run", str(job.job))  # the bug fixed

    assert again.exit_code == 0, again.stderr
    assert "did not finish" not in again.stderr and "did not send" not in again.stderr
    assert job.stored() == Counter({job.ext(1): 1, job.ext(2): 1})  # nobody added twice
    assert job.time_off() == Counter({(job.ext(1), "2024-03-04"): 1, (job.ext(2), "2024-03-04"): 1})


def test_under_debug_a_bug_in_a_step_of_hrimport_run_shows_its_traceback_too(
        tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    job = JobFolder(tmp_path / "debug", sandbox)
    job.export("2024-05", job.people(1))
    monkeypatch.setattr(report_package, "write_report", a_bug)

    result = run_cli("--debug", "run", str(job.job))

    assert result.exit_code == 70, result.stderr
    lines = result.stderr.splitlines()
    step_line = next(n for n, line in enumerate(lines) if line.startswith(f"staff: Error: {SAID} in the staff step"))
    traceback_ends = lines.index(f"TypeError: {BUG.replace(TOKEN, '<hidden>')}")
    assert lines.index("Traceback (most recent call last):") < traceback_ends < step_line  # above the line
    assert TOKEN not in result.stderr


def test_a_bug_before_any_step_ends_the_run_mailed_with_exit_70(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int], monkeypatch: pytest.MonkeyPatch) -> None:
    box, port = relay
    job = JobFolder(tmp_path / "bug-first", sandbox, notify=notify_table(port))
    job.export("2024-05", job.people(2))
    with monkeypatch.context() as patched:
        patched.setattr(StateStore, "open", a_bug)  # the bug: opening the state folder, before any step

        result = run_cli("run", str(job.job))

    assert result.exit_code == 70, result.stderr
    [folder] = job.runs()
    line = f"{SAID}: this is a bug in hrimport; its traceback is in run.log, report it"
    assert result.stderr.splitlines() == [f"Error: {line}", f"Report folder: {folder}",
                                          f"monthly: {line} (exit 70: {EXIT_MEANINGS[70]})"]
    assert job.stored() == Counter()  # nothing sent
    assert json.loads((folder / "run.json").read_text())["verdict"] == line
    [msg] = box.messages
    assert " ".join(msg["Subject"].split()) == f"[hrimport] monthly: {line} (exit 70)"
    assert "Traceback (most recent call last):" in (folder / "run.log").read_text()

    again = run_cli("run", str(job.job))

    assert again.exit_code == 0, again.stderr
    assert "did not finish" not in again.stderr
    assert job.stored() == Counter({job.ext(1): 1, job.ext(2): 1})
