"""Every month at a glance (issue 16): ``reports/<job>/index.html`` after every run, ``hrimport runs``,
``--json`` for scripts, and the stage lines a person at a terminal sees before the progress bar.

Real imports into the sandbox over HTTP, real report folders and run folders (``hrimport run`` with its
retention), the page rendered in headless Chromium, and a real pseudo-terminal for the stage lines.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.headless_chromium import run_chromium
from tests.staff_files import person, write_config, write_csv
from tests.test_run_job import JobFolder, run_cli
from tests.test_staff_import import _run_on_a_terminal
from tests.test_timeoff_import import HEADER as LEAVE_HEADER
from tests.test_timeoff_import import add_staff
from tests.test_timeoff_import import write_config as write_leave_config

TOKEN = "demo-customer-99"

pytestmark = pytest.mark.usefixtures("instant_retries")


# ----------------------------------------------------------------------------------------- helpers


def import_staff(tmp_path: Path, sandbox: Any, name: str, rows: list[dict[str, str]], *extra: str) -> Result:
    """``hrimport staff import`` of ``rows`` written as ``name``, into ``tmp_path/reports``, in a new second:
    an import's report folder is named by the second it started in."""
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    source = write_csv(tmp_path / name, rows)
    started = int(time.time())
    while int(time.time()) == started:
        time.sleep(0.02)
    return run_cli("staff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports"),
                   *extra)


class _Table(HTMLParser):
    """The history page's run lines: each ``<tr data-run>`` as its cells' text and its report link."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and "data-run" in found:
            self.rows.append({"run": found["data-run"], "cells": [], "href": None})
        elif tag == "td" and self.rows:
            self._cell = []
        elif tag == "a" and self._cell is not None:
            self.rows[-1]["href"] = found["href"]

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1]["cells"].append(" ".join(" ".join(self._cell).split()))
            self._cell = None


def page_lines(page: Path) -> list[dict[str, Any]]:
    table = _Table()
    table.feed(page.read_text(encoding="utf-8"))
    return table.rows


def run_folders(job_folder: Path) -> list[str]:
    """The job's run folders, newest first (their names sort in the order the runs started)."""
    return sorted((p.name for p in job_folder.iterdir() if p.is_dir() and p.name[0].isdigit()), reverse=True)


# ---------------------------------------------------------------------------------------- the page


def test_three_imports_make_three_lines_newest_first_with_their_figures_and_working_links(
        tmp_path: Path, sandbox: Any) -> None:
    results = [
        import_staff(tmp_path, sandbox, "staff_jan.csv",
                     [person(1), person(2), person(3, Country="leak-me-not")]),
        import_staff(tmp_path, sandbox, "staff_feb.csv", [person(n) for n in range(1, 6)]),
        import_staff(tmp_path, sandbox, "staff_mar.csv",
                     [*(person(n) for n in range(1, 5)), person(5, **{"Hire Date": "31/02/2020"}),
                      person(6, Country="also-not-a-country")]),
    ]
    assert [r.exit_code for r in results] == [1, 0, 1]

    job_folder = tmp_path / "reports" / "test-staff"
    page = job_folder / "index.html"
    lines = page_lines(page)
    assert [line["cells"][1:8] for line in lines] == [
        ["staff_mar.csv Staff", "4 of 6 rows imported; 2 need attention", "6", "4", "0", "2", "1"],
        ["staff_feb.csv Staff", "5 of 5 rows imported", "5", "5", "0", "0", "0"],
        ["staff_jan.csv Staff", "2 of 3 rows imported; 1 needs attention", "3", "2", "0", "1", "1"],
    ]
    runs = run_folders(job_folder)
    assert [line["run"] for line in lines] == runs
    assert [line["href"] for line in lines] == [f"{run}/report.html" for run in runs]
    assert all((job_folder / line["href"]).is_file() for line in lines)
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    # the page shows counts and verdicts, never a row's value or a person's name
    text = page.read_text(encoding="utf-8")
    assert "leak-me-not" not in text and "also-not-a-country" not in text and "Person " not in text


