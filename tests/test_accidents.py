"""The mistakes an unattended monthly run must survive without harm (issue 13), run as a user runs them.

- Nothing readable by others, nothing echoed: the state folder is private; a base URL with a token
  written into it is refused before anything is sent, and the token appears in no byte of the refusal.
- The embedded sandbox is never used by accident: every output of a run says where its rows went, a job
  uses the embedded sandbox only when its file says so, and a token with no base URL is an error.
- Every config mistake is one line and exit 2, never a traceback; ``--debug`` keeps the exit code.

Real parts throughout: the CLI through click's runner, the sandbox over HTTP on 127.0.0.1, a port nothing
listens on for an unreachable service, real files.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import socket
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hrimport.cli import main
from hrimport.config import ServiceSettings
from hrimport.errors import ConfigError
from hrimport.jobs import load_job
from hrimport.service.connection import resolve_connection
from hrimport.service.urls import describe_target, shown_url
from tests.staff_files import person, write_config, write_csv
from tests.test_timeoff_import import CONFIG as LEAVE_CONFIG
from tests.test_timeoff_import import add_staff, write_xlsx

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
TOKEN = "demo-customer-99"
SECRETS = ("userinfo-secret-71", "query-secret-72", "apikey-secret-73")

pytestmark = pytest.mark.usefixtures("instant_retries")


def hrimport(*args: str, **env: str) -> Result:
    """``hrimport ARGS`` with exactly these connection variables (unset ones are empty)."""
    full = {"HRIMPORT_TOKEN": "", "HRIMPORT_BASE_URL": "", **env}
    return CliRunner().invoke(main, list(args), env=full, catch_exceptions=False)


def one_error_line(result: Result) -> str:
    """The run's stderr, asserted to be exactly one ``Error: ...`` line and no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def leave_config(folder: Path, base_url: str | None = None) -> Path:
    text = LEAVE_CONFIG.format(extra="", columns="")
    if base_url:
        text = text.replace("customer_id = 99", f'customer_id = 99\nbase_url = "{base_url}"')
    path = folder / "leave.toml"
    path.write_text(text, encoding="utf-8")
    return path


def leave_file(folder: Path) -> Path:
    return write_xlsx(folder / "leave.xlsx", [
        ["000101", "Annual Leave", dt.date(2024, 3, 4), dt.date(2024, 3, 8), "", "", "MY", "", ""]])


