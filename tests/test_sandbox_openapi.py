"""The served OpenAPI document describes the request bodies as the field specification defines them."""

from __future__ import annotations

from typing import Any

import pytest

from hrimport.fields import Field, leave_days_fields, staff_fields, timeoff_fields


@pytest.fixture
def document(sandbox: Any) -> dict[str, Any]:
    response = sandbox.http.get(sandbox.root_url + "/openapi.json")
    assert response.status_code == 200
    return response.json()


def body_schema(document: dict[str, Any], path: str, method: str = "post") -> dict[str, Any]:
    ref = document["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    return document["components"]["schemas"][ref.rsplit("/", 1)[1]]


def required(fields: tuple[Field, ...]) -> list[str]:
    return [f.name for f in fields if f.is_required and f.default is None]


def test_every_spec_endpoint_is_documented_under_the_instance_segment(document: dict[str, Any]) -> None:
    assert {p for p in document["paths"] if p.startswith("/sandbox")} == {
        "/sandbox/vendor/get_customer",
        "/sandbox/api/add_edit_staff",
        "/sandbox/api/bulk_add_edit_staff",
        "/sandbox/api/calculate-total-days",
        "/sandbox/api/apply-ee-time-off",
    }


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("/sandbox/api/add_edit_staff", staff_fields()),
        ("/sandbox/api/apply-ee-time-off", timeoff_fields()),
        ("/sandbox/api/calculate-total-days", leave_days_fields()),
    ],
)
def test_request_bodies_list_the_specified_fields(
    document: dict[str, Any], path: str, fields: tuple[Field, ...]
) -> None:
    schema = body_schema(document, path)
    assert list(schema["properties"]) == [f.name for f in fields]
    assert schema["required"] == required(fields)
    for f in fields:
        prop = schema["properties"][f.name]
        if f.choices:
            assert set(f.choices) <= set(prop["enum"])
        if f.kind == "date":
            assert prop["format"] == "date"
        if f.kind == "email":  # the interface states no format for e-mail addresses: any string is stored
            assert prop == {"type": "string", "description": f.description}
        if f.type == "boolean":
            assert prop["type"] == "boolean"


def test_bulk_body_holds_customer_id_once_and_elements_without_it(document: dict[str, Any]) -> None:
    bulk = body_schema(document, "/sandbox/api/bulk_add_edit_staff")
    assert set(bulk["properties"]) == {"customer_id", "bulk_staff_data"}
    assert bulk["required"] == ["customer_id", "bulk_staff_data"]
    element = document["components"]["schemas"]["StaffElement"]
    assert bulk["properties"]["bulk_staff_data"]["items"]["$ref"] == "#/components/schemas/StaffElement"
    assert "customer_id" not in element["properties"]
    assert element["required"] == required(tuple(f for f in staff_fields() if not f.envelope))


def test_staff_type_enum_and_customer_id_forms(document: dict[str, Any]) -> None:
    staff = body_schema(document, "/sandbox/api/add_edit_staff")["properties"]
    assert staff["staff_type"]["enum"] == ["System", "Payroll", "HRO", "EOR"]
    assert [s["type"] for s in staff["customer_id"]["anyOf"]] == ["integer", "string"]


def test_error_responses_are_documented(document: dict[str, Any]) -> None:
    time_off = document["paths"]["/sandbox/api/apply-ee-time-off"]["post"]["responses"]
    assert {"400", "401", "403", "404", "409"} <= set(time_off)
    vendor = document["paths"]["/sandbox/vendor/get_customer"]["get"]["responses"]
    assert vendor["403"]["content"]["application/json"]["schema"]["$ref"].endswith("/VendorError")
