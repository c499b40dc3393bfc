"""Rows sent, report not written (a full disk): one line, exit 6, the outcomes kept, nothing sent twice."""

from __future__ import annotations

import datetime as dt
import errno
from pathlib import Path
from typing import Any

import pytest

from hrimport.outcomes import read_outcomes
from tests.test_timeoff_import import add_staff, hrimport, write_config, write_xlsx

pytestmark = pytest.mark.usefixtures("instant_retries")


def test_a_full_disk_after_sending_is_one_line_exit_6_and_the_next_run_sends_nothing_again(
        tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    add_staff(sandbox, [("000101", "SG"), ("000102", "SG")])
    source = write_xlsx(tmp_path / "leave.xlsx", [
        [person, "Annual Leave", dt.date(2024, 3, 4), dt.date(2024, 3, 5), "", "", "SG", "", ""]
        for person in ("000101", "000102")])
    config = write_config(tmp_path)
    command = ["timeoff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports")]

    # A full disk cannot be made for real here (mounting a small filesystem needs privileges): the report's
    # HTML writer fails the way a full disk makes it fail. The import, the sandbox and the state are real.
    def disk_full(*args: object, **kwargs: object) -> Path:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr("hrimport.report.writer.write_html", disk_full)
        result = hrimport(command, sandbox)

    assert result.exit_code == 6
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    kept = next((tmp_path / ".hrimport" / "unreported").glob("leave-*.jsonl"))
    assert result.stderr.startswith("Error: the report could not be written to ")
    assert ": No space left on device. 2 of 2 rows imported. What the service accepted is recorded in the state " \
           "folder, so the next run does not send it again. The run's outcomes are kept in " in result.stderr
    assert [o.outcome.value for o in read_outcomes(kept).rows] == ["added", "added"]
    assert len(sandbox.time_off(99)) == 2

    again = hrimport(command, sandbox)
    assert again.exit_code == 0, again.output
    assert len(sandbox.time_off(99)) == 2
    assert "2 of 2 rows imported." in again.stdout

    rendered = hrimport(["report", str(kept), "--output", str(tmp_path / "late")])
    assert rendered.exit_code == 0, rendered.output
    assert (tmp_path / "late" / "report.html").exists()
