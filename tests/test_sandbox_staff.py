"""Staff create-or-update over real HTTP: single and bulk, messages, permissions, validation, persistence."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from hrimport.fields import staff_fields

SINGLE = "/api/add_edit_staff"
BULK = "/api/bulk_add_edit_staff"

# The spec's "Staff output record (user)" keys; the single endpoint spells passpost_issue_date.
USER_KEYS = {
    "id",
    "name",
    "role",
    "system_email",
    "country",
    "status",
    "offboarding_reason",
    "birthdate",
    "gender",
    "highest_education",
    "nationality",
    "personal_email",
    "phone",
    "emergency_name",
    "emergency_email",
    "emergency_phone",
    "emergency_relationship",
    "passport_number",
    "passport_issue_date",
    "passport_issuing_country",
    "passport_expiry_date",
    "reporting_officer",
    "job_title",
    "location",
    "staff_type",
    "work_email",
    "ec_entity",
    "ec_type",
    "ec_vendor",
    "job_start_date",
    "probation_end_date",
    "ec_start_date",
    "ec_end_date",
    "last_working_day",
    "host_country",
    "host_staff_type",
    "host_ec_entity",
    "host_ec_vendor",
    "host_ec_type",
    "host_ec_start_date",
    "host_ec_end_date",
    "job_scope",
    "customer_system_id",
}


def person(system_id: str = "E001", **overrides: Any) -> dict[str, Any]:
    """A valid bulk element (every required field), overridable."""
    return {
        "customer_system_id": system_id,
        "customer_system_id_type": "BambooHR",
        "name": "Aisha Rahman",
        "system_email": f"{system_id.lower()}@acme.example",
        "country": "MY",
        "job_title": "Payroll Analyst",
        "job_start_date": "2023-03-01",
        "staff_type": "Payroll",
        **overrides,
    }


def post(
    sandbox: Any, path: str, body: Any, token: str = "demo-customer-99", bearer: bool = True
) -> httpx.Response:
    return sandbox.http.post(path, json=body, headers=sandbox.auth(token, bearer=bearer))


def test_hr_adds_a_person_then_updates_them(sandbox: Any) -> None:
    first = post(sandbox, SINGLE, {"customer_id": 99, **person()})
    assert first.status_code == 200
    assert first.json()["message"] == "add successfully"
    user = first.json()["user"]
    assert set(user) == USER_KEYS - {"passport_issue_date"} | {"passpost_issue_date"}
    assert user["customer_system_id"] == "E001" and user["role"] == "Staff" and user["status"] == "regular"
    assert user["ec_start_date"] is None and user["highest_education"] == ""
    assert first.json()["id"] == 1099  # the caller's (token's user) id

    second = post(sandbox, SINGLE, {"customer_id": "99", **person(job_title="Payroll Lead")})
    assert second.json()["message"] == "update successfully"
    assert second.json()["user"]["id"] == user["id"]
    stored = sandbox.staff(99)
    assert len(stored) == 1 and stored[0]["job_title"] == "Payroll Lead"


def test_hyphenated_path_is_the_same_endpoint(sandbox: Any) -> None:
    assert post(sandbox, "/api/add-edit-staff", {"customer_id": 99, **person()}).json()["message"] == (
        "add successfully"
    )
    assert post(sandbox, SINGLE, {"customer_id": 99, **person()}).json()["message"] == "update successfully"
    bulk = post(sandbox, "/api/bulk-add-edit-staff", {"customer_id": "99", "bulk_staff_data": [person()]})
    assert bulk.json()["result"][0]["message"] == "Update Successfully"


def test_bulk_adds_and_updates_with_capitalised_messages(sandbox: Any) -> None:
    post(sandbox, SINGLE, {"customer_id": 99, **person("E001")})
    response = post(sandbox, BULK, {"customer_id": "99", "bulk_staff_data": [person("E001"), person("E002")]})
    assert response.status_code == 200
    result = response.json()["result"]
    assert [r["message"] for r in result] == ["Update Successfully", "Add Successfully"]
    assert set(result[1]["user"]) == USER_KEYS  # bulk spells passport_issue_date correctly
    assert {s["customer_system_id"] for s in sandbox.staff(99)} == {"E001", "E002"}
    assert sandbox.requests()[-1]["elements"] == 2


@pytest.mark.parametrize(
    ("token", "customer_id"),
    [
        ("demo-customer-100", 99),  # another company's token
        ("demo-customer-99", 101),  # not its company (and inactive)
        ("demo-vendor", 101),  # the vendor's inactive customer
        ("demo-vendor-noportal", 99),  # a vendor user without portal access
        ("demo-customer-99", 12345),  # no such customer
    ],
)
def test_acting_for_another_company_is_permission_denied(sandbox: Any, token: str, customer_id: int) -> None:
    single = post(sandbox, SINGLE, {"customer_id": customer_id, **person()}, token)
    assert single.status_code == 200
    assert single.json()["message"] == "permission denied" and single.json()["user"] is None
    bulk = post(
        sandbox, BULK, {"customer_id": str(customer_id), "bulk_staff_data": [person(), person("E2")]}, token
    )
    assert [r["message"] for r in bulk.json()["result"]] == ["Permission Denied"] * 2
    assert sandbox.staff() == []


def test_vendor_with_portal_acts_for_its_active_customers(sandbox: Any) -> None:
    response = post(sandbox, SINGLE, {"customer_id": 100, **person()}, "demo-vendor")
    assert response.json()["message"] == "add successfully"
    assert response.json()["id"] == 1001


@pytest.mark.parametrize("bearer", [True, False])
def test_bearer_and_bare_token_both_work_on_staff_endpoints(sandbox: Any, bearer: bool) -> None:
    assert post(sandbox, SINGLE, {"customer_id": 99, **person()}, bearer=bearer).status_code == 200


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer nope"}, {"Authorization": "nope"}, {"Authorization": "Bearer"}]
)
def test_missing_or_unknown_token_is_401(sandbox: Any, headers: dict[str, str]) -> None:
    for path in (SINGLE, BULK):
        response = sandbox.http.post(path, json={"customer_id": 99, **person()}, headers=headers)
        assert response.status_code == 401
        assert response.json()["error"] == "Invalid request"


@pytest.mark.parametrize(
    ("override", "field", "reason_part"),
    [
        ({"staff_type": "Contractor"}, "staff_type", "not one of System, Payroll, HRO, EOR"),
        ({"gender": "F"}, "gender", "not one of Female, Male"),
        ({"country": "Malaysia"}, "country", "alpha-2"),
        ({"nationality": "ZZ"}, "nationality", "alpha-2"),
        ({"job_start_date": "2023-02-30"}, "job_start_date", "real date"),
        ({"birthdate": "01/02/1990"}, "birthdate", "YYYY-MM-DD"),
        ({"is_manager": "yes"}, "is_manager", "boolean"),
        ({"name": 42}, "name", "string"),
        ({"name": ""}, "name", "is required"),
        ({"is_intern": True, "is_manager": True}, "is_intern", "is_manager"),
        ({"is_intern": True, "is_employee": True}, "is_intern", "is_employee"),
        (
            {"customer_data_type": [{"name": "Shoe Size", "value": "42"}]},
            "customer_data_type",
            "not configured",
        ),
        ({"customer_data_type": "Grade=G7"}, "customer_data_type", "array"),
    ],
)
def test_invalid_single_staff_is_400_naming_the_field(
    sandbox: Any, override: dict, field: str, reason_part: str
) -> None:
    response = post(sandbox, SINGLE, {"customer_id": 99, **person(**override)})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Invalid request"
    assert [d["field"] for d in body["details"]] == [field]
    assert reason_part in body["details"][0]["reason"]
    assert "index" not in body["details"][0]
    assert sandbox.staff() == []


def test_an_email_field_stores_any_string_exactly_as_sent(sandbox: Any) -> None:
    """The interface types the e-mail fields as plain strings and states no format: nothing to refuse, and
    nothing to tidy (no trimming, no lower case), or a read-after-write check would see a value altered."""
    emails = {"system_email": "ann@intranet", "personal_email": "jane.doe@", "work_email": "a b@c.d",
              "emergency_email": " Mum@Home.Example "}
    single = post(sandbox, SINGLE, {"customer_id": 99, **person("E1", **emails)})
    assert single.status_code == 200, single.text
    assert {k: single.json()["user"][k] for k in emails} == emails
    bulk = post(sandbox, BULK, {"customer_id": "99", "bulk_staff_data": [
        person("E2", system_email="ann@intranet"), person("E3", system_email="aisha.at.acme")]})
    assert bulk.status_code == 200, bulk.text
    stored = {s["customer_system_id"]: s for s in sandbox.staff(99)}
    assert {k: stored["E1"][k] for k in emails} == emails
    assert (stored["E2"]["system_email"], stored["E3"]["system_email"]) == ("ann@intranet", "aisha.at.acme")


def test_a_required_email_left_blank_is_still_400(sandbox: Any) -> None:
    response = post(sandbox, SINGLE, {"customer_id": 99, **person(system_email="  ")})
    assert response.status_code == 400
    assert response.json()["details"] == [{"field": "system_email", "reason": "is required and may not be empty"}]


def test_every_missing_required_field_is_listed(sandbox: Any) -> None:
    response = post(sandbox, SINGLE, {"name": "Nobody"})
    required = [f.name for f in staff_fields() if f.is_required and f.name != "name"]
    assert [d["field"] for d in response.json()["details"]] == required


@pytest.mark.parametrize("body", [b"{not json", b"", b"[1, 2]"])
def test_malformed_json_is_400(sandbox: Any, body: bytes) -> None:
    response = sandbox.http.post(SINGLE, content=body, headers={**sandbox.auth(), "Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == "body"


@pytest.mark.parametrize("content_type", [None, "application/x-www-form-urlencoded", "text/plain"])
@pytest.mark.parametrize("path", [SINGLE, "/api/bulk_add_edit_staff", "/api/calculate-total-days",
                                  "/api/apply-ee-time-off"])
def test_a_body_not_declared_json_is_400_naming_the_header(sandbox: Any, path: str, content_type: str | None) -> None:
    # spec "Endpoints": the single-staff request declares Content-Type: application/json; for the others it is
    # "not shown". curl -d without -H sends a form, which a JSON service need not read: the sandbox refuses it
    headers = sandbox.auth() if content_type is None else {**sandbox.auth(), "Content-Type": content_type}
    response = sandbox.http.post(path, content=b'{"customer_id": "99"}', headers=headers)
    shown = "missing" if content_type is None else repr(content_type)
    assert (response.status_code, response.json()) == (400, {"error": "Invalid request", "details": [
        {"field": "Content-Type",
         "reason": f"is {shown}; send the JSON body with the header 'Content-Type: application/json'"}]})
    assert sandbox.staff() == []


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "Application/JSON", "application/vnd.x+json"])
def test_a_json_content_type_with_parameters_is_read(sandbox: Any, content_type: str) -> None:
    body = b'{"customer_id": "99", "bulk_staff_data": []}'
    response = sandbox.http.post("/api/bulk_add_edit_staff", content=body,
                                 headers={**sandbox.auth(), "Content-Type": content_type})
    assert response.json()["details"][0]["field"] == "bulk_staff_data"  # read as JSON, refused for its content


def test_enumerations_in_any_case_are_stored_canonically(sandbox: Any) -> None:
    body = {
        "customer_id": 99,
        **person(
            staff_type="eor",
            gender="FEMALE",
            ec_type="fixed term",
            ec_entity_system_id_type="platform",
            offboarding_reason="voluntary",
            country="my",
        ),
    }
    user = post(sandbox, SINGLE, body).json()["user"]
    assert (user["staff_type"], user["gender"], user["ec_type"], user["country"]) == (
        "EOR",
        "Female",
        "Fixed-term",
        "MY",
    )
    stored = sandbox.staff(99)[0]
    assert stored["offboarding_reason"] == "Voluntary" and stored["ec_entity_system_id_type"] == "Platform"


def test_a_bad_bulk_element_rejects_the_whole_request_and_names_every_index(sandbox: Any) -> None:
    elements = [
        person("E1"),
        person("E2", country="XX"),
        person("E3"),
        person("E4", staff_type="x", gender="?"),
    ]
    response = post(sandbox, BULK, {"customer_id": "99", "bulk_staff_data": elements})
    assert response.status_code == 400
    details = response.json()["details"]
    assert [(d["index"], d["field"]) for d in details] == [(1, "country"), (3, "staff_type"), (3, "gender")]
    assert sandbox.staff() == []  # all or nothing


@pytest.mark.parametrize("inner", ["99", 99, "100"])
def test_a_customer_id_inside_a_bulk_element_is_400_even_the_same_one(sandbox: Any, inner: Any) -> None:
    # spec: in the bulk endpoint customer_id "sits once at the top level of the body, not inside each element"
    elements = [person("E1"), {**person("E2"), "customer_id": inner}]
    response = post(sandbox, BULK, {"customer_id": "99", "bulk_staff_data": elements})
    assert (response.status_code, response.json()["details"]) == (400, [{"index": 1, "field": "customer_id", "reason": (
        "sits once at the top level of the body, not inside an element; leave it out of the element")}])
    assert sandbox.staff() == []


def test_bulk_stateful_errors_roll_back_earlier_elements(sandbox: Any) -> None:
    elements = [person("E1"), person("E2", customer_data_type=[{"name": "Shoe Size", "value": "9"}])]
    response = post(sandbox, BULK, {"customer_id": 99, "bulk_staff_data": elements})
    assert response.status_code == 400
    assert [(d["index"], d["field"]) for d in response.json()["details"]] == [(1, "customer_data_type")]
    assert sandbox.staff() == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"customer_id": "99"}, "bulk_staff_data"),
        ({"customer_id": "99", "bulk_staff_data": []}, "bulk_staff_data"),
        ({"customer_id": "abc", "bulk_staff_data": [person()]}, "customer_id"),
        ({"bulk_staff_data": [person()]}, "customer_id"),
    ],
)
def test_bad_bulk_envelope_is_400(sandbox: Any, body: dict, field: str) -> None:
    response = post(sandbox, BULK, body)
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == field


def test_bulk_element_that_is_not_an_object_is_named_by_index(sandbox: Any) -> None:
    response = post(sandbox, BULK, {"customer_id": "99", "bulk_staff_data": [person(), "E2"]})
    assert response.json()["details"] == [
        {"index": 1, "field": "bulk_staff_data", "reason": "each element must be a JSON object"}
    ]


def test_country_change_needs_old_country_and_effective_date(sandbox: Any) -> None:
    post(sandbox, SINGLE, {"customer_id": 99, **person(country="MY")})
    moved = post(sandbox, SINGLE, {"customer_id": 99, **person(country="SG")})
    assert moved.status_code == 400
    assert {d["field"] for d in moved.json()["details"]} == {"old_country", "new_country_effective_date"}

    wrong_old = post(
        sandbox,
        SINGLE,
        {
            "customer_id": 99,
            **person(country="SG", old_country="TH", new_country_effective_date="2024-07-01"),
        },
    )
    assert [d["field"] for d in wrong_old.json()["details"]] == ["old_country"]
    assert "MY" in wrong_old.json()["details"][0]["reason"]

    done = post(
        sandbox,
        SINGLE,
        {
            "customer_id": 99,
            **person(country="SG", old_country="my", new_country_effective_date="2024-07-01"),
        },
    )
    assert done.json()["message"] == "update successfully" and done.json()["user"]["country"] == "SG"


def test_update_keeps_fields_not_sent_and_clears_fields_sent_empty(sandbox: Any) -> None:
    post(sandbox, SINGLE, {"customer_id": 99, **person(phone="+60 12 345", location="KL", is_manager=True)})
    user = post(sandbox, SINGLE, {"customer_id": 99, **person(location="")}).json()["user"]
    assert user["phone"] == "+60 12 345" and user["location"] == "" and user["role"] == "Manager & Staff"


def test_an_intern_sent_without_is_employee_false_is_400_as_is_employee_defaults_to_true(sandbox: Any) -> None:
    # spec: is_employee "Default true", is_intern "Cannot be true if either of the two previous booleans is
    # true"; no other default is stated for interns, so the sandbox does not invent one
    response = post(sandbox, SINGLE, {"customer_id": 99, **person(is_intern=True)})
    assert (response.status_code, response.json()["details"]) == (400, [{"field": "is_intern", "reason": (
        "cannot be true together with is_employee, which defaults to true; send is_employee: false with it")}])
    bulk = post(sandbox, "/api/bulk_add_edit_staff", {"customer_id": "99", "bulk_staff_data": [person(is_intern=True)]})
    assert bulk.json()["details"][0]["index"] == 0
    assert sandbox.staff(99) == []
    user = post(sandbox, SINGLE, {"customer_id": 99, **person(is_intern=True, is_employee=False)}).json()["user"]
    assert user["role"] == "Intern"
    stored = sandbox.staff(99)[0]
    assert (stored["is_intern"], stored["is_employee"], stored["is_manager"]) == (True, False, False)


def test_same_external_id_in_another_system_is_another_person(sandbox: Any) -> None:
    post(sandbox, SINGLE, {"customer_id": 99, **person()})
    other = post(sandbox, SINGLE, {"customer_id": 99, **person(customer_system_id_type="Workday")})
    assert other.json()["message"] == "add successfully"
    assert len(sandbox.staff(99)) == 2


def test_custom_data_with_configured_names_is_stored(sandbox: Any) -> None:
    data = [{"name": "Cost Center", "value": "CC-10"}, {"name": "Grade", "value": "G7"}]
    assert post(sandbox, SINGLE, {"customer_id": 99, **person(customer_data_type=data)}).status_code == 200
    assert sandbox.staff(99)[0]["customer_data_type"] == data


def test_staff_survive_a_restart(sandbox: Any) -> None:
    post(sandbox, BULK, {"customer_id": "99", "bulk_staff_data": [person("E1"), person("E2")]})
    sandbox.restart()
    assert [s["customer_system_id"] for s in sandbox.staff(99)] == ["E1", "E2"]
    again = post(sandbox, SINGLE, {"customer_id": 99, **person("E1")})
    assert again.json()["message"] == "update successfully"


def test_concurrent_writes_of_one_person_store_them_once(sandbox: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    body = {"customer_id": 99, **person()}
    with ThreadPoolExecutor(max_workers=6) as pool:
        messages = list(pool.map(lambda _: post(sandbox, SINGLE, body).json()["message"], range(6)))
    assert sorted(messages) == ["add successfully"] + ["update successfully"] * 5
    assert len(sandbox.staff(99)) == 1