def test_the_page_draws_a_bar_per_run_of_rows_read_and_rows_needing_attention_in_chromium(
        tmp_path: Path, sandbox: Any) -> None:
    import_staff(tmp_path, sandbox, "staff_jan.csv", [person(n) for n in range(1, 4)])
    import_staff(tmp_path, sandbox, "staff_feb.csv", [person(n) for n in range(1, 5)])
    import_staff(tmp_path, sandbox, "staff_mar.csv",
                 [*(person(n) for n in range(1, 9)), person(9, Country="Atlantis"), person(10, Country="Atlantis")])

    dom = run_chromium(tmp_path / "reports" / "test-staff" / "index.html", tmp_path, "--dump-dom")

    assert re.findall(r"<h3>([^<]*)</h3>", dom) == ["Staff: rows read", "Staff: rows needing attention"]
    read = re.findall(r'<rect class="read( newest)?"[^>]*><title>[\d-]+ [\d:]+: (\d+) rows read</title>', dom)
    assert read == [("", "3"), ("", "4"), (" newest", "10")]  # oldest to newest, the newest marked
    attention = re.findall(r'<rect class="attention[^"]*"[^>]*><title>[^:]+:\d\d: (\d+) rows needing', dom)
    assert attention == ["0", "0", "2"]
    assert "usual 3.5" in dom  # the median of the runs before the newest, drawn as a line
    assert "Newest run: 10 rows read; usually 3.5 (the median of the 2 runs before)." in dom


def test_a_run_whose_summary_is_missing_or_unreadable_is_listed_as_such(tmp_path: Path, sandbox: Any) -> None:
    import_staff(tmp_path, sandbox, "staff.csv", [person(1), person(2)])
    job_folder = tmp_path / "reports" / "test-staff"
    [good] = run_folders(job_folder)
    broken = {"2000-01-01_000000": None, "2000-02-01_000000": b"{\"job\": ", "2000-03-01_000000": b"[1, 2]",
              "2000-04-01_000000": b'{"job": "test-staff"}'}
    for name, content in broken.items():
        shutil.copytree(job_folder / good, job_folder / name)
        if content is None:
            (job_folder / name / "summary.json").unlink()
        else:
            (job_folder / name / "summary.json").write_bytes(content)

    result = import_staff(tmp_path, sandbox, "staff.csv", [person(1), person(2)])

    assert result.exit_code == 0, result.stderr
    lines = page_lines(job_folder / "index.html")
    assert [(line["run"], line["cells"][2], line["href"]) for line in lines[2:]] == [
        ("2000-04-01_000000", "summary.json cannot be read: it is not a run's summary",
         "2000-04-01_000000/report.html"),
        ("2000-03-01_000000", "summary.json cannot be read: it is not a JSON object",
         "2000-03-01_000000/report.html"),
        ("2000-02-01_000000", "summary.json cannot be read: it is not JSON", "2000-02-01_000000/report.html"),
        ("2000-01-01_000000", ("summary.json is missing: the run stopped while writing its report; hrimport "
                              f"report {job_folder / '2000-01-01_000000' / 'outcomes.jsonl'} writes it again"),
         "2000-01-01_000000/report.html"),
    ]
    assert [line["cells"][3:8] for line in lines[2:]] == [["–", "–", "–", "–", "–"]] * 4
    assert run_cli("runs", str(job_folder)).exit_code == 0


#: An import killed outright (SIGKILL: nothing runs after it) at the moment its test names.
KILLED_AT = """
import os, signal, sys
from pathlib import Path
from hrimport.config import load_config
from hrimport.imports import import_file
from hrimport.report import writer

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

if sys.argv[4] == "sending":  # the first batch answered, the others still to send
    progress = killed
else:  # the whole run saved in outcomes.jsonl, report.html about to be written
    progress, writer.write_html = None, killed
import_file(load_config(Path(sys.argv[1])), Path(sys.argv[2]), base_url=sys.argv[3], batch_size=2,
            report_dir=Path("reports"), progress=progress)
"""


