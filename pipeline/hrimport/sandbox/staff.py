"""Staff create-or-update (spec: endpoints 2 and 3) and the ``user`` output record.

Records are keyed by (customer id, ``customer_system_id_type``, ``customer_system_id``). An update
merges: fields sent replace the stored ones, a field sent as null or "" clears it, absent fields keep
their stored value (documented choice; the spec does not say). ``Alterations`` (off by default) make the
store keep some values otherwise than sent, as real platforms do.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Mapping
from typing import Any, Literal

from hrimport.fields import Field, staff_fields, staff_output_fields
from hrimport.sandbox.alterations import Alterations
from hrimport.sandbox.openapi import MAX_BULK_ELEMENTS
from hrimport.sandbox.store import Principal, Store, now
from hrimport.sandbox.validation import (
    Detail,
    RequestInvalid,
    check_country_change,
    check_data_type_names,
    check_fields,
    check_intern_rule,
)

Outcome = Literal["add", "update"]

def element_fields() -> tuple[Field, ...]:
    """Staff fields inside one request (bulk elements lack the envelope's ``customer_id``)."""
    return tuple(f for f in staff_fields() if not f.envelope)


def check_staff(data: Mapping[str, Any], index: int | None = None) -> tuple[dict[str, Any], list[Detail]]:
    """Stateless checks of one staff body or bulk element: types, required fields, the intern rule."""
    fields = element_fields()
    values, details = check_fields(data, fields, index=index)
    return values, details + check_intern_rule(values, fields, index)


def role_of(record: Mapping[str, Any]) -> str:
    """``role`` from the flags (api-notes: Staff, Manager, Manager & Staff, Intern)."""
    if record.get("is_intern"):
        return "Intern"
    if record.get("is_manager"):
        return "Manager & Staff" if record.get("is_employee") else "Manager"
    return "Staff"


def status_of(record: Mapping[str, Any], today: dt.date | None = None) -> str:
    """``status`` from the dates, in the spec sample's lower case (``regular``): onboarding before the
    job starts, probation until its end, offboarded after the last working day."""
    today = today or dt.date.today()

    def date(key: str) -> dt.date | None:
        value = record.get(key)
        return dt.date.fromisoformat(value) if value else None

    last, start, probation = date("last_working_day"), date("job_start_date"), date("probation_end_date")
    if last and last < today:
        return "offboarded"
    if start and start > today:
        return "onboarding"
    if probation and probation >= today:
        return "probation"
    return "regular"


def user_record(staff_id: int, record: Mapping[str, Any], *, sample_typo: bool = False) -> dict[str, Any]:
    """The spec's ``user`` object. ``sample_typo``: the single endpoint spells ``passpost_issue_date``
    as its published sample does (spec, "Staff output record")."""
    out: dict[str, Any] = {}
    for spec in staff_output_fields():
        key = spec.name
        if key == "id":
            value: Any = staff_id
        elif key == "role":
            value = role_of(record)
        elif key == "status":
            value = status_of(record)
        else:
            value = record.get(spec.from_input or key)
            if value is None:
                value = None if spec.null_when_unknown else ""
        out["passpost_issue_date" if sample_typo and key == "passport_issue_date" else key] = value
    return out


def upsert_staff(
    conn: sqlite3.Connection,
    customer_id: int,
    values: Mapping[str, Any],
    configured: set[str],
    index: int | None = None,
    alterations: Alterations | None = None,
) -> tuple[Outcome, int, dict[str, Any]] | list[Detail]:
    """Create or update one staff record inside the caller's transaction; details if a stateful rule fails.

    Stateful rules: a country change needs ``old_country`` (the stored country) and
    ``new_country_effective_date``; ``customer_data_type`` names must be configured for the company.
    The values pass through ``alterations`` (if any) on their way into the store.
    """
    key = (customer_id, values["customer_system_id_type"], values["customer_system_id"])
    row = conn.execute(
        "SELECT id, record FROM staff WHERE customer_id = ? AND customer_system_id_type = ? "
        "AND customer_system_id = ?",
        key,
    ).fetchone()
    stored: dict[str, Any] = json.loads(row["record"]) if row else {}
    details = check_country_change(values, stored.get("country"), staff_fields(), index)
    details += check_data_type_names(values, configured, customer_id, index)
    if details:
        return details
    if alterations is not None:
        values = alterations.stored_form(values)
    record = dict(stored)
    for name, value in values.items():
        if value is None:
            record.pop(name, None)
        else:
            record[name] = value
    if row is None:
        # Spec defaults: is_manager false, is_employee true, for an intern too: the spec states no other
        # default, so {"is_intern": true} alone clashes with is_employee's true, as the platform may find
        record.setdefault("is_intern", False)
        record.setdefault("is_manager", False)
        if record["is_intern"] and "is_employee" not in record:
            return [Detail("is_intern", "cannot be true together with is_employee, which defaults to true; "
                           "send is_employee: false with it", index)]
        record.setdefault("is_employee", True)
    if record.get("is_intern") and (record.get("is_manager") or record.get("is_employee")):
        # A stored flag can clash with a newly sent one (e.g. is_intern true on an employee's update).
        return [
            Detail(
                "is_intern",
                "cannot be true together with is_manager or is_employee "
                "(the stored record has one of them true; send it as false)",
                index,
            )
        ]
    stamp = now()
    text = json.dumps(record, ensure_ascii=False)
    if row is None:
        cur = conn.execute(
            "INSERT INTO staff (customer_id, customer_system_id_type, customer_system_id, record, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            (*key, text, stamp, stamp),
        )
        return "add", int(cur.lastrowid or 0), record
    conn.execute("UPDATE staff SET record = ?, updated_at = ? WHERE id = ?", (text, stamp, row["id"]))
    return "update", int(row["id"]), record


def _customer_id(data: Mapping[str, Any]) -> int:
    """The envelope's ``customer_id`` (integer or numeric string, spec and api-notes), or 400."""
    envelope = tuple(f for f in staff_fields() if f.envelope)
    values, details = check_fields(data, envelope)
    if details:
        raise RequestInvalid(details)
    return int(values["customer_id"])


def add_edit_staff(
    store: Store, principal: Principal, data: Mapping[str, Any], alterations: Alterations | None = None
) -> dict[str, Any]:
    """Spec, endpoint 2: create or update one staff record; the response body (or ``RequestInvalid``)."""
    envelope = tuple(f for f in staff_fields() if f.envelope)
    head, details = check_fields(data, envelope)
    values, more = check_staff(data)
    if details or more:
        raise RequestInvalid(details + more)
    customer_id = int(head["customer_id"])
    if not store.may_act_for(principal, customer_id):
        return {"user": None, "message": "permission denied", "id": principal.user_id}
    with store.write() as conn:
        result = upsert_staff(conn, customer_id, values, store.data_types(customer_id, conn),
                              alterations=alterations)
        if isinstance(result, list):
            raise RequestInvalid(result)  # raised inside the transaction: nothing is kept
    outcome, staff_id, record = result
    return {
        "user": user_record(staff_id, record, sample_typo=True),
        "message": f"{outcome} successfully",
        "id": principal.user_id,
    }


def bulk_add_edit_staff(
    store: Store, principal: Principal, data: Mapping[str, Any], alterations: Alterations | None = None
) -> dict[str, Any]:
    """Spec, endpoint 3: all elements or none (documented choice); every bad element is listed by index."""
    customer_id = _customer_id(data)
    elements = data.get("bulk_staff_data")
    if not isinstance(elements, list) or not elements:
        raise RequestInvalid([Detail("bulk_staff_data", "is required: a non-empty array of staff objects")])
    if len(elements) > MAX_BULK_ELEMENTS:
        raise RequestInvalid(
            [
                Detail(
                    "bulk_staff_data",
                    f"has {len(elements)} elements; at most {MAX_BULK_ELEMENTS} per request",
                )
            ]
        )
    details: list[Detail] = []
    checked: list[dict[str, Any] | None] = []
    for index, element in enumerate(elements):
        if not isinstance(element, dict):
            details.append(Detail("bulk_staff_data", "each element must be a JSON object", index))
            checked.append(None)
            continue
        values, problems = check_staff(element, index)
        if "customer_id" in element:
            # Spec: "In the bulk endpoint it sits once at the top level of the body, not inside each element."
            # Refused even when it repeats the top-level one: the platform need not ignore it.
            problems.append(Detail("customer_id", "sits once at the top level of the body, not inside an element; "
                                   "leave it out of the element", index))
        details += problems
        checked.append(None if problems else values)
    if not store.may_act_for(principal, customer_id):
        if details:
            raise RequestInvalid(details)
        denied = {"user": None, "message": "Permission Denied", "id": principal.user_id}
        return {"result": [dict(denied) for _ in elements]}
    results: list[dict[str, Any]] = []
    with store.write() as conn:
        configured = store.data_types(customer_id, conn)
        for index, element_values in enumerate(checked):
            if element_values is None:
                continue
            outcome = upsert_staff(conn, customer_id, element_values, configured, index, alterations)
            if isinstance(outcome, list):
                details += outcome
            else:
                kind, staff_id, record = outcome
                results.append(
                    {
                        "user": user_record(staff_id, record),
                        "message": f"{kind.title()} Successfully",
                        "id": principal.user_id,
                    }
                )
        if details:
            raise RequestInvalid(sorted(details, key=lambda d: d.index or 0))  # rolls the batch back
    return {"result": results}
