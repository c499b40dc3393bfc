"""Leave-day calculation and time-off records (spec: endpoints 4 and 5).

Documented choices where the spec says "not shown" (README, sandbox section): unknown staff is 404,
an overlapping period is 409 naming each stored record it overlaps (id, leave type, dates), a token acting
for another company is 403. ``total_days`` is stored as sent: the interface states no rule that it must
equal the calculation (endpoint 4 stays the one place that counts). Every leave type is available in
every country (the platform's per-country entitlements are not modelled).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from hrimport.fields import leave_days_fields, timeoff_fields
from hrimport.sandbox.alterations import Alterations
from hrimport.sandbox.leave_days import LeaveDaysError, count_leave_days, days_json
from hrimport.sandbox.store import Principal, Store, now, time_off_row
from hrimport.sandbox.validation import Detail, RequestInvalid, check_fields, parse_date, resolve_leave_type


def _period(values: Mapping[str, Any]) -> tuple[dt.date, dt.date] | None:
    start, end = values.get("start_date"), values.get("end_date")
    if not start or not end:
        return None
    first, last = parse_date(start), parse_date(end)
    return (first, last) if first is not None and last is not None else None


def calculate_total_days(data: Mapping[str, Any]) -> dict[str, Any]:
    """Spec, endpoint 4: ``{"totaldays": n}``, n an integer when whole, else e.g. 3.5."""
    values, details = check_fields(data, leave_days_fields())
    if details:
        raise RequestInvalid(details)
    period = _period(values)
    assert period is not None  # check_fields required both dates and checked they are dates
    start, end = period
    try:
        days = count_leave_days(
            values["country"],
            start,
            end,
            half_start=values["is_half_start_date"],
            half_end=values["is_half_end_date"],
        )
    except LeaveDaysError as exc:
        raise RequestInvalid([Detail(exc.field, exc.reason)]) from None
    return {"totaldays": days_json(days)}


def add_time_off(store: Store, principal: Principal, data: Mapping[str, Any],
                 alterations: Alterations | None = None) -> tuple[int, dict[str, Any]]:
    """Spec, endpoint 5: add one time-off record; (HTTP status, body), or ``RequestInvalid``. With
    ``alterations.whole_days`` its total_days is stored cut to a whole number."""
    values, details = check_fields(data, timeoff_fields())
    leave_type = None
    if values.get("leave_type") and values.get("lang"):
        leave_type, reason = resolve_leave_type(values["leave_type"], values["lang"], store.leave_types())
        if reason:
            details.append(Detail("leave_type", reason))
    # The period must be one endpoint 4 could count (an end before the start, an unknown subdivision...).
    period = _period(values) if not details else None
    if period and leave_type:
        try:
            count_leave_days(values["country"], *period)
        except LeaveDaysError as exc:
            details.append(Detail(exc.field, exc.reason))
    if details:
        raise RequestInvalid(details)
    assert leave_type is not None and period is not None
    sent = values["total_days"]
    if alterations is not None and alterations.whole_days:
        sent = int(sent)  # the spec's time-off record types total_days integer: 4.5 held as 4
    customer_id = int(values["customer_id"])
    if not store.may_act_for(principal, customer_id):
        return 403, {
            "error": "Permission denied",
            "details": [
                {"field": "customer_id", "reason": f"this token may not act for customer {customer_id}"}
            ],
        }
    with store.write() as conn:
        staff = conn.execute(
            "SELECT id, customer_system_id_type FROM staff WHERE customer_id = ? AND customer_system_id = ?",
            (customer_id, values["customer_system_id"]),
        ).fetchall()
        if not staff:
            return 404, {
                "error": "Staff not found",
                "details": [
                    {
                        "field": "customer_system_id",
                        "reason": f"no staff with customer_system_id {values['customer_system_id']!r} "
                        f"for customer {customer_id}; add the staff record first",
                    }
                ],
            }
        if len(staff) > 1:
            types = ", ".join(sorted(r["customer_system_id_type"] for r in staff))
            raise RequestInvalid(
                [
                    Detail(
                        "customer_system_id",
                        f"matches {len(staff)} staff records (customer_system_id_type {types}); it must be unique",
                    )
                ]
            )
        user = staff[0]["id"]
        start, end = (d.isoformat() for d in period)
        clashes = conn.execute(
            "SELECT time_off.*, leave_types.en AS type_en, leave_types.zh AS type_zh FROM time_off "
            "JOIN leave_types ON leave_types.id = time_off.leave_type "
            "WHERE user = ? AND deleted_at = 0 AND start_date <= ? AND end_date >= ?",
            (user, end, start),
        ).fetchall()
        if clashes:
            return 409, {
                "error": "Overlapping time off",
                "details": [
                    {
                        "field": "start_date",
                        "reason": f"{start}..{end} overlaps time-off record {c['id']} "
                        f"({c['start_date']}..{c['end_date']}) of this staff member",
                        "id": c["id"],
                        "leave_type": c["type_zh"] if values["lang"] == "ZH" else c["type_en"],
                        "start_date": c["start_date"],
                        "end_date": c["end_date"],
                    }
                    for c in clashes
                ],
            }
        decision = values.get("decision") or ""
        stamp = now()
        cur = conn.execute(
            "INSERT INTO time_off (user, customer_id, customer_system_id, leave_type, country, approver, "
            "total_days, start_date, end_date, notes, reject_notes, decision, doc_list, created_at, updated_at, "
            "deleted_at, last_modified_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, '[]', ?, ?, 0, ?)",
            (
                user,
                customer_id,
                values["customer_system_id"],
                leave_type.id,
                values["country"],
                principal.user_id if decision else 0,
                float(sent),
                start,
                end,
                values.get("notes") or "",
                decision,
                stamp,
                stamp,
                principal.user_id,
            ),
        )
        row = conn.execute("SELECT * FROM time_off WHERE id = ?", (cur.lastrowid,)).fetchone()
    return 200, {"time_off_data": time_off_row(row), "message": "add successfully"}