@pytest.mark.parametrize("moment", ["sending", "reporting"])
def test_a_run_killed_before_its_report_is_listed_with_what_to_do(tmp_path: Path, sandbox: Any,
                                                                  moment: str) -> None:
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    source = write_csv(tmp_path / "staff.csv", [person(n) for n in range(1, 7)])
    child = subprocess.run([sys.executable, "-c", KILLED_AT, str(config), str(source), sandbox.base_url, moment],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
                           env={**os.environ, "HRIMPORT_TOKEN": TOKEN})
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    job_folder = tmp_path / "reports" / "test-staff"

    listed = run_cli("runs", str(job_folder), "--json")

    assert listed.exit_code == 0, listed.output
    [line] = json.loads(listed.stdout)["runs"]
    outcomes = job_folder / line["run"] / "outcomes.jsonl"
    if moment == "sending":  # killed with the second batch in flight: the first batch's two rows answered
        assert (line["file"], line["kind"], line["problem"]) == ("staff.csv", "staff", (
            "no report: the run was stopped before it finished (or is still sending); the 2 rows the service "
            "answered are in its journal, outcomes.jsonl; run the import again: nothing is sent twice"))
    else:
        assert line["problem"] == (f"summary.json is missing: the run stopped while writing its report; "
                                   f"hrimport report {outcomes} writes it again")
        assert run_cli("report", str(outcomes)).exit_code == 0  # as the line says
        assert (job_folder / line["run"] / "summary.json").exists()


def test_a_history_page_that_cannot_be_written_is_a_warning_not_a_failed_import(tmp_path: Path,
                                                                                sandbox: Any) -> None:
    (tmp_path / "reports" / "test-staff" / "index.html").mkdir(parents=True)  # in the way of the page

    result = import_staff(tmp_path, sandbox, "staff.csv", [person(1), person(2, Country="Atlantis")])

    assert result.exit_code == 1  # the rows' exit code, not an error
    assert re.search(r"hrimport: the history page .*index\.html could not be written: Is a directory",
                     result.stderr)
    assert "1 of 2 rows imported; 1 needs attention." in result.stdout


