"""Connection settings for every command: where the base URL, token and customer id come from."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hrimport.cli import main
from hrimport.config import ServiceSettings
from hrimport.errors import ConfigError
from hrimport.service.connection import (
    SANDBOX_CUSTOMER_ID,
    SANDBOX_CUSTOMER_TOKEN,
    SANDBOX_VENDOR_TOKEN,
    resolve_connection,
    service_host,
)
from tests.staff_files import person, write_config, write_csv
from tests.test_timeoff_import import CONFIG, add_staff, write_xlsx

SERVICE = ServiceSettings(base_url="https://config.example/api:v1", customer_id="100", token_env="ACME_TOKEN")


def test_the_base_url_comes_from_the_option_then_the_config_then_the_environment() -> None:
    env = {"HRIMPORT_BASE_URL": "https://env.example/api:v1", "ACME_TOKEN": "t", "HRIMPORT_TOKEN": "t"}
    assert resolve_connection(SERVICE, base_url="https://flag.example/x/", environ=env).base_url == \
        "https://flag.example/x"
    assert resolve_connection(SERVICE, environ=env).base_url == "https://config.example/api:v1"
    assert resolve_connection(None, environ=env).base_url == "https://env.example/api:v1"


def test_the_token_comes_only_from_the_variable_the_config_names() -> None:
    conn = resolve_connection(SERVICE, environ={"ACME_TOKEN": " acme-secret\n", "HRIMPORT_TOKEN": "other"})
    assert conn.token == "acme-secret" and conn.token_env == "ACME_TOKEN"
    assert "acme-secret" not in repr(conn)
    with pytest.raises(ConfigError, match="set the environment variable ACME_TOKEN"):
        resolve_connection(SERVICE, environ={"HRIMPORT_TOKEN": "other"})


def test_the_customer_id_comes_from_the_config_then_the_environment() -> None:
    env = {"ACME_TOKEN": "t", "HRIMPORT_TOKEN": "t", "HRIMPORT_CUSTOMER_ID": "42"}
    assert resolve_connection(SERVICE, environ=env).customer_id == "100"
    assert resolve_connection(ServiceSettings(base_url="https://a.example/x"), environ=env).customer_id == "42"
    with pytest.raises(ConfigError, match="HRIMPORT_CUSTOMER_ID must be the company's number, not 'acme'"):
        resolve_connection(None, environ={**env, "HRIMPORT_CUSTOMER_ID": "acme"})


def test_nothing_set_means_the_embedded_sandbox_with_its_demo_tokens() -> None:
    conn = resolve_connection(None, environ={})
    assert conn.embedded and conn.base_url is None
    assert (conn.token, conn.customer_id) == (SANDBOX_CUSTOMER_TOKEN, SANDBOX_CUSTOMER_ID)
    assert resolve_connection(None, environ={}, vendor=True).token == SANDBOX_VENDOR_TOKEN
    assert resolve_connection(None, environ={"HRIMPORT_BASE_URL": "  "}).embedded


@pytest.mark.parametrize("url", ["ftp://example.com/x", "example.com/api", "https://"])
def test_a_base_url_that_is_not_http_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="^--base-url '.*' is not an http\\(s\\) URL"):  # names where it was set
        resolve_connection(None, base_url=url, environ={"HRIMPORT_TOKEN": "t"})


@pytest.mark.parametrize("url, refused", [
    ("https://user@api.example.com/api:v1", "--base-url has a user name or password in it (https://***@api"),
    ("https://:pw@api.example.com/api:v1", "--base-url has a user name or password in it (https://***:***@api"),
    ("https://api.example.com/api:v1?", "--base-url has a query string (https://api.example.com/api:v1?)"),
    ("https://api.example.com/api:v1/?v=2#top", "--base-url has a query string (https://api.example.com/api:v1/?v=***"),
    ("https://api.example.com/team@acme/api:v1", None),  # an @ in the path is the path's
    ("https://api.example.com/api:v1#why?", None),
])
def test_a_base_url_with_a_user_or_a_query_string_is_refused(url: str, refused: str | None) -> None:
    if refused is None:
        assert resolve_connection(None, base_url=url, environ={"HRIMPORT_TOKEN": "t"}).base_url == url
        return
    with pytest.raises(ConfigError) as caught:
        resolve_connection(None, base_url=url, environ={"HRIMPORT_TOKEN": "t"})
    assert str(caught.value).startswith(refused)


def test_a_report_shows_the_service_without_credentials_or_query() -> None:
    assert service_host("https://user:pw@api.example.com:8443/api:v1?sig=abc") == "https://api.example.com:8443/api:v1"


@pytest.mark.parametrize("command", [
    ["timeoff", "import", "c.toml", "f.xlsx"], ["leave-days", "SG", "2024-01-01", "2024-01-02"], ["customers"],
    ["staff", "import", "c.toml", "f.csv"],
])
def test_no_command_takes_a_token_on_the_command_line(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--token", "secret"])
    assert result.exit_code == 2
    assert "No such option '--token'" in result.stderr


def _leave_file(tmp_path: Path) -> Path:
    return write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", dt.date(2024, 3, 4), dt.date(2024, 3, 8), "", "", "MY", "", ""]])


def test_the_configs_base_url_wins_over_the_environment(tmp_path: Path, sandbox: Any) -> None:
    add_staff(sandbox, [("000101", "MY")])
    config = tmp_path / "leave.toml"
    config.write_text(CONFIG.format(extra="", columns="").replace(
        "customer_id = 99", f'customer_id = 99\nbase_url = "{sandbox.base_url}"'), encoding="utf-8")
    env = {"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": "http://127.0.0.1:9/nowhere"}
    result = CliRunner().invoke(main, ["timeoff", "import", str(config), str(_leave_file(tmp_path)),
                                       "--report-dir", str(tmp_path / "r")], env=env)
    assert result.exit_code == 0, result.output
    assert len(sandbox.time_off(99)) == 1


def test_the_option_wins_over_the_config(tmp_path: Path, sandbox: Any) -> None:
    add_staff(sandbox, [("000101", "MY")])
    config = tmp_path / "leave.toml"
    config.write_text(CONFIG.format(extra="", columns="").replace(
        "customer_id = 99", 'customer_id = 99\nbase_url = "http://127.0.0.1:9/nowhere"'), encoding="utf-8")
    result = CliRunner().invoke(main, ["timeoff", "import", str(config), str(_leave_file(tmp_path)),
                                       "--base-url", sandbox.base_url, "--report-dir", str(tmp_path / "r")],
                                env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": ""})
    assert result.exit_code == 0, result.output
    assert len(sandbox.time_off(99)) == 1


def test_an_import_with_nothing_set_goes_to_the_embedded_sandbox_and_says_so(tmp_path: Path) -> None:
    config = tmp_path / "leave.toml"
    config.write_text(CONFIG.format(extra="", columns=""), encoding="utf-8")
    db = tmp_path / "embedded.db"
    result = CliRunner().invoke(main, ["timeoff", "import", str(config), str(_leave_file(tmp_path)),
                                       "--report-dir", str(tmp_path / "r")],
                                env={"HRIMPORT_TOKEN": "", "HRIMPORT_BASE_URL": "", "HRIMPORT_SANDBOX_DB": str(db)})
    # the embedded sandbox starts with no staff: the row is refused for an unknown staff id
    assert result.exit_code == 1, result.output
    assert "using the embedded sandbox, data kept in " + str(db) in result.stderr
    assert "the service does not know staff '000101'" in result.stdout


@pytest.mark.parametrize("kind", ["staff", "timeoff"])
def test_an_import_with_no_customer_id_anywhere_is_refused_before_anything_is_sent(
        tmp_path: Path, sandbox: Any, kind: str) -> None:
    # a config that never said which company, and no $HRIMPORT_CUSTOMER_ID: not a row's problem for HR
    if kind == "staff":
        config = write_config(tmp_path / "staff.toml")
        data = write_csv(tmp_path / "staff.csv", [person(1), person(2)])
    else:
        add_staff(sandbox, [("000101", "MY")])
        config = tmp_path / "leave.toml"
        config.write_text(CONFIG.format(extra="", columns=""), encoding="utf-8")
        data = _leave_file(tmp_path)
    config.write_text(config.read_text().replace("customer_id = 99\n", ""), encoding="utf-8")
    sandbox.clear_requests()
    result = CliRunner().invoke(main, [kind, "import", str(config), str(data), "--report-dir", str(tmp_path / "r")],
                                env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url,
                                     "HRIMPORT_CUSTOMER_ID": ""})
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == (
        f"Error: no customer id: set customer_id in the [service] table of {config.name}, or $HRIMPORT_CUSTOMER_ID "
        "(the company's number)")
    assert [r for r in sandbox.requests() if "staff" in r["path"] or "time-off" in r["path"]] == []
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").rglob("report.html"))
