"""The valid rows an import holds until it sends them come back exactly as they were built."""

from __future__ import annotations

from typing import Any

from hrimport.imports.records import PendingRecords
from hrimport.service.staff import StaffRecord, element_json

KEYS = ("customer_system_id", "name", "system_email", "country", "is_intern", "is_employee", "customer_data_type")


def built(n: int, **extra: Any) -> dict[str, Any]:
    """A payload as ``build_payloads`` makes it: fields in the table's order, empty ones left out."""
    payload: dict[str, Any] = {"customer_system_id": f"E{n:04}", "name": f"Zoë {n}", "country": "SG"}
    if n % 2:
        payload["system_email"] = f"p{n}@example.com"
        payload = {k: payload[k] for k in KEYS if k in payload}
    return {**payload, **extra}


def test_each_record_comes_back_with_its_payload_in_its_own_order_and_the_text_it_is_sent_as() -> None:
    payloads = [built(1), built(2), built(3, is_intern=True, is_employee=False),
                built(4, customer_data_type=[{"name": "Cost centre", "value": "陈 7"}])]
    records = PendingRecords()
    records.extend(range(2, 6), [p["customer_system_id"] for p in payloads], [p["name"] for p in payloads], payloads,
                   KEYS)
    for record, payload in zip(records, payloads):
        assert list(record.payload.items()) == list(payload.items())  # same keys, same order
        assert record.sent_json == element_json(StaffRecord(record.row, record.external_id, record.name, payload))
        assert element_json(record) == record.sent_json


def test_a_payload_that_is_not_its_own_element_is_kept_as_it_is() -> None:
    """Out of the expected order, without its external id or with a customer id: kept and sent as before."""
    odd = [{"name": "Ann", "customer_system_id": "E1"}, {"name": "Bo"}, {"customer_system_id": "E3", "customer_id": "99"}]
    records = PendingRecords()
    records.extend([2, 3, 4], ["E1", "E2", "E3"], ["Ann", "Bo", ""], odd, KEYS)
    for record, payload in zip(records, odd):
        assert list(record.payload.items()) == list(payload.items())
        assert record.sent_json is None
        assert element_json(record) == element_json(StaffRecord(record.row, record.external_id, record.name, payload))
    kept = records.keeping(lambda row, _: row != 3)
    assert [r.payload for r in kept] == [odd[0], odd[2]]