def test_retention_removes_old_runs_from_the_page_too(tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "keep", sandbox, retention=2)
    for month, count in (("2024-05", 2), ("2024-06", 3), ("2024-07", 4)):
        job.export(month, job.people(count))
        assert run_cli("run", str(job.job)).exit_code == 0

    job_folder = job.root / "reports" / "monthly"
    kept = run_folders(job_folder)
    lines = page_lines(job_folder / "index.html")
    assert len(kept) == 2
    assert [(line["run"], line["cells"][1], line["cells"][3]) for line in lines] == [
        (kept[0], "staff_2024-07.csv staff", "4"), (kept[1], "staff_2024-06.csv staff", "3")]
    assert [line["href"] for line in lines] == [f"{run}/staff/report.html" for run in kept]
    assert "staff_2024-05.csv" not in (job_folder / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------- hrimport runs


def test_hrimport_runs_lists_every_step_of_every_run_as_json(tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "job", sandbox, timeoff=True)
    job.export("2024-05", job.people(3))
    job.leave("2024-05", 2)
    assert run_cli("run", str(job.job)).exit_code == 0
    assert run_cli("run", str(job.job)).exit_code == 0  # the same files: both steps already imported
    job_folder = job.root / "reports" / "monthly"
    unreadable = job_folder / "2000-01-01_000000"  # an import's folder whose summary was cut short
    unreadable.mkdir()
    (unreadable / "summary.json").write_text('{"rows_read": ')
    second, first = run_folders(job_folder)[:2]
    run_json = json.loads((job_folder / second / "run.json").read_text())
    staff, leave = (json.loads((job_folder / first / step / "summary.json").read_text())
                    for step in ("staff", "timeoff"))

    result = run_cli("runs", str(job.job), "--json")

    assert result.exit_code == 0, result.stderr
    nothing = {"rows_read": None, "imported": None, "skipped": None, "need_attention": None, "report": None}
    assert json.loads(result.stdout) == {"folder": str(job_folder), "runs": [
        {"run": second, "started_at": run_json["steps"][0]["started_at"], "step": "staff", "kind": "staff",
         "file": "staff_2024-05.csv", "dry_run": False, "verdict": run_json["steps"][0]["message"], **nothing,
         "exit_code": 0, "problem": ""},
        {"run": second, "started_at": run_json["steps"][1]["started_at"], "step": "timeoff", "kind": "timeoff",
         "file": "leave_2024-05.csv", "dry_run": False, "verdict": run_json["steps"][1]["message"], **nothing,
         "exit_code": 0, "problem": ""},
        {"run": first, "started_at": staff["started_at"], "step": "staff", "kind": "staff",
         "file": "staff_2024-05.csv", "dry_run": False, "verdict": "3 of 3 rows imported", "rows_read": 3,
         "imported": 3, "skipped": 0, "need_attention": 0, "exit_code": 0, "report": f"{first}/staff/report.html",
         "problem": ""},
        {"run": first, "started_at": leave["started_at"], "step": "timeoff", "kind": "timeoff",
         "file": "leave_2024-05.csv", "dry_run": False, "verdict": "2 of 2 rows imported", "rows_read": 2,
         "imported": 2, "skipped": 0, "need_attention": 0, "exit_code": 0, "report": f"{first}/timeoff/report.html",
         "problem": ""},
        {"run": "2000-01-01_000000", "started_at": "2000-01-01T00:00:00", "step": "", "kind": "", "file": "",
         "dry_run": False, "verdict": "", **nothing, "exit_code": None,
         "problem": "summary.json cannot be read: it is not JSON"},
    ]}
    assert run_json["steps"][0]["message"].startswith(
        "no new export: the newest file matching exports/staff_*.csv (staff_2024-05.csv) is the one imported on")

    table = run_cli("runs", str(job_folder)).stdout.splitlines()
    assert table[1].split() == ["STARTED", "FILE", "READ", "IMPORTED", "SKIPPED", "ATTENTION", "EXIT", "REPORT",
                                "VERDICT"]
    assert table[5].split()[2:] == ["timeoff:", "leave_2024-05.csv", "2", "2", "0", "0", "0",
                                    f"{first}/timeoff/report.html", "2", "of", "2", "rows", "imported"]
    assert table[6].split()[2:9] == ["-"] * 7
    assert table[6].endswith("  summary.json cannot be read: it is not JSON")


def test_a_step_that_imported_nothing_is_listed_at_its_own_start_not_the_runs(tmp_path: Path,
                                                                             sandbox: Any) -> None:
    # June: the staff export is new and takes a while to send, the leave export is May's again. The leave
    # line must say when that step ran, after the staff step, not when the run began.
    job = JobFolder(tmp_path / "job", sandbox, timeoff=True)
    job.export("2024-05", job.people(3))
    job.leave("2024-05", 2)
    assert run_cli("run", str(job.job)).exit_code == 0
    job.export("2024-06", job.people(4))
    sandbox.set_faults(rules=[{"path": "/api/bulk_add_edit_staff", "delay": 1.5, "count": 1}])
    assert run_cli("run", str(job.job)).exit_code == 0

    lines = json.loads(run_cli("runs", str(job.job), "--json").stdout)["runs"]

    staff, leave = lines[:2]
    assert (staff["step"], leave["step"]) == ("staff", "timeoff")
    assert leave["verdict"].startswith("no new export: ")
    run_started = json.loads((job.root / "reports" / "monthly" / leave["run"] / "run.json").read_text())[
        "started_at"]
    assert leave["started_at"] > staff["started_at"] >= run_started  # ISO 8601, one time zone: they sort


def test_a_run_killed_before_its_run_json_lists_its_steps_in_the_order_they_ran(tmp_path: Path,
                                                                               sandbox: Any) -> None:
    # Steps named so that their names do not sort in the order they run, and what a run killed in its last
    # step leaves: no run.json, and that step's folder without its summary.json (here both are removed from a
    # finished run: a kill cannot be timed to fall between the two steps' summaries)
    job = JobFolder(tmp_path / "job", sandbox, timeoff=True)
    job.job.write_text(job.job.read_text().replace('kind = "staff"', 'kind = "staff"\nname = "people"')
                       .replace('kind = "timeoff"', 'kind = "timeoff"\nname = "leave"'))
    job.export("2024-05", job.people(3))
    job.leave("2024-05", 2)
    assert run_cli("run", str(job.job)).exit_code == 0
    [run] = run_folders(job.root / "reports" / "monthly")
    (job.root / "reports" / "monthly" / run / "run.json").unlink()
    (job.root / "reports" / "monthly" / run / "leave" / "summary.json").unlink()

    lines = json.loads(run_cli("runs", str(job.job), "--json").stdout)["runs"]

    leave = job.root / "reports" / "monthly" / run / "leave" / "outcomes.jsonl"
    assert [(line["step"], line["problem"]) for line in lines] == [
        ("people", ""),
        ("leave", (f"summary.json is missing: the run stopped while writing its report; hrimport report {leave} "
                  "writes it again"))]


def test_hrimport_runs_of_an_import_config_lists_the_runs_of_its_report_folder(tmp_path: Path,
                                                                             sandbox: Any) -> None:
    # staff import writes to the config's [report] folder (beside the config) and job: runs finds them there
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    config.write_text(config.read_text().replace('[report]\n', '[report]\nfolder = "reports"\n'))
    source = write_csv(tmp_path / "staff.csv", [person(1), person(2, Country="Atlantis")])
    assert run_cli("staff", "import", str(config), str(source)).exit_code == 1

    listed = run_cli("runs", str(config), "--json")

    assert listed.exit_code == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert found["folder"] == str(tmp_path / "reports" / "test-staff")
    assert [(r["file"], r["rows_read"], r["imported"], r["exit_code"]) for r in found["runs"]] == [
        ("staff.csv", 2, 1, 1)]


def test_hrimport_runs_names_what_to_give_when_the_path_is_not_a_job(tmp_path: Path, sandbox: Any) -> None:
    import_staff(tmp_path, sandbox, "staff.csv", [person(1)])

    missing = run_cli("runs", str(tmp_path / "nowhere"))
    parent = run_cli("runs", str(tmp_path / "reports"))

    assert missing.exit_code == parent.exit_code == 2
    assert missing.stderr == (f"Error: {tmp_path / 'nowhere'} is neither a file nor a folder: give a job file "
                              "(JOB.toml), an import config or a job's report folder (reports/<job>)\n")
    assert parent.stderr == (f"Error: {tmp_path / 'reports'} holds no runs itself but the folders of jobs "
                             f"test-staff: give one of them, e.g. {tmp_path / 'reports' / 'test-staff'}\n")


# ---------------------------------------------------------------------------------------- --json


def test_import_json_prints_the_summary_json_it_wrote_and_the_human_lines_on_stderr(tmp_path: Path,
                                                                                    sandbox: Any) -> None:
    result = import_staff(tmp_path, sandbox, "staff.csv", [person(1), person(2, Country="Atlantis")], "--json")

    assert result.exit_code == 1
    [summary] = (tmp_path / "reports").glob("*/*/summary.json")
    assert result.stdout == summary.read_text(encoding="utf-8")
    assert json.loads(result.stdout)["counts"]["added"] == 1
    assert "1 of 2 rows imported; 1 needs attention." in result.stderr
    assert f"Report: {summary.parent / 'report.html'}" in result.stderr


def test_validate_json_prints_the_summary_an_import_would_write_without_writing_files(tmp_path: Path,
                                                                                     sandbox: Any) -> None:
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    source = write_csv(tmp_path / "staff.csv", [person(1), person(2, Country="Atlantis")])
    dry = run_cli("staff", "import", str(config), str(source), "--dry-run", "--report-dir",
                  str(tmp_path / "r"))
    [written] = (tmp_path / "r").glob("*/*/summary.json")

    result = run_cli("staff", "validate", str(config), str(source), "--json")

    assert (dry.exit_code, result.exit_code) == (1, 1)
    printed, summary = json.loads(result.stdout), json.loads(written.read_text())
    assert printed.keys() == summary.keys()
    varies = {"started_at", "finished_at", "duration_s", "timings", "files", "target", "service_host", "plan"}
    assert {k: v for k, v in printed.items() if k not in varies} == {
        k: v for k, v in summary.items() if k not in varies}
    assert printed["plan"] is None and summary["plan"]["counts"]["new"] == 1  # a validate plans nothing
    assert printed["verdict"] == "1 of 2 rows checked; 1 needs attention"
    assert (printed["files"], printed["target"]) == ({}, None)
    assert "Row 3, column 'Country'" in result.stderr and "Row 3" not in result.stdout
    assert not (tmp_path / "reports").exists()  # a validate writes nothing


def test_timeoff_import_and_validate_print_their_summary_as_json(tmp_path: Path, sandbox: Any) -> None:
    add_staff(sandbox, [("000101", "MY")])
    config = write_leave_config(tmp_path)
    rows = [["000101", "Annual Leave", "04/03/2024", "05/03/2024", "", "", "MY", "", ""],
            ["000101", "Holiday Leave", "11/03/2024", "12/03/2024", "", "", "MY", "", ""]]
    source = write_csv(tmp_path / "leave.csv", [dict(zip(LEAVE_HEADER, row)) for row in rows], LEAVE_HEADER)
    env = {"HRIMPORT_BASE_URL": sandbox.base_url}

    checked = run_cli("timeoff", "validate", str(config), str(source), "--json", env=env)
    imported = run_cli("timeoff", "import", str(config), str(source), "--json", "--report-dir",
                       str(tmp_path / "reports"), env=env)

    [summary] = (tmp_path / "reports").glob("*/*/summary.json")
    assert imported.stdout == summary.read_text(encoding="utf-8")
    # a leave type hrimport does not know is sent, with a warning, and the sandbox refuses it
    assert (json.loads(checked.stdout)["verdict"], json.loads(imported.stdout)["verdict"]) == (
        "2 of 2 rows checked (1 with warnings)", "1 of 2 rows imported; 1 needs attention")
    assert "'Holiday Leave' is not among the leave types hrimport knows" in checked.stderr
    assert "the service refused leave type 'Holiday Leave'" in imported.stderr


# ---------------------------------------------------------------------------------------- the terminal


def test_a_terminal_sees_a_line_per_stage_before_the_bar_of_rows_done_and_a_pipe_sees_none(
        tmp_path: Path, sandbox: Any) -> None:
    config = write_config(tmp_path / "staff.toml")
    source = write_csv(tmp_path / "staff.csv", [person(n) for n in range(1, 41)])
    args = ["staff", "import", str(config), str(source), "--batch-size", "10", "--report-dir",
            str(tmp_path / "r"), "--base-url", sandbox.base_url]

    terminal = _run_on_a_terminal(args, {"HRIMPORT_TOKEN": TOKEN})
    checking = _run_on_a_terminal(["staff", "validate", str(config), str(source)], {})
    piped = run_cli(*args)

    assert "Reading staff.csv...\r\nValidating 40 rows...\r\nSending 40 rows...\r\n" in terminal
    assert terminal.index("Sending 40 rows...") < terminal.index("40/40")  # the bar: rows done / total
    assert "Reading staff.csv...\r\nValidating 40 rows...\r\n" in checking and "Sending" not in checking
    assert piped.exit_code == 0
    assert not re.search(r"Reading|Validating|Sending|40/40", piped.stderr + piped.stdout)


def test_the_page_heads_with_every_step_of_the_newest_run_not_only_its_first(tmp_path: Path, sandbox: Any) -> None:
    # July: the staff export is June's again ("no new export"), and a leave row still needs attention: the page
    # HR opens on a phone must not head with "no new export ... nothing sent" alone
    job = JobFolder(tmp_path / "job", sandbox, timeoff=True)
    job.export("2024-06", job.people(3))
    leave = job.leave("2024-06", 3)
    leave.write_text(leave.read_text().replace(f"{job.ext(3)},", "999999,"))  # nobody on the platform
    assert run_cli("run", str(job.job)).exit_code == 1

    again = run_cli("run", str(job.job))

    assert again.exit_code == 1, again.stderr
    text = (job.root / "reports" / "monthly" / "index.html").read_text(encoding="utf-8")
    latest = [" ".join(p.split()) for p in re.findall(r'<p class="latest[^"]*">(.*?)</p>', text, re.DOTALL)]
    assert len(latest) == 2
    assert latest[0].startswith("staff: no new export: ")
    assert latest[1].startswith("timeoff: 2 of 3 rows imported; 1 needs attention")
