"""``hrimport leave-days``: the service's figure, the raw answer, and one clear line for bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hrimport.cli import main


def leave_days(*args: str, sandbox: Any | None = None, **env: str) -> Result:
    environ = {"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url if sandbox else "",
               **env}
    return CliRunner().invoke(main, ["leave-days", *args], env=environ, catch_exceptions=False)


@pytest.mark.parametrize(("args", "printed"), [
    (("SG", "2024-03-04", "2024-03-08"), "5"),
    (("SG", "2024-03-04", "2024-03-07", "--half-start"), "3.5"),
    (("sg", "2024-03-04", "2024-03-08", "--half-start", "--half-end"), "4"),
    (("SG", "2024-08-05", "2024-08-09"), "4"),  # 9 August: National Day
    (("MY", "2024-06-08", "2024-06-09"), "0"),  # a weekend
    (("SG", "2024-03-04", "2024-03-04", "--half-end"), "0.5"),
    (("us-ca", "2025-03-31", "2025-04-04"), "4"),  # a region's ISO 3166-2 code: California's Cesar Chavez Day
    (("DE-BY", "2025-06-16", "2025-06-20"), "4"),  # Bavaria's Corpus Christi (DE alone: 5)
])
def test_prints_the_number_of_leave_days_the_service_counts(sandbox: Any, args: tuple[str, ...],
                                                            printed: str) -> None:
    result = leave_days(*args, sandbox=sandbox)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{printed}\n"
    assert result.stderr == ""
    assert [r["path"] for r in sandbox.requests()] == ["/sandbox/api/calculate-total-days"]


def test_json_prints_the_services_answer(sandbox: Any) -> None:
    result = leave_days("SG", "2024-03-04", "2024-03-07", "--half-start", "--json", sandbox=sandbox)
    assert result.exit_code == 0
    answer = sandbox.http.post("/api/calculate-total-days", headers=sandbox.auth(), json={
        "country": "SG", "start_date": "2024-03-04", "end_date": "2024-03-07", "is_half_start_date": True,
        "is_half_end_date": False}).json()
    assert json.loads(result.stdout) == answer == {"totaldays": 3.5}


@pytest.mark.parametrize(("args", "message"), [
    (("SG", "2024-02-30", "2024-03-01"), "Error: START '2024-02-30' is not a date: write it as YYYY-MM-DD"),
    (("SG", "2024-03-01", "tomorrow"), "Error: END 'tomorrow' is not a date"),
    (("SG", "2024-03-08", "2024-03-04"), "Error: the service cannot count SG 2024-03-08..2024-03-04: end_date: "),
])
def test_bad_input_is_one_line_and_exit_2(sandbox: Any, args: tuple[str, ...], message: str) -> None:
    result = leave_days(*args, sandbox=sandbox)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1


@pytest.mark.parametrize(("country", "message"), [
    ("US-XX", ("Error: COUNTRY 'US-XX' is not a region of United States (US) that ISO 3166-2 lists; write the "
               "two-letter country code US, or the region's code as ISO 3166-2 writes it, such as US-AK for Alaska\n")),
    ("zz-ab", ("Error: COUNTRY 'zz-ab' is not a region code ISO 3166-2 lists (ZZ is no country's code); write the "
               "two-letter country code, such as SG, or a region's code as ISO 3166-2 writes it, such as US-CA\n")),
])
def test_a_region_code_iso_does_not_list_is_refused_as_the_import_refuses_it_and_nothing_is_sent(
        sandbox: Any, country: str, message: str) -> None:
    result = leave_days(country, "2025-03-31", "2025-04-04", sandbox=sandbox)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)
    assert sandbox.requests() == []


@pytest.mark.parametrize(("country", "message"), [
    ("Malaysia", "Error: COUNTRY 'Malaysia' is not an ISO 3166 two-letter code: write MY for Malaysia\n"),
    ("MYS", "Error: COUNTRY 'MYS' is not an ISO 3166 two-letter code: write MY for Malaysia\n"),
    ("马来西亚", "Error: COUNTRY '马来西亚' is not an ISO 3166 two-letter code: write MY for Malaysia\n"),
    ("UK", "Error: COUNTRY 'UK' is not an ISO 3166 two-letter code: write GB for United Kingdom\n"),
    ("Congo", ("Error: COUNTRY 'Congo' is not an ISO 3166 two-letter code, and could be Congo - Kinshasa (CD) or "
               "Congo - Brazzaville (CG): write the code of the one meant\n")),
    ("Atlantis", ("Error: COUNTRY 'Atlantis' is not a country code: write the two-letter ISO 3166 code, such as SG "
                  "or MY, or a region's ISO 3166-2 code, such as US-CA\n")),
])
def test_a_country_written_as_a_name_is_refused_before_sending_saying_which_code_to_write(
        sandbox: Any, country: str, message: str) -> None:
    """The import reads 'Malaysia' in a country cell as MY and its report shows it; the command line shows nothing
    after the answer, so a name is not rewritten there: the user is told the code, and nothing is sent."""
    result = leave_days(country, "2025-03-03", "2025-03-07", sandbox=sandbox)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)
    assert sandbox.requests() == []


def test_without_a_service_the_embedded_sandbox_answers_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "embedded.db"
    result = leave_days("SG", "2024-03-04", "2024-03-08", HRIMPORT_SANDBOX_DB=str(db), HRIMPORT_TOKEN="")
    assert result.exit_code == 0, result.output
    assert result.stdout == "5\n"
    assert "using the embedded sandbox" in result.stderr and str(db) in result.stderr
    assert db.exists()


def test_a_refused_token_exits_4_without_showing_it(sandbox: Any) -> None:
    result = leave_days("SG", "2024-03-04", "2024-03-08", sandbox=sandbox, HRIMPORT_TOKEN="wrong-secret-token")
    assert result.exit_code == 4
    assert result.stderr.startswith("Error: the service refused the token")
    assert "wrong-secret-token" not in result.output


def test_the_token_is_not_an_option(sandbox: Any) -> None:
    result = leave_days("SG", "2024-03-04", "2024-03-08", "--token", "demo-customer-99", sandbox=sandbox)
    assert result.exit_code == 2
    assert "No such option '--token'" in result.stderr
    assert sandbox.requests() == []
