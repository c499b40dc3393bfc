"""``schemas/*.toml`` (read through ``hrimport.fields``) matches the interface document's field tables.

The reference is ``tests/interface_fields.py``, a transcription of the document made by hand, never from
``schemas/``. Names, order, types and required-ness must agree exactly, and so must the allowed values and
defaults the tables state. Where the schema knowingly departs from the interface document, the departure is
named here with the source that justifies it, so that no other one can slip in.
"""

from __future__ import annotations

import pytest

from hrimport import fields
from tests import interface_fields as doc

#: The document's type words, as ``schemas/`` writes them.
TYPE_WORDS = {"string": "string", "integer": "integer", "boolean": "boolean",
              "array of custom data entries": "array"}
#: Keys the staff output record may send as null although the document types them plain "string":
#: api-notes.md ("Staff") says the service sends ``null`` for these unknown dates.
NULL_PER_API_NOTES = {"ec_start_date", "ec_end_date"}

INPUT_TABLES = {
    "staff": (doc.STAFF_INPUT, fields.staff_fields),
    "timeoff": (doc.TIMEOFF_INPUT, fields.timeoff_fields),
    "leave_days": (doc.LEAVE_DAYS_INPUT, fields.leave_days_fields),
}


def schema_type(field: fields.Field, doc_type: str) -> str:
    """The document's type of ``field`` as the schema must hold it."""
    if doc_type == "integer (single), string (bulk)":
        # One field, two types: the schema keeps the single endpoint's integer and marks it as the body's
        # envelope (sent once at the top of a bulk body, where the client writes it as a string).
        assert field.envelope, f"{field.name} is not marked envelope in schemas/"
        return "integer"
    return TYPE_WORDS[doc_type]


@pytest.mark.parametrize("table", INPUT_TABLES)
def test_input_fields_have_the_document_s_names_order_types_and_required_ness(table: str) -> None:
    rows, schema = INPUT_TABLES[table]
    ours = schema()
    assert [f.name for f in ours] == [name for name, _, _ in rows]
    expected = [(name, schema_type(f, doc_type), required) for (name, doc_type, required), f in zip(rows, ours)]
    assert [(f.name, f.type, f.required) for f in ours] == expected


@pytest.mark.parametrize("table", INPUT_TABLES)
def test_enumerated_values_and_defaults_are_the_document_s(table: str) -> None:
    ours = fields.by_name(INPUT_TABLES[table][1]())
    assert {name: list(f.choices) for name, f in ours.items() if f.choices} == doc.CHOICES[table]
    assert {name for name, f in ours.items() if f.kind == "enum"} == set(doc.CHOICES[table])
    assert {name: f.default for name, f in ours.items() if f.default is not None} == doc.DEFAULTS[table]


def test_the_transcription_agrees_with_the_endpoints_required_lists() -> None:
    # The document states required fields twice (table and endpoint text): the copy must agree with itself.
    required = [name for name, _, req in doc.STAFF_INPUT if req == "yes"]
    assert required == doc.STAFF_REQUIRED_SINGLE
    assert [n for n in required if n != "customer_id"] == doc.STAFF_REQUIRED_BULK_ELEMENT
    envelope = [f.name for f in fields.staff_fields() if f.envelope]
    assert envelope == ["customer_id"]  # the one field the bulk body holds outside its elements


def test_staff_output_record_has_the_document_s_keys_order_and_types() -> None:
    expected = [(name, doc_type) for names, doc_type in doc.STAFF_OUTPUT for name in names.split(", ")]
    ours = fields.staff_output_fields()
    assert [f.name for f in ours] == [name for name, _ in expected]
    nullable = {name for name, doc_type in expected if doc_type == "string or null"}
    assert [(f.name, f.type) for f in ours] == [(name, doc_type.removesuffix(" or null"))
                                                for name, doc_type in expected]
    assert {f.name for f in ours if f.null_when_unknown} == nullable | NULL_PER_API_NOTES
