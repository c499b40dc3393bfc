"""``hrimport leave-days`` and ``hrimport customers``: the calculation and vendor endpoints, one call each."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import click

from hrimport.cli.common import service_base_url_option
from hrimport.errors import AccessDenied, UsageError
from hrimport.listing import columns_taken, padded
from hrimport.timeoff.days import format_days

#: Issue 5: a token without vendor portal access gets the service's message "and exit 1".
EXIT_ACCESS_DENIED = 1


@click.command("leave-days")
@click.argument("country")
@click.argument("start")
@click.argument("end")
@click.option("--half-start", is_flag=True, help="The first day is a half day.")
@click.option("--half-end", is_flag=True, help="The last day is a half day.")
@click.option("--json", "as_json", is_flag=True, help="Print the service's answer as JSON.")
@service_base_url_option
def leave_days(country: str, start: str, end: str, half_start: bool, half_end: bool,
               as_json: bool, base_url: str | None) -> None:
    """Print the leave days from START to END (YYYY-MM-DD, inclusive) in COUNTRY, as the service counts
    them: weekends and public holidays of the country left out, a half start or end taking half a day.

    COUNTRY is an ISO 3166 alpha-2 code (SG, MY, CN...), or a region's ISO 3166-2 code (US-CA, DE-BY...),
    whose public holidays are left out; a country's name is refused, saying which code to write. The token is
    read from $HRIMPORT_TOKEN.

    Example:

    \b
        hrimport leave-days SG 2024-03-04 2024-03-08 --half-end
    """
    from hrimport.imports.lookups import count_leave_days  # httpx, and the embedded sandbox when it is used

    days = count_leave_days(country, _date("START", start), _date("END", end), half_start=half_start,
                            half_end=half_end, base_url=base_url)
    if as_json:
        # the answer is {"totaldays": n} (spec, endpoint 4)
        click.echo(json.dumps({"totaldays": days}))
    else:
        click.echo(format_days(Decimal(str(days))))


def _date(name: str, value: str) -> dt.date:
    """A YYYY-MM-DD argument, checked before anything is started."""
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(f"{name} {value!r} is not a date: write it as YYYY-MM-DD, e.g. 2024-03-04") from None


@click.command("customers")
@click.option("--json", "as_json", is_flag=True, help="Print the service's answer as JSON.")
@service_base_url_option
def customers(as_json: bool, base_url: str | None) -> None:
    """List the customers of the vendor the token belongs to: id, name and whether each is active.

    Needs a vendor user's token with vendor portal access, read from $HRIMPORT_TOKEN; any other token gets
    the service's "Access Denied" and exit 1.

    Example:

    \b
        HRIMPORT_TOKEN=... hrimport customers
    """
    from hrimport.imports.lookups import list_customers

    try:
        answer = list_customers(base_url=base_url)
    except AccessDenied as exc:
        message = exc.body.get("message") if isinstance(exc.body, dict) else None
        click.echo(f"Error: {message or exc.reasons}: this token's user has no vendor portal access", err=True)
        raise SystemExit(EXIT_ACCESS_DENIED) from None
    if as_json:
        click.echo(json.dumps(answer, ensure_ascii=False, indent=2))
        return
    for line in customer_table(answer):
        click.echo(line)


def customer_table(answer: dict[str, Any]) -> list[str]:
    """The vendor's name, then one aligned line per customer; inactive customers marked."""
    raw = answer.get("customer_list")
    entries: list[Any] = raw if isinstance(raw, list) else []
    lines = [f"{answer.get('name', '')} (vendor {answer.get('id', '?')}): {len(entries)} customer(s)"]
    rows = [("ID", "Name", "Active")] + [
        (str(c.get("id", "")), str(c.get("name", "")), "yes" if c.get("is_active") else "no (inactive)")
        for c in entries if isinstance(c, dict)
    ]
    widths = [max(columns_taken(r[i]) for r in rows) for i in range(2)]
    lines += [f"{padded(r[0], widths[0])}  {padded(r[1], widths[1])}  {r[2]}".rstrip() for r in rows]
    return lines

