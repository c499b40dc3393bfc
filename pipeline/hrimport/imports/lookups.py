"""The read-only use cases: ask the service how many leave days a period holds, list the vendor's customers.

Like ``import_file`` each connects as the config-less commands do (``--base-url``, ``$HRIMPORT_BASE_URL``,
else the embedded sandbox; the token from ``$HRIMPORT_TOKEN``), makes one call and returns plain data.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from hrimport.errors import RequestRejected, UsageError
from hrimport.regions import country_name, looks_like_region_code, region_code, unknown_region_advice
from hrimport.service.client import ServiceClient
from hrimport.service.connection import Target, open_target, resolve_connection

__all__ = ["count_leave_days", "country_to_send", "list_customers"]


def count_leave_days(
    country: str, first: dt.date, last: dt.date, *, half_start: bool = False, half_end: bool = False,
    base_url: str | None = None,
) -> float | int:
    """The leave days from ``first`` to ``last`` in ``country`` as the calculation endpoint answers them
    (``totaldays``: the spec types it an integer, yet half days make 3.5).

    ``country``: a country's two-letter code or a region's ISO 3166-2 code (US-CA), in any case, as a time-off
    file's country is read (``hrimport.regions``): a region code ISO does not list is refused as the import refuses
    it, before anything is sent, and so is anything else (``country_to_send``). Raises ``UsageError`` for that,
    and when the service refuses the question.
    """
    code = country_to_send(country)
    with open_target(resolve_connection(base_url=base_url)) as target:
        try:
            return _client(target).calculate_total_days(code, first, last, half_start, half_end)
        except RequestRejected as exc:
            raise UsageError(f"the service cannot count {code} {first}..{last}: {exc.reasons}") from None


def country_to_send(country: str) -> str:
    """The code the calculation is asked for, for COUNTRY as typed: a two-letter country code or a listed region's
    ISO 3166-2 code, in any case (``my`` -> ``MY``, ``us-ca`` -> ``US-CA``).

    Anything else raises ``UsageError`` before anything is sent, saying what to write: a country's name or its
    three-letter code is not rewritten (the argument is what the user typed: principle 1), it is named
    (``Malaysia``: "write MY for Malaysia"), as the import names a country's name in its report.
    """
    typed = country.strip()
    code = typed.upper()
    if looks_like_region_code(code):
        listed = region_code(code)
        if listed is None:
            raise UsageError(f"COUNTRY {unknown_region_advice(typed)}")
        return listed
    if len(code) == 2 and country_name(code) is not None:
        return code
    # the name table (and pandas with it) is loaded only to say what to write: a code never loads it
    from hrimport.normalize.countries import code_to_write, country_candidates

    if advice := code_to_write(typed):
        raise UsageError(f"COUNTRY '{typed}' is not an ISO 3166 two-letter code: {advice}")
    if candidates := country_candidates(typed):
        raise UsageError(f"COUNTRY '{typed}' is not an ISO 3166 two-letter code, and could be {candidates}: write "
                         "the code of the one meant")
    raise UsageError(f"COUNTRY '{typed}' is not a country code: write the two-letter ISO 3166 code, such as SG or "
                     "MY, or a region's ISO 3166-2 code, such as US-CA")


def list_customers(*, base_url: str | None = None) -> dict[str, Any]:
    """The vendor's answer: its ``id``, ``name`` and ``customer_list``. A token without vendor portal access
    raises ``AccessDenied`` (the caller says so); any other refusal ``UsageError``."""
    from hrimport.errors import AccessDenied

    with open_target(resolve_connection(base_url=base_url, vendor=True)) as target:
        try:
            return _client(target).get_customers()
        except AccessDenied:
            raise
        except RequestRejected as exc:
            raise UsageError(f"the service refused the customer listing: {exc.reasons}") from None


def _client(target: Target) -> ServiceClient:
    """The client of an online target (``open_target`` without ``offline`` always has one)."""
    assert isinstance(target.client, ServiceClient)
    return target.client
