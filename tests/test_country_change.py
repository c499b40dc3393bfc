"""HR imports people who may have moved country (the platform, over HTTP to the sandbox).

The interface needs ``old_country`` and ``new_country_effective_date`` "only when the staff member's country
is being changed", and refuses "a country change without" them. A row whose old country is another country
than its country moves, and without the date the platform would refuse it: not sent (the spec's rule). A row
giving only the date, or an old country equal to its country, may not move at all: only the platform, which
holds each person's country, can tell. Such a row is sent as written with a ``country-change-incomplete``
warning (principle 2), and ``[staff] strict_checks = ["country-change-incomplete"]`` holds it back instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.staff_files import person, write_config, write_csv
from tests.test_staff_import import outcome_of, run_import

pytestmark = pytest.mark.usefixtures("instant_retries")

COUNTRY_FIELDS = ("country", "old_country", "new_country_effective_date")


def moves(tmp_path: Path) -> Path:
    """The month after five people were imported in MY: row 2 moves to SG without a date, row 3 names MY as
    the country left though it stays in MY, row 4 gives a date and moves to SG, row 5 gives a date and stays,
    row 6 moves with both."""
    return write_csv(tmp_path / "moves.csv", [
        person(1, Country="SG", **{"Old Country": "MY"}),
        person(2, **{"Old Country": "MY"}),
        person(3, Country="SG", **{"Move Date": "2024-05-01"}),
        person(4, **{"Move Date": "2024-05-01"}),
        person(5, Country="SG", **{"Old Country": "MY", "Move Date": "2024-05-01"}),
    ])


def sent_country_fields(sandbox: Any) -> dict[str, dict[str, str]]:
    """external id -> the country fields the sandbox received for it, in the last run's bodies."""
    elements = [e for body in sandbox.bodies for e in json.loads(body)["bulk_staff_data"]]
    return {e["customer_system_id"]: {k: e[k] for k in COUNTRY_FIELDS if k in e} for e in elements}


def imported_in_my(tmp_path: Path, sandbox: Any) -> None:
    result, _ = run_import(tmp_path, sandbox, [person(n) for n in range(1, 6)])
    assert result.exit_code == 0, result.output
    sandbox.bodies.clear()


def test_a_move_without_its_date_is_held_back_and_a_doubt_is_sent_with_a_warning(
        tmp_path: Path, sandbox: Any) -> None:
    imported_in_my(tmp_path, sandbox)

    result, summary = run_import(tmp_path, sandbox, moves(tmp_path))

    assert result.exit_code == 1, result.output
    # the spec's refusal, told before sending: MY -> SG needs the date
    assert outcome_of(tmp_path, "000001")["outcome"] == "invalid"
    assert ("Row 2: the country changes from MY ('Old Country') to SG ('Country'), and the platform needs the "
            "date the new country takes effect ('Move Date') with a change, which is empty; not sent: enter the "
            "date.") in result.output
    # the doubts: sent as written, each with its warning
    assert ("Warning: Row 3: 'Old Country' is MY, the same country as 'Country', and 'Move Date' is empty: the "
            "file shows no country change, and only a change needs both; kept as written (if the person moved, enter "
            "the country they left and the date).") in result.output
    assert ("Warning: Rows 4 and 5: 'Move Date' is 2024-05-01 and 'Old Country' is empty: a country change needs "
            "both, and whether the country changes only the platform knows (it holds the person's country); kept as "
            "written (the platform refuses the row if it does: then enter the country the person left).") in (
        result.output)
    assert sent_country_fields(sandbox) == {
        "000002": {"country": "MY", "old_country": "MY"},
        "000003": {"country": "SG", "new_country_effective_date": "2024-05-01"},
        "000004": {"country": "MY", "new_country_effective_date": "2024-05-01"},
        "000005": {"country": "SG", "old_country": "MY", "new_country_effective_date": "2024-05-01"},
    }
    # the platform stored the rows that do not move and the complete move, and refused row 4's move itself
    stored = {s["customer_system_id"]: s["country"] for s in sandbox.staff(99)}
    assert stored == {"000001": "MY", "000002": "MY", "000003": "MY", "000004": "MY", "000005": "SG"}
    assert {e: outcome_of(tmp_path, e)["outcome"] for e in ("000002", "000003", "000004", "000005")} == {
        "000002": "updated", "000003": "rejected", "000004": "updated", "000005": "updated"}
    assert ("Row 4: the service rejected 'old_country': is required when the country changes (MY -> SG)"
            in result.output)
    assert summary["problems"]["country-change-incomplete"] == 1
    assert summary["warnings"] == {"country-change-incomplete": 3}


def test_strict_checks_hold_the_doubts_back_too(tmp_path: Path, sandbox: Any) -> None:
    imported_in_my(tmp_path, sandbox)
    config = write_config(tmp_path / "strict.toml", strict_checks=("country-change-incomplete",))

    result, summary = run_import(tmp_path, sandbox, moves(tmp_path), config=config)

    assert result.exit_code == 1, result.output
    assert ("Rows 4 and 5: 'Move Date' is 2024-05-01 and 'Old Country' is empty: a country change needs both, "
            "and whether the country changes only the platform knows (it holds the person's country); not sent "
            "([staff] strict_checks lists country-change-incomplete): enter the country the person left, or clear "
            "'Move Date' if the country does not change.") in result.output
    assert ("Row 3: 'Old Country' is MY, the same country as 'Country', and 'Move Date' is empty: the file shows "
            "no country change, and only a change needs both; not sent ([staff] strict_checks lists "
            "country-change-incomplete): if the person moved, enter the country they left and the date, else "
            "clear 'Old Country'.") in result.output
    assert "Warning:" not in result.output
    assert sent_country_fields(sandbox) == {
        "000005": {"country": "SG", "old_country": "MY", "new_country_effective_date": "2024-05-01"}}
    assert {e: outcome_of(tmp_path, e)["outcome"] for e in ("000001", "000002", "000003", "000004")} == {
        "000001": "invalid", "000002": "invalid", "000003": "invalid", "000004": "invalid"}
    assert summary["problems"] == {"country-change-incomplete": 4} and summary["warnings"] == {}
