"""The vendor customer listing and the health page, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest

PATH = "/vendor/get_customer"
ACCESS_DENIED = {"code": "ERROR_FATAL", "message": "Access Denied", "payload": ""}


def test_vendor_lists_its_customers(sandbox: Any) -> None:
    response = sandbox.http.get(
        PATH, headers={"Authorization": "Bearer demo-vendor", "Content-Type": "application/json"}
    )
    assert response.status_code == 200
    vendor = response.json()
    assert set(vendor) == {"id", "name", "logo", "customer_list"}
    assert isinstance(vendor["id"], int) and isinstance(vendor["logo"], str)
    customers = {c["id"]: c for c in vendor["customer_list"]}
    assert set(customers) == {99, 100, 101}
    assert [customers[i]["is_active"] for i in (99, 100, 101)] == [True, True, False]
    for customer in customers.values():
        assert set(customer) == {"id", "name", "logo", "is_active"} and isinstance(customer["logo"], str)


@pytest.mark.parametrize("token", ["demo-vendor-noportal", "demo-customer-99"])
def test_listing_by_a_user_without_vendor_portal_access_is_access_denied(sandbox: Any, token: str) -> None:
    response = sandbox.http.get(PATH, headers=sandbox.auth(token))
    assert response.status_code == 403
    assert response.json() == ACCESS_DENIED


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer unknown"}, {"Authorization": "demo-vendor"}]
)  # the vendor listing needs Bearer
def test_listing_without_a_valid_bearer_token_is_401(sandbox: Any, headers: dict[str, str]) -> None:
    response = sandbox.http.get(PATH, headers=headers)
    assert response.status_code == 401
    assert response.json()["error"] == "Invalid request"


def test_health_page_and_api_docs_answer(sandbox: Any) -> None:
    page = sandbox.http.get(sandbox.root_url + "/")
    assert page.status_code == 200 and sandbox.base_url in page.text
    assert sandbox.http.get(sandbox.root_url + "/docs").status_code == 200
