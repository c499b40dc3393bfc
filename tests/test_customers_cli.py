"""``hrimport customers``: the vendor's customers as a table or the raw answer; "Access Denied" is exit 1."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hrimport.cli import main


def customers(*args: str, sandbox: Any | None = None, token: str = "demo-vendor", **env: str) -> Result:
    environ = {"HRIMPORT_TOKEN": token, "HRIMPORT_BASE_URL": sandbox.base_url if sandbox else "", **env}
    return CliRunner().invoke(main, ["customers", *args], env=environ, catch_exceptions=False)


def test_a_vendor_token_lists_its_customers_with_inactive_ones_marked(sandbox: Any) -> None:
    result = customers(sandbox=sandbox)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Demo Vendor (vendor 1): 3 customer(s)",
        "ID   Name              Active",
        "99   Acme Sdn Bhd      yes",
        "100  Lotus Trading Co  yes",
        "101  Dormant Holdings  no (inactive)",
    ]
    assert result.stderr == ""


def test_json_prints_the_services_answer(sandbox: Any) -> None:
    result = customers("--json", sandbox=sandbox)
    assert result.exit_code == 0
    answer = sandbox.http.get("/vendor/get_customer", headers=sandbox.auth("demo-vendor")).json()
    assert json.loads(result.stdout) == answer
    assert [c["id"] for c in answer["customer_list"]] == [99, 100, 101]


@pytest.mark.parametrize("token", ["demo-vendor-noportal", "demo-customer-99"])
def test_a_token_without_vendor_portal_access_gets_the_services_message_and_exit_1(sandbox: Any,
                                                                                   token: str) -> None:
    result = customers(sandbox=sandbox, token=token)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "Error: Access Denied: this token's user has no vendor portal access\n"


def test_chinese_customer_names_line_up(sandbox: Any) -> None:
    from hrimport.sandbox.store import Store

    Store(sandbox.db_path).add_customer(102, "莲花贸易有限公司", vendor_id=1)
    lines = customers(sandbox=sandbox).stdout.splitlines()

    def columns(text: str) -> int:  # terminal columns: a Chinese character takes two
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)

    row = next(line for line in lines if line.startswith("102"))
    assert row.endswith("yes")
    assert columns(row.removesuffix("yes")) == columns(lines[1].removesuffix("Active"))


def test_without_a_service_the_embedded_sandbox_and_its_vendor_token_are_used(tmp_path: Path) -> None:
    result = customers(token="", HRIMPORT_SANDBOX_DB=str(tmp_path / "embedded.db"))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Demo Vendor (vendor 1): 3 customer(s)")
    assert "using the embedded sandbox" in result.stderr


def test_a_base_url_without_a_token_is_one_line_and_exit_2(sandbox: Any) -> None:
    result = customers(sandbox=sandbox, token="")
    assert result.exit_code == 2
    assert result.stderr == ("Error: no token: set the environment variable HRIMPORT_TOKEN to the service's "
                             "auth token\n")