# ------------------------------------------------------------------ nothing readable by others, nothing echoed


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_a_real_staff_and_time_off_import_leave_a_state_folder_only_its_owner_can_read(
    tmp_path: Path, sandbox: Any
) -> None:
    add_staff(sandbox, [("000101", "MY")])
    staff = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    old_umask = os.umask(0o022)  # the usual umask, which would make new files 0644 and folders 0755
    try:
        first = hrimport("staff", "import", str(staff), str(write_csv(tmp_path / "staff.csv", [person(1)])),
                         "--report-dir", str(tmp_path / "reports"), HRIMPORT_TOKEN=TOKEN)
        second = hrimport("timeoff", "import", str(leave_config(tmp_path, sandbox.base_url)),
                          str(leave_file(tmp_path)), "--report-dir", str(tmp_path / "reports"), HRIMPORT_TOKEN=TOKEN)
    finally:
        os.umask(old_umask)
    assert (first.exit_code, second.exit_code) == (0, 0), first.output + second.output
    state = tmp_path / ".hrimport"
    files = {p.name: stat.S_IMODE(p.stat().st_mode) for p in state.iterdir()}
    assert {"state.db", "timeoff_ledger.db"} <= set(files)
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert files == dict.fromkeys(files, 0o600)  # -wal and -shm files included, whichever are left


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_a_trial_on_the_embedded_sandbox_keeps_the_rows_it_stored_private(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the README's first import, run from the folder above the config's: the embedded sandbox's data goes to
    # ./.hrimport/sandbox.db, not the config's state folder, and holds the export's rows as sent
    (tmp_path / "samples").mkdir()
    config = write_config(tmp_path / "samples" / "staff.toml")
    export = write_csv(tmp_path / "samples" / "staff.csv", [person(1, Name="Aisha Rahman")])
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HRIMPORT_SANDBOX_DB", raising=False)
    old_umask = os.umask(0o022)  # the usual umask, which would make new files 0644 and folders 0755
    try:
        result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"))
    finally:
        os.umask(old_umask)

    assert result.exit_code == 0, result.output
    sandbox_folder = tmp_path / ".hrimport"
    assert b"Aisha Rahman" in (sandbox_folder / "sandbox.db").read_bytes()  # what the trial stored
    assert stat.S_IMODE(sandbox_folder.stat().st_mode) == 0o700
    files = {p.name: stat.S_IMODE(p.stat().st_mode) for p in sandbox_folder.iterdir()}
    assert files == dict.fromkeys(files, 0o600) and "sandbox.db" in files


@pytest.mark.parametrize("url, shown", [
    ("https://x:s3cret@api.example.com/api:v1", "https://***:***@api.example.com/api:v1"),
    ("https://s3cret@api.example.com/api:v1", "https://***@api.example.com/api:v1"),
    ("https://api.example.com/api:v1?token=s3cret&access_token=s3cret&api_key=s3cret",
     "https://api.example.com/api:v1?token=***&access_token=***&api_key=***"),
    ("http://[::1]:8080/sandbox?sig=s3cret#s3cret", "http://[::1]:8080/sandbox?sig=***#***"),
    ("https://api.example.com/api:v1", "https://api.example.com/api:v1"),
    ("https://x:s3cret@api.example.com:notaport/", "(a URL that cannot be read)"),
])
def test_a_url_is_shown_with_every_credential_hidden(url: str, shown: str) -> None:
    assert shown_url(url) == shown


def test_a_base_url_refused_as_not_http_is_named_without_its_secret() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_connection(None, base_url="ftp://x:s3cret@example.com/?token=s3cret", environ={"HRIMPORT_TOKEN": "t"})
    assert "s3cret" not in str(caught.value) and "ftp://***:***@example.com/?token=***" in str(caught.value)
    with pytest.raises(ConfigError, match="is not an http"):
        resolve_connection(None, base_url="https://example.com:port/x", environ={"HRIMPORT_TOKEN": "t"})


def _url_with(mistake: str, base_url: str) -> str:
    """``base_url`` with a password written into it, or with a query string carrying keys."""
    if mistake == "password":
        scheme, rest = base_url.split("://", 1)
        return f"{scheme}://svc:{SECRETS[0]}@{rest}"
    return f"{base_url}?token={SECRETS[1]}&api_key={SECRETS[2]}"


def _refusal(setting: str, mistake: str, base_url: str) -> str:
    """The one line a base URL with ``mistake`` in it is refused with, naming where it was set."""
    scheme, rest = base_url.split("://", 1)
    fix = "put the token in the environment variable named by token_env (HRIMPORT_TOKEN), not in the URL"
    if mistake == "password":
        return (f"Error: {setting} has a user name or password in it ({scheme}://***:***@{rest}), which would be "
                f"sent in place of the token: remove it from the URL, and {fix}")
    return (f"Error: {setting} has a query string ({base_url}?token=***&api_key=***), which would be added to "
            f"every request's path: remove everything from the '?' on, and {fix}")


def _assert_no_secret_anywhere(result: Result, folder: Path) -> None:
    for text in (result.stdout, result.stderr):
        for secret in SECRETS:
            assert secret not in text, text
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in SECRETS:
                if path.suffix != ".toml":  # the configs themselves are where the user wrote the URL
                    assert secret.encode() not in data, path


@pytest.mark.parametrize("mistake", ["password", "query"])
@pytest.mark.parametrize("setting", ["--base-url", "$HRIMPORT_BASE_URL", "staff.toml [service] base_url"])
def test_a_base_url_with_a_password_or_a_query_is_refused_in_one_line_before_anything_is_sent(
    tmp_path: Path, sandbox: Any, setting: str, mistake: str
) -> None:
    # httpx would send a password in the URL as Basic auth instead of the token (every request 401), and
    # would put every request's path after a query string (every request to the base URL's own path)
    url = _url_with(mistake, sandbox.base_url)
    config = write_config(tmp_path / "staff.toml", base_url=url if setting.startswith("staff.toml") else None)
    option = ["--base-url", url] if setting == "--base-url" else []
    env = {"HRIMPORT_BASE_URL": url} if setting == "$HRIMPORT_BASE_URL" else {}
    result = hrimport("staff", "import", str(config), str(write_csv(tmp_path / "staff.csv", [person(1)])), *option,
                      "--report-dir", str(tmp_path / "reports"), HRIMPORT_TOKEN=TOKEN, **env)

    assert result.exit_code == 2, result.output
    assert one_error_line(result) == _refusal(setting, mistake, sandbox.base_url)
    assert sandbox.requests() == [] and sandbox.staff(99) == []
    assert not (tmp_path / "reports").exists()
    _assert_no_secret_anywhere(result, tmp_path)


@pytest.mark.parametrize("debug", [False, True])
def test_a_password_in_the_base_url_is_in_no_byte_of_a_time_off_or_leave_days_refusal(
    tmp_path: Path, sandbox: Any, debug: bool
) -> None:
    url = _url_with("password", sandbox.base_url)
    args = ["--debug"] if debug else []
    leave = hrimport(*args, "timeoff", "import", str(leave_config(tmp_path)), str(leave_file(tmp_path)),
                     "--base-url", url, "--report-dir", str(tmp_path / "reports"), HRIMPORT_TOKEN=TOKEN)
    days = hrimport(*args, "leave-days", "MY", "2024-03-04", "2024-03-08", HRIMPORT_TOKEN=TOKEN,
                    HRIMPORT_BASE_URL=url)

    assert (leave.exit_code, days.exit_code) == (2, 2)  # --debug keeps the exit code
    assert _refusal("--base-url", "password", sandbox.base_url) in leave.stderr
    assert _refusal("$HRIMPORT_BASE_URL", "password", sandbox.base_url) in days.stderr
    assert ("Traceback" in leave.stderr + days.stderr) is debug
    assert sandbox.requests() == []
    for result in (leave, days):
        _assert_no_secret_anywhere(result, tmp_path)


def test_a_jobs_step_with_a_password_in_its_base_url_stops_the_run_before_any_step_sends(
    tmp_path: Path, sandbox: Any
) -> None:
    first = write_config(tmp_path / "first.toml", base_url=sandbox.base_url)
    second = write_config(tmp_path / "staff.toml", base_url=_url_with("password", sandbox.base_url))
    (tmp_path / "exports").mkdir()
    write_csv(tmp_path / "exports" / "first.csv", [person(1)])
    write_csv(tmp_path / "exports" / "second.csv", [person(2)])
    job = tmp_path / "monthly.toml"
    job.write_text('[[step]]\nname = "first"\nkind = "staff"\nconfig = "first.toml"\nsource = "exports/first.csv"\n'
                   '[[step]]\nname = "second"\nkind = "staff"\nconfig = "staff.toml"\n'
                   'source = "exports/second.csv"\n')

    result = hrimport("run", str(job), HRIMPORT_TOKEN=TOKEN)

    assert result.exit_code == 2, result.output
    assert _refusal("staff.toml [service] base_url", "password", sandbox.base_url) in one_error_line(result)
    assert sandbox.requests() == [] and sandbox.staff(99) == []  # not even the first step
    assert second.read_text().count(SECRETS[0]) == 1 and first.exists()
    _assert_no_secret_anywhere(result, tmp_path)


def test_a_base_url_with_a_wrong_path_says_so_and_no_row_is_told_it_was_refused(tmp_path: Path, sandbox: Any) -> None:
    add_staff(sandbox, [("000101", "MY")])
    wrong = sandbox.root_url + "/api:v2"  # the platform's host, another path: every endpoint there is a bare 404

    leave = hrimport("timeoff", "import", str(leave_config(tmp_path)), str(leave_file(tmp_path)), "--base-url", wrong,
                     "--report-dir", str(tmp_path / "reports"), HRIMPORT_TOKEN=TOKEN)
    staff = hrimport("staff", "import", str(write_config(tmp_path / "staff.toml")),
                     str(write_csv(tmp_path / "staff.csv", [person(1), person(2)])), "--base-url", wrong,
                     "--report-dir", str(tmp_path / "reports"), HRIMPORT_TOKEN=TOKEN)

    # time off: not "the service does not know staff '000101'" on every row (import your staff first?), but
    # the run stopped as on a service it cannot use
    assert leave.exit_code == 4, leave.output
    assert one_error_line(leave) == (
        "Error: the service answered POST /api/calculate-total-days with HTTP 404 (no such endpoint there); "
        "check the base URL")
    # staff: each row failed and says where to look, none "rejected" (the service refused it) for HR to fix
    [summary] = (tmp_path / "reports" / "test-staff").glob("*/summary.json")
    counts = json.loads(summary.read_text())["counts"]
    assert {outcome: n for outcome, n in counts.items() if n} == {"failed": 2}
    # said once for both rows, not once a row
    assert "Rows 2 and 3: not imported: the service answered POST /api/bulk_add_edit_staff with HTTP 404 (no " \
           "such endpoint there); check the base URL\n" in staff.stdout


# ------------------------------------------------------------------ the embedded sandbox, never by accident


def test_a_run_on_the_embedded_sandbox_says_so_in_every_output(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    result = hrimport("staff", "import", str(config), str(write_csv(tmp_path / "staff.csv", [person(1)])),
                      "--report-dir", str(tmp_path / "reports"), HRIMPORT_SANDBOX_DB=str(tmp_path / "embedded.db"))

    assert result.exit_code == 0, result.output
    assert "Target: embedded-sandbox\nNot the platform: this run used the embedded sandbox" in result.stdout
    [summary_path] = tmp_path.glob("reports/test-staff/*/summary.json")
    summary = json.loads(summary_path.read_text())
    assert (summary["target"], summary["service_host"]) == ("embedded-sandbox", "embedded-sandbox")
    html = (summary_path.parent / "report.html").read_text()
    first = re.search(r"<main>\s*<(\w+)[^>]*>([^<]*)", html)
    assert first is not None  # the banner is the page's first element
    assert 'id="sandbox-banner"' in html[first.start():first.end()]
    assert first.group(2).startswith("Not the platform: this run used the embedded sandbox")


def test_a_run_on_a_served_sandbox_says_so_and_a_service_is_named(tmp_path: Path, sandbox: Any) -> None:
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    result = hrimport("staff", "import", str(config), str(write_csv(tmp_path / "staff.csv", [person(1)])),
                      "--report-dir", str(tmp_path / "reports"), HRIMPORT_TOKEN=TOKEN)

    assert result.exit_code == 0, result.output
    assert f"Target: sandbox at {sandbox.base_url}\n" in result.stdout
    [summary_path] = tmp_path.glob("reports/test-staff/*/summary.json")
    assert json.loads(summary_path.read_text())["target"] == f"sandbox at {sandbox.base_url}"
    assert f"this run used the sandbox at {sandbox.base_url}" in (summary_path.parent / "report.html").read_text()
    assert describe_target("https://u:p@api.example.com/api:v1?k=s") == "service at https://api.example.com/api:v1"


def test_a_token_with_no_base_url_is_an_error_not_the_sandbox(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    result = hrimport("staff", "import", str(config), str(write_csv(tmp_path / "staff.csv", [person(1)])),
                      "--report-dir", str(tmp_path / "reports"), HRIMPORT_TOKEN="real-token-55",
                      HRIMPORT_SANDBOX_DB=str(tmp_path / "embedded.db"))
    assert not (tmp_path / "reports").exists()  # nothing left behind

    assert result.exit_code == 2
    assert one_error_line(result) == (
        "Error: $HRIMPORT_TOKEN is set but no base URL is: set it with --base-url, base_url in the config's "
        "[service] table, or $HRIMPORT_BASE_URL (or unset HRIMPORT_TOKEN to use the embedded sandbox)")
    assert "real-token-55" not in result.output
    assert not (tmp_path / "embedded.db").exists()  # no sandbox was started


def _job(folder: Path, *, sandbox: bool) -> Path:
    write_config(folder / "staff.toml")
    (folder / "exports").mkdir()
    write_csv(folder / "exports" / "staff.csv", [person(1)])
    job = folder / "monthly.toml"
    job.write_text(("sandbox = true\n" if sandbox else "") +
                   '[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "exports/staff.csv"\n')
    return job


def test_a_job_refuses_the_embedded_sandbox_unless_its_file_says_so(tmp_path: Path) -> None:
    db = str(tmp_path / "embedded.db")
    result = hrimport("run", str(_job(tmp_path, sandbox=False)), HRIMPORT_SANDBOX_DB=db)

    assert result.exit_code == 2
    assert one_error_line(result) == (
        "Error: step staff has no base URL (staff.toml): set it with --base-url, base_url in the config's "
        "[service] table, or $HRIMPORT_BASE_URL; a job uses the embedded sandbox only when monthly.toml says "
        "sandbox = true")
    assert not (tmp_path / "reports").exists() and not (tmp_path / "embedded.db").exists()  # nothing done


def test_a_job_that_says_sandbox_true_runs_on_it_and_says_so(tmp_path: Path) -> None:
    result = hrimport("run", str(_job(tmp_path, sandbox=True)), HRIMPORT_SANDBOX_DB=str(tmp_path / "e.db"))

    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert "using the embedded sandbox" in lines[0]
    assert lines[1].startswith("staff: 1 of 1 rows imported (staff.csv, on the embedded sandbox, not the platform)")
    assert lines[-1].startswith("monthly: everything imported on the embedded sandbox, not the platform (exit 0")
    [run_json] = tmp_path.glob("reports/monthly/*/run.json")
    assert json.loads(run_json.read_text())["embedded_sandbox"] is True


def test_the_sample_job_is_a_trial_on_the_sandbox_and_says_it() -> None:
    assert load_job(SAMPLES / "monthly_job.toml").sandbox is True
    assert resolve_connection(ServiceSettings(), environ={}).embedded  # its configs set no base URL


def test_sandbox_must_be_true_or_false(tmp_path: Path) -> None:
    job = _job(tmp_path, sandbox=False)
    job.write_text('sandbox = "yes"\n' + job.read_text())
    result = hrimport("run", str(job))
    assert result.exit_code == 2
    assert one_error_line(result).startswith("Error: monthly.toml: sandbox must be true or false")


# ------------------------------------------------------------------ every config mistake: one line, exit 2


def _staff(tmp_path: Path) -> tuple[Path, Path]:
    return write_config(tmp_path / "staff.toml"), write_csv(tmp_path / "staff.csv", [person(1)])


@pytest.mark.parametrize("delimiter", [";;", "", '\\"', "\\n"])
def test_a_delimiter_that_is_not_one_character_is_one_line(tmp_path: Path, delimiter: str) -> None:
    config, source = _staff(tmp_path)
    config.write_text(config.read_text().replace("[source]\n", f'[source]\ndelimiter = "{delimiter}"\n', 1))
    result = hrimport("staff", "validate", str(config), str(source))
    assert result.exit_code == 2
    assert one_error_line(result).startswith(
        "Error: staff.toml [source] delimiter must be one character other than a quote or a line end")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-32"])
def test_a_config_with_a_byte_order_mark_is_read_in_its_encoding(tmp_path: Path, encoding: str) -> None:
    config, source = _staff(tmp_path)
    config.write_bytes(config.read_text().encode(encoding))  # utf-16/32 write their own BOM
    result = hrimport("staff", "validate", str(config), str(source))
    assert result.exit_code == 0, result.output
    assert "1 of 1 rows checked." in result.stdout


@pytest.mark.parametrize("encoding, message", [
    ("utf-16-le", ("is not UTF-8 text (it holds NUL bytes: saved as UTF-16 without a byte-order mark?); save it "
                  "as UTF-8")),
    ("cp1252", "is not UTF-8 text (byte 0xe9 on line 2); save it as UTF-8"),
])
def test_a_config_that_is_not_utf8_is_one_line(tmp_path: Path, encoding: str, message: str) -> None:
    config, source = _staff(tmp_path)
    config.write_bytes(("#\n# Société\n" + config.read_text()).encode(encoding))  # é on line 2
    result = hrimport("staff", "validate", str(config), str(source))
    assert result.exit_code == 2
    assert one_error_line(result) == f"Error: config file {config} {message}"


def test_a_job_file_saved_as_utf16_without_a_mark_is_one_line(tmp_path: Path) -> None:
    job = _job(tmp_path, sandbox=True)
    job.write_bytes(job.read_text().encode("utf-16-le"))
    result = hrimport("run", str(job))
    assert result.exit_code == 2
    assert "is not UTF-8 text" in one_error_line(result)


@pytest.mark.parametrize("how", ["config", "option"])
def test_a_report_folder_that_cannot_be_made_stops_before_anything_is_sent(
    tmp_path: Path, sandbox: Any, how: str
) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    config, source = _staff(tmp_path)
    args = []
    if how == "config":
        config.write_text(config.read_text().replace("[report]\n", '[report]\nfolder = "a-file/reports"\n', 1))
        expected = f"set [report] folder in {config.name} to a folder you may write"
    else:
        args = ["--report-dir", str(tmp_path / "a-file" / "reports")]
        expected = "set --report-dir to a folder you may write"
    sandbox.clear_requests()

    result = hrimport("staff", "import", str(config), str(source), "--base-url", sandbox.base_url, *args,
                      HRIMPORT_TOKEN=TOKEN)

    assert result.exit_code == 2
    line = one_error_line(result)
    assert line.startswith(f"Error: cannot create the report folder {tmp_path / 'a-file' / 'reports'}/test-staff: ")
    assert line.endswith(expected)
    assert sandbox.requests() == []  # refused before connecting


def test_debug_shows_the_traceback_and_keeps_a_config_errors_exit_code(tmp_path: Path) -> None:
    config, source = _staff(tmp_path)
    config.write_text(config.read_text().replace("[source]\n", '[source]\ndelimiter = ";;"\n', 1))
    result = hrimport("--debug", "staff", "validate", str(config), str(source))
    assert result.exit_code == 2
    assert "Traceback" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("Error: staff.toml [source] delimiter must be one character")


@pytest.mark.parametrize("spec, message", [
    ("error_rate=2", "error_rate: Input should be less than or equal to 1"),
    ("error_rate=x,latency=-1", ("error_rate: Input should be a valid number, unable to parse string as a number "
                                "(and 1 more)")),
    ("statuses=500/oops", "statuses must be HTTP statuses joined by /, e.g. 500/503, not '500/oops'"),
    ("latency", "fault setting 'latency' is not key=value"),
    ('{"error_rate": ', "Invalid JSON: EOF while parsing a value at line 1 column 14"),
    ('{"rules": [{"status": "x"}]}', ("rules.0.status: Input should be a valid integer, unable to parse string as "
                                     "an integer")),
    # an injected fault answers an error: a 600, or a 200 with an error body, is no HTTP answer a client meets
    ("statuses=600", ("error_statuses: 600 is not an HTTP error status; give statuses from 400 to 599, e.g. 500/503 "
                      "or 429")),
    ("statuses=200/503", ("error_statuses: 200 is not an HTTP error status; give statuses from 400 to 599, e.g. "
                          "500/503 or 429")),
    ('{"rules": [{"path": "/api/bulk-add-staff", "status": 503}]}', (
        "rules.0.path: '/api/bulk-add-staff' is not an endpoint of the sandbox; give one of /vendor/get_customer, "
        "/api/add_edit_staff, /api/bulk_add_edit_staff, /api/calculate-total-days, /api/apply-ee-time-off (or its "
        "end, e.g. bulk_add_edit_staff; - and _ alike)")),
])
def test_a_bad_faults_spec_is_a_usage_error_in_one_line(tmp_path: Path, spec: str, message: str) -> None:
    result = hrimport("sandbox", "serve", "--port", "0", "--db", str(tmp_path / "s.db"), "--faults", spec)
    assert result.exit_code == 2
    assert one_error_line(result) == f"Error: --faults {spec!r}: {message}"


def test_a_trial_whose_second_step_fails_says_where_the_rows_went_after_what_happened_not_inside_its_error(
        tmp_path: Path) -> None:
    # the second step's error holds "; " (what is missing; what to do): the place went at the first "; ", inside
    # the error, as if the file were missing on the sandbox ('no file matches exports/new_*.csv on the embedded
    # sandbox, not the platform; put this month's export there ...')
    job = _job(tmp_path, sandbox=True)
    job.write_text(job.read_text() + '\n[[step]]\nname = "joiners"\nkind = "staff"\nconfig = "staff.toml"\n'
                                     'source = "exports/new_*.csv"\n')

    result = hrimport("run", str(job), HRIMPORT_SANDBOX_DB=str(tmp_path / "e.db"))

    assert result.exit_code == 2, result.output
    error = result.stderr.splitlines()[2].removeprefix("joiners: Error: ")
    assert error.startswith("no file matches ") and "; put this month's export there" in error
    assert result.stderr.splitlines()[-1].startswith(
        f"monthly: joiners step failed on the embedded sandbox, not the platform: {error} (exit 2: ")
