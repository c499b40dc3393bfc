"""``hrimport sandbox ...``: serve in a real process, and administer its file while it runs."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from hrimport.cli import main
from hrimport.sandbox.cli import sandbox as sandbox_group


def hrimport(*args: str) -> Any:
    return CliRunner().invoke(main, ["sandbox", *args], catch_exceptions=False)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    """``hrimport sandbox serve --port 0`` in its own process: (base URL it printed, db, process)."""
    db = tmp_path / "served.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "hrimport", "sandbox", "serve", "--port", "0", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()  # printed (and flushed) once the server answers
    try:
        yield line, db, process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=10)


def test_serve_then_administer_the_running_sandbox_then_stop_it(served: Any) -> None:
    base_url, db, process = served
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/sandbox")
    with httpx.Client(base_url=base_url, timeout=10) as http:
        assert http.get(base_url.removesuffix("/sandbox") + "/").status_code == 200

        added = hrimport("add-customer", "--db", str(db), "200", "Globex Pte Ltd")
        assert added.exit_code == 0 and "customer 200 'Globex Pte Ltd' (active)" in added.output
        assert hrimport("add-customer", "--db", str(db), "201", "Sleepy Co", "--inactive").exit_code == 0
        assert hrimport("add-token", "--db", str(db), "globex-token", "--customer", "200").exit_code == 0
        assert hrimport("add-data-type", "--db", str(db), "--customer", "200", "Band", "Site").exit_code == 0
        assert (
            hrimport(
                "add-leave-type",
                "--db",
                str(db),
                "Volunteer Leave",
                "志愿假",
                "--traditional",
                "志願假",
                "--basis",
                "Calendar",
            ).exit_code
            == 0
        )
        assert (
            hrimport("add-token", "--db", str(db), "other-vendor", "--vendor", "7", "--no-portal").exit_code
            == 0
        )

        customers = http.get("/vendor/get_customer", headers={"Authorization": "Bearer demo-vendor"}).json()
        assert {c["id"]: c["is_active"] for c in customers["customer_list"]}[201] is False
        staff = {
            "customer_id": 200,
            "customer_system_id": "G1",
            "customer_system_id_type": "SAP",
            "name": "Wei Ling",
            "system_email": "wl@globex.example",
            "country": "SG",
            "job_title": "HR",
            "job_start_date": "2022-01-01",
            "staff_type": "HRO",
            "customer_data_type": [{"name": "Band", "value": "B2"}],
        }
        response = http.post("/api/add_edit_staff", json=staff, headers={"Authorization": "globex-token"})
        assert response.json()["message"] == "add successfully"
        time_off = {
            "customer_id": 200,
            "customer_system_id": "G1",
            "leave_type": "志願假",
            "lang": "ZH",
            "country": "SG",
            "start_date": "2024-06-08",
            "end_date": "2024-06-09",
            "total_days": "2",
        }
        response = http.post(
            "/api/apply-ee-time-off", json=time_off, headers={"Authorization": "globex-token"}
        )
        assert response.status_code == 200, response.text
        denied = http.get("/vendor/get_customer", headers={"Authorization": "Bearer other-vendor"})
        assert denied.status_code == 403

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 0  # a clean stop


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_a_new_sandbox_file_holding_a_trials_rows_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "trial" / "sandbox.db"
    old_umask = os.umask(0o022)  # the usual umask, which would make the file 0644 and the folder 0755
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "hrimport", "sandbox", "serve", "--port", "0", "--db", str(db)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
    finally:
        os.umask(old_umask)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        staff = {"customer_id": 99, "customer_system_id": "E1", "customer_system_id_type": "SAP",
                 "name": "Aisha Rahman", "system_email": "aisha@acme.example", "country": "MY",
                 "job_title": "Analyst", "job_start_date": "2020-01-31", "staff_type": "Payroll"}
        answer = httpx.post(base_url + "/api/add_edit_staff", json=staff,
                            headers={"Authorization": "Bearer demo-customer-99"}, timeout=10)
        assert answer.json()["message"] == "add successfully"
        # while it runs: the database and SQLite's -wal and -shm beside it, which hold the rows meanwhile
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in db.parent.iterdir()}
        assert modes == {"sandbox.db": 0o600, "sandbox.db-wal": 0o600, "sandbox.db-shm": 0o600}
        assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700  # the folder made for it
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
    assert b"Aisha Rahman" in db.read_bytes() and stat.S_IMODE(db.stat().st_mode) == 0o600


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_an_existing_sandbox_file_and_folder_keep_the_modes_their_owner_gave_them(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o750)
    db = shared / "sandbox.db"
    assert hrimport("add-customer", "--db", str(db), "200", "Globex Pte Ltd").exit_code == 0
    db.chmod(0o640)  # the team's trial file, readable by its group on purpose
    assert hrimport("add-customer", "--db", str(db), "201", "Initech").exit_code == 0
    assert (stat.S_IMODE(db.stat().st_mode), stat.S_IMODE(shared.stat().st_mode)) == (0o640, 0o750)


def test_a_port_in_use_is_a_usage_error_not_exit_3(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        served = subprocess.run(
            [sys.executable, "-m", "hrimport", "sandbox", "serve", "--port", str(port), "--db", str(tmp_path / "s.db")],
            capture_output=True, text=True, timeout=60, check=False,
        )
    # 3 is "another run of the same job is in progress" everywhere else
    assert served.returncode == 2, served.stderr
    assert served.stderr.splitlines()[-1] == (
        f"Error: the sandbox could not listen on 127.0.0.1:{port}; try another --port (--port 0: any free one)")
    assert "address already in use" in served.stderr  # uvicorn's reason, the line above
    assert "Traceback" not in served.stderr


def test_admin_commands_work_without_a_server_and_create_the_file(tmp_path: Path) -> None:
    db = tmp_path / "new" / "sandbox.db"
    result = hrimport("add-data-type", "--db", str(db), "--customer", "99", "Band")
    assert result.exit_code == 0
    assert "Band" in result.output and "Cost Center" in result.output  # the demo dataset is there too


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add-token", "t"], "give exactly one of --customer ID or --vendor ID"),
        (["add-token", "t", "--customer", "1", "--vendor", "2"], "give exactly one of"),
        (["add-token", "t", "--customer", "1", "--no-portal"], "--no-portal applies to vendor tokens"),
        (["serve", "--faults", "error_rate=7"], "--faults 'error_rate=7'"),
    ],
)
def test_command_mistakes_say_how_to_fix_them(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["sandbox", *args, "--db", str(tmp_path / "x.db")])
    assert result.exit_code != 0
    assert message in result.output


def test_every_command_has_help_with_an_example() -> None:
    for name in sandbox_group.commands:
        result = CliRunner().invoke(main, ["sandbox", name, "--help"])
        assert result.exit_code == 0, name
        assert "Example:" in result.output and "--db" in result.output, name


def test_readme_documents_every_command_and_admin_route(tmp_path: Path) -> None:
    from hrimport.sandbox.app import create_app

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## The sandbox\n", 1)[1].split("\n## ", 1)[0]
    for name in sandbox_group.commands:
        assert f"hrimport sandbox {name}" in section, name
    paths = create_app(tmp_path / "doc.db").openapi()["paths"]
    for path, operations in paths.items():
        if path.startswith("/_admin"):
            for method in operations:
                assert f"`{method.upper()} {path}" in section, (method, path)
    for token in ("demo-vendor", "demo-vendor-noportal", "demo-customer-99", "demo-customer-100"):
        assert f"`{token}`" in section


@pytest.mark.parametrize("command", [["add-customer", "200", "Globex"], ["serve", "--port", "0"]])
def test_a_db_that_is_not_a_sandbox_database_is_one_line_exit_2(tmp_path: Path, command: list[str]) -> None:
    export = tmp_path / "staff.csv"
    export.write_text("Employee ID,Name\nE1,Aisha Rahman\n", encoding="utf-8")  # --db given the wrong file
    result = subprocess.run(
        [sys.executable, "-m", "hrimport", "sandbox", *command, "--db", str(export)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"Error: --db {export}: file is not a database; give the sandbox's SQLite file or a new path"]
    assert export.read_text(encoding="utf-8") == "Employee ID,Name\nE1,Aisha Rahman\n"


def test_a_leave_type_named_like_another_is_refused_and_the_zh_look_up_keeps_its_type(sandbox: Any) -> None:
    db = str(sandbox.db_path)
    twin = hrimport("add-leave-type", "--db", db, "Vacation Leave", "年假")
    assert twin.exit_code == 2
    assert twin.stderr.splitlines() == [("Error: '年假' is already a Chinese name of leave type 1 'Annual Leave'; "
                                         "give another Chinese name, or --id 1 to replace that type")]
    traditional = hrimport("add-leave-type", "--db", db, "Grief Leave", "哀假", "--traditional", "喪假")
    assert traditional.exit_code == 2 and "'喪假' is already a Chinese name of leave type" in traditional.stderr
    # English names match whatever the case in a time-off request: a second "annual leave" would be a twin too
    cased = hrimport("add-leave-type", "--db", db, "annual  leave", "新年假")
    assert cased.exit_code == 2
    assert cased.stderr.splitlines() == [("Error: leave type 1 is already called 'Annual Leave'; give its exact "
                                          "name to replace it, or another name")]
    assert len(sandbox.http.get(sandbox.root_url + "/_admin/leave_types").json()) == 15  # nothing added

    staff = {"customer_id": 99, "customer_system_id": "E1", "customer_system_id_type": "SAP", "name": "Li Wei",
             "system_email": "li@acme.example", "country": "CN", "job_title": "Engineer",
             "job_start_date": "2020-01-31", "staff_type": "EOR"}
    assert sandbox.http.post("/api/add_edit_staff", json=staff, headers=sandbox.auth()).status_code == 200
    leave = {"customer_id": 99, "customer_system_id": "E1", "leave_type": "年假", "lang": "ZH", "country": "CN",
             "start_date": "2024-06-10", "end_date": "2024-06-10", "total_days": "1"}
    answer = sandbox.http.post("/api/apply-ee-time-off", json=leave, headers=sandbox.auth())
    assert answer.json()["time_off_data"]["leave_type"] == 1  # Annual Leave, not a twin


def test_replacing_a_leave_type_may_keep_its_own_chinese_names(sandbox: Any) -> None:
    replaced = hrimport("add-leave-type", "--db", str(sandbox.db_path), "Annual Leave", "年假", "--basis", "Calendar")
    assert replaced.exit_code == 0, replaced.output
    types = {t["en"]: t for t in sandbox.http.get(sandbox.root_url + "/_admin/leave_types").json()}
    assert (types["Annual Leave"]["zh"], types["Annual Leave"]["basis"]) == ("年假", "Calendar")


def _annual_leave_booked(sandbox: Any) -> None:
    """Li Wei (E1) on Annual Leave on 10 June 2024, stored by the sandbox."""
    staff = {"customer_id": 99, "customer_system_id": "E1", "customer_system_id_type": "SAP", "name": "Li Wei",
             "system_email": "li@acme.example", "country": "CN", "job_title": "Engineer",
             "job_start_date": "2020-01-31", "staff_type": "EOR"}
    assert sandbox.http.post("/api/add_edit_staff", json=staff, headers=sandbox.auth()).status_code == 200
    booked = sandbox.http.post("/api/apply-ee-time-off", headers=sandbox.auth(), json={
        "customer_id": 99, "customer_system_id": "E1", "leave_type": "Annual Leave", "lang": "EN",
        "country": "CN", "start_date": "2024-06-10", "end_date": "2024-06-10", "total_days": "1"})
    assert booked.json()["time_off_data"]["leave_type"] == 1


def test_a_leave_type_changed_by_its_name_keeps_its_id_and_its_records(sandbox: Any) -> None:
    _annual_leave_booked(sandbox)
    changed = hrimport("add-leave-type", "--db", str(sandbox.db_path), "Annual Leave", "年假", "--basis", "Calendar")
    assert changed.exit_code == 0, changed.output
    assert changed.stdout.startswith("leave type 1 'Annual Leave'")
    types = {t["en"]: t for t in sandbox.http.get(sandbox.root_url + "/_admin/leave_types").json()}
    assert (types["Annual Leave"]["id"], types["Annual Leave"]["basis"]) == (1, "Calendar")
    # the record booked before still has its type: the same day again is refused as overlapping it
    again = sandbox.http.post("/api/apply-ee-time-off", headers=sandbox.auth(), json={
        "customer_id": 99, "customer_system_id": "E1", "leave_type": "Annual Leave", "lang": "EN",
        "country": "CN", "start_date": "2024-06-10", "end_date": "2024-06-10", "total_days": "1"})
    assert again.status_code != 200 and "overlap" in again.text.lower(), again.text


def test_a_leave_type_name_given_another_types_id_is_refused_and_nothing_changes(sandbox: Any) -> None:
    _annual_leave_booked(sandbox)
    before = sandbox.http.get(sandbox.root_url + "/_admin/leave_types").json()
    for given_id in ("2", "40"):  # another type's id (two types made one), a free id (the type's records moved)
        refused = hrimport("add-leave-type", "--db", str(sandbox.db_path), "Annual Leave", "年假", "--id", given_id)
        assert refused.exit_code == 2
        assert refused.stderr.splitlines() == [
            (f"Error: 'Annual Leave' is leave type 1, and time-off records point at a type by its id; give --id 1 "
             f"(or no --id) to change it, or another name for type {given_id}")]
    assert sandbox.http.get(sandbox.root_url + "/_admin/leave_types").json() == before
    records = sandbox.http.get(sandbox.root_url + "/_admin/time_off").json()
    assert [r["leave_type"] for r in records] == [1]


@pytest.mark.parametrize("command", [
    ["add-token", "globex-token", "--customer", "200"],
    ["add-data-type", "--customer", "200", "Band"],
])
def test_a_token_or_data_type_for_an_unknown_customer_is_refused_naming_the_known_ones(
    sandbox: Any, command: list[str]
) -> None:
    result = hrimport(*command, "--db", str(sandbox.db_path))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        ("Error: customer 200 is not known (known: 99 Acme Sdn Bhd, 100 Lotus Trading Co, 101 Dormant Holdings); "
         "add it first with add-customer")]
    denied = sandbox.http.post("/api/add_edit_staff", json={"customer_id": 200}, headers=sandbox.auth("globex-token"))
    assert denied.status_code == 401  # no token was added
    from hrimport.sandbox.store import Store

    assert Store(sandbox.db_path).data_types(200) == set()


def _another_programs_database(path: Path) -> None:
    """A SQLite file of another program: its own tables (one named like a sandbox table) and rows."""
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL);"
                       "CREATE TABLE customers (id INTEGER PRIMARY KEY, vat TEXT);"
                       "INSERT INTO invoices VALUES (1, 99.5); INSERT INTO customers VALUES (7, 'MY123');")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("command", [["add-customer", "200", "Globex"], ["serve", "--port", "0"]])
def test_another_programs_database_is_refused_and_left_untouched(tmp_path: Path, command: list[str]) -> None:
    other = tmp_path / "accounts.db"
    _another_programs_database(other)
    before = other.read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "hrimport", "sandbox", *command, "--db", str(other)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        (f"Error: --db {other}: a SQLite database of another program (tables customers, invoices), not the "
         "sandbox's; give the sandbox's SQLite file or a new path")]
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["accounts.db"]  # no -wal or -shm left beside it
    conn = sqlite3.connect(other)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master ORDER BY name")] == ["customers", "invoices"]
    conn.close()


def test_a_sandbox_file_with_a_table_of_its_owner_still_opens(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.db"
    assert hrimport("add-customer", "--db", str(db), "200", "Globex Pte Ltd").exit_code == 0
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE my_notes (note TEXT)")  # the trial's owner keeps notes in the same file
    conn.commit()
    conn.close()
    assert hrimport("add-token", "--db", str(db), "globex-token", "--customer", "200").exit_code == 0
