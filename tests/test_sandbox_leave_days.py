"""Leave-day calculation over real HTTP: weekends, public holidays, make-up days, subdivisions, halves."""

from __future__ import annotations

from typing import Any

import pytest

PATH = "/api/calculate-total-days"


def days(
    sandbox: Any,
    country: str,
    start: str,
    end: str,
    half_start: bool = False,
    half_end: bool = False,
    token: str = "demo-customer-99",
    bearer: bool = True,
) -> Any:
    body = {
        "country": country,
        "start_date": start,
        "end_date": end,
        "is_half_start_date": half_start,
        "is_half_end_date": half_end,
    }
    return sandbox.http.post(PATH, json=body, headers=sandbox.auth(token, bearer=bearer))


@pytest.mark.parametrize(
    ("country", "start", "end", "half_start", "half_end", "expected"),
    [
        # Malaysia: Saturday + Sunday are not working days (the published sick-leave example's weekend).
        ("MY", "2024-06-08", "2024-06-09", False, False, 0),
        # Malaysia: Monday 3 June 2024 is the King's birthday, a public holiday.
        ("MY", "2024-06-03", "2024-06-07", False, False, 4),
        ("MY", "2024-06-10", "2024-06-14", False, False, 5),
        # Halves: 0.5 off a counted start or end day; a single counted day with halves is 0.5.
        ("MY", "2024-06-10", "2024-06-14", True, False, 4.5),
        ("MY", "2024-06-10", "2024-06-14", True, True, 4),
        ("MY", "2024-06-10", "2024-06-10", True, False, 0.5),
        ("MY", "2024-06-10", "2024-06-10", True, True, 0.5),
        ("MY", "2024-06-10", "2024-06-10", False, False, 1),
        # A half start on a Saturday takes nothing off: the day does not count anyway.
        ("MY", "2024-06-08", "2024-06-14", True, False, 5),
        # China: Sunday 4 February 2024 is a make-up working day before the Spring Festival.
        ("CN", "2024-02-03", "2024-02-04", False, False, 1),
        # China: the Spring Festival week is off; Sunday 18 February 2024 is a make-up working day.
        ("CN", "2024-02-10", "2024-02-18", False, False, 1),
        # US-CA: the day after Thanksgiving is a California holiday, not a federal one.
        ("US", "2024-11-25", "2024-11-29", False, False, 4),
        ("US-CA", "2024-11-25", "2024-11-29", False, False, 3),
        ("us-ca", "2024-04-01", "2024-04-01", False, False, 0),  # Cesar Chavez Day (observed)
        # Saudi Arabia's weekend is Friday and Saturday.
        ("SA", "2024-06-06", "2024-06-09", False, False, 2),
        # Across a year end: 1 January 2025 is a Singapore public holiday (the next year is loaded too).
        ("SG", "2024-12-30", "2025-01-02", False, False, 3),
    ],
)
def test_working_days_between_two_dates(
    sandbox: Any, country: str, start: str, end: str, half_start: bool, half_end: bool, expected: float
) -> None:
    response = days(sandbox, country, start, end, half_start, half_end)
    assert response.status_code == 200, response.text
    assert response.json() == {"totaldays": expected}
    assert type(response.json()["totaldays"]) is type(expected)  # an integer when whole, else 4.5


def test_half_day_flags_default_to_false_when_left_out(sandbox: Any) -> None:
    body = {"country": "MY", "start_date": "2024-06-10", "end_date": "2024-06-14"}
    assert sandbox.http.post(PATH, json=body, headers=sandbox.auth()).json() == {"totaldays": 5}


@pytest.mark.parametrize("no_value", [None, ""])
def test_half_day_flags_sent_without_a_value_take_their_default_false_as_when_left_out(
    sandbox: Any, no_value: Any
) -> None:
    # Spec, endpoint 4: the flags are "required" with "default false" and not stated nullable: a JSON null
    # (a client serialising an unset flag) is "no value", as absence is, so the default applies.
    body = {"country": "MY", "start_date": "2024-06-10", "end_date": "2024-06-14",
            "is_half_start_date": no_value, "is_half_end_date": True}
    response = sandbox.http.post(PATH, json=body, headers=sandbox.auth())
    assert response.status_code == 200, response.text
    assert response.json() == {"totaldays": 4.5}  # only the half end taken off


@pytest.mark.parametrize(
    ("country", "start", "end", "field"),
    [
        ("MY", "2024-06-14", "2024-06-10", "end_date"),  # end before start
        ("ZZ", "2024-06-10", "2024-06-14", "country"),  # not a country
        ("Malaysia", "2024-06-10", "2024-06-14", "country"),
        ("US-XX", "2024-06-10", "2024-06-14", "country"),  # not a subdivision of the US
        ("MY", "2024-02-30", "2024-03-01", "start_date"),  # impossible date
        ("MY", "2024-06-10", "14/06/2024", "end_date"),
        ("MY", "2000-01-01", "2024-06-10", "end_date"),  # too long a period
    ],
)
def test_uncountable_periods_are_400(sandbox: Any, country: str, start: str, end: str, field: str) -> None:
    response = days(sandbox, country, start, end)
    assert response.status_code == 400
    assert response.json()["error"] == "Invalid request"
    assert [d["field"] for d in response.json()["details"]] == [field]


def test_half_flags_must_be_booleans(sandbox: Any) -> None:
    body = {
        "country": "MY",
        "start_date": "2024-06-10",
        "end_date": "2024-06-14",
        "is_half_start_date": "yes",
    }
    response = sandbox.http.post(PATH, json=body, headers=sandbox.auth())
    assert response.status_code == 400 and response.json()["details"][0]["field"] == "is_half_start_date"


@pytest.mark.parametrize("token", ["demo-customer-100", "demo-vendor"])
def test_any_valid_token_may_calculate_with_or_without_bearer(sandbox: Any, token: str) -> None:
    assert days(sandbox, "MY", "2024-06-10", "2024-06-14", token=token, bearer=False).json() == {
        "totaldays": 5
    }


def test_calculation_needs_a_token(sandbox: Any) -> None:
    response = sandbox.http.post(
        PATH, json={"country": "MY", "start_date": "2024-06-10", "end_date": "2024-06-10"}
    )
    assert response.status_code == 401 and response.json()["error"] == "Invalid request"
