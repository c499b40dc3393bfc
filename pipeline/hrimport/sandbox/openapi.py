"""The OpenAPI description of the request bodies, written from ``hrimport.fields``.

The endpoints read their bodies themselves (to answer the spec-shaped 400 with bulk indexes), so
FastAPI cannot infer the bodies; these JSON schemas, generated from the same field specification
that drives validation, are attached to each operation instead.
"""

from __future__ import annotations

from typing import Any

from hrimport.fields import Field, leave_days_fields, staff_fields, timeoff_fields

MAX_BULK_ELEMENTS = 1000


def field_schema(f: Field) -> dict[str, Any]:
    """The JSON schema of one field's value, as the sandbox accepts it."""
    schema: dict[str, Any]
    if f.kind == "integer":
        schema = {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": r"^\s*\d+\s*$"}]}
    elif f.kind == "number":
        schema = {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*$", "examples": ["2", "3.5"]}
    elif f.type == "boolean":
        schema = {"type": "boolean"}
        if f.default is not None:
            schema["default"] = f.default
    elif f.kind == "custom_data":
        schema = {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
            },
        }
    else:
        # e-mail fields too are plain strings, without "format": "email": the interface states no format for
        # them, and the sandbox stores any string as sent
        schema = {"type": "string"}
        if f.kind == "date":
            schema.update(format="date", pattern=r"^\d{4}-\d{2}-\d{2}$")
        elif f.kind == "country":
            schema["pattern"] = r"^[A-Za-z]{2}(-[A-Za-z0-9]{1,3})?$" if f.subdivisions else r"^[A-Za-z]{2}$"
        elif f.kind == "enum":
            # Accepted in any case (exact_case: only as written), stored in this canonical case; "" means
            # "not given" when optional.
            schema["enum"] = list(f.choices) + ([] if f.is_required else [""])
    schema["description"] = f.description + (
        "" if f.required != "conditional" else f" (conditional: {f.rule})"
    )
    return schema


def object_schema(fields: tuple[Field, ...], *, title: str) -> dict[str, Any]:
    return {
        "title": title,
        "type": "object",
        "properties": {f.name: field_schema(f) for f in fields},
        "required": [f.name for f in fields if f.is_required and f.default is None],
    }


def component_schemas() -> dict[str, Any]:
    """Components: every request body and the error bodies."""
    element = tuple(f for f in staff_fields() if not f.envelope)
    envelope = tuple(f for f in staff_fields() if f.envelope)
    bulk = object_schema(envelope, title="BulkStaffInput")
    bulk["properties"]["bulk_staff_data"] = {
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_BULK_ELEMENTS,
        "items": {"$ref": "#/components/schemas/StaffElement"},
    }
    bulk["required"] = [*bulk["required"], "bulk_staff_data"]
    detail = {
        "type": "object",
        "properties": {
            "index": {"type": "integer", "description": "Element of bulk_staff_data (bulk only)."},
            "field": {"type": "string"},
            "reason": {"type": "string"},
        },
        "required": ["field", "reason"],
    }
    return {
        "StaffInput": object_schema(staff_fields(), title="StaffInput"),
        "StaffElement": object_schema(element, title="StaffElement"),
        "BulkStaffInput": bulk,
        "TimeOffInput": object_schema(timeoff_fields(), title="TimeOffInput"),
        "LeaveDaysInput": object_schema(leave_days_fields(), title="LeaveDaysInput"),
        "ErrorDetail": detail,
        "Error": {
            "type": "object",
            "properties": {
                "error": {"type": "string", "examples": ["Invalid request"]},
                "details": {"type": "array", "items": {"$ref": "#/components/schemas/ErrorDetail"}},
            },
            "required": ["error"],
        },
        "VendorError": {
            "type": "object",
            "properties": {
                "code": {"const": "ERROR_FATAL"},
                "message": {"const": "Access Denied"},
                "payload": {"const": ""},
            },
        },
    }


def _error(description: str, schema: str = "Error") -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
    }


def operation(body: str | None, *errors: tuple[int, str]) -> dict[str, Any]:
    """``openapi_extra`` for an endpoint: its request body and its error responses."""
    extra: dict[str, Any] = {"responses": {"401": _error("Missing or unknown token.")}}
    if body:
        extra["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}},
        }
    for status, description in errors:
        extra["responses"][str(status)] = _error(
            description, "VendorError" if status == 403 and not body else "Error"
        )
    return extra
