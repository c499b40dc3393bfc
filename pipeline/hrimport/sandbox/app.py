"""The sandbox's FastAPI app: the spec's five endpoints under ``/sandbox``, admin routes under ``/_admin``.

``create_app(db_path, faults, alterations)`` is the one entry point (the CLI, the tests and the demo use
it). The endpoints read their JSON bodies themselves so that validation follows ``hrimport.fields`` and
answers the documented error shapes; the bodies are described in the OpenAPI document by ``openapi.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from hrimport.sandbox import openapi
from hrimport.sandbox.alterations import Alterations
from hrimport.sandbox.faults import FaultInjector, FaultMiddleware, FaultSettings
from hrimport.sandbox.staff import add_edit_staff, bulk_add_edit_staff
from hrimport.sandbox.store import Principal, Store
from hrimport.sandbox.timeoff import add_time_off, calculate_total_days
from hrimport.sandbox.validation import RequestInvalid, check_json_content_type, parse_json_object

API_PREFIX = "/sandbox"


class ApiError(Exception):
    """An error answered with a fixed status and body (401, 403, 404, 409)."""

    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(body)
        self.status = status
        self.body = body
        self.headers = headers


def authenticate(store: Store, request: Request, *, bearer_required: bool = False) -> Principal:
    """The token's principal. Spec, Authentication: ``Bearer <token>`` everywhere; the bare token is also
    accepted on the non-vendor endpoints (api-notes: older pages send it bare)."""
    header = request.headers.get("authorization", "").strip()
    scheme, _, rest = header.partition(" ")
    if scheme.lower() == "bearer" and rest.strip():
        token = rest.strip()
    elif bearer_required and header:
        raise _unauthorised("the vendor listing needs the form 'Authorization: Bearer <token>'")
    else:
        token = header
    if not token:
        raise _unauthorised("the Authorization header is missing")
    principal = store.principal(token)
    if principal is None:
        raise _unauthorised("the token is unknown")
    return principal


def _unauthorised(reason: str) -> ApiError:
    return ApiError(
        401,
        {"error": "Invalid request", "details": [{"field": "Authorization", "reason": reason}]},
        {"WWW-Authenticate": "Bearer"},
    )


_HEALTH = """<!doctype html><html><head><meta charset="utf-8"><title>hrimport sandbox</title></head><body>
<h1>hrimport sandbox: ready</h1><p>Base URL: <code>{base}</code>. API documentation: <a href="/docs">/docs</a>
(<a href="/openapi.json">openapi.json</a>). Request log: <a href="/_admin/requests">/_admin/requests</a>.</p>
<ul>{items}</ul></body></html>"""


class _SandboxApp(FastAPI):
    """FastAPI with the request-body schemas of ``hrimport.sandbox.openapi`` in its OpenAPI description
    (the endpoints read their JSON bodies themselves, so FastAPI cannot infer them)."""

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            schema = get_openapi(
                title=self.title, version=self.version, description=self.description, routes=self.routes
            )
            schema.setdefault("components", {}).setdefault("schemas", {}).update(openapi.component_schemas())
            self.openapi_schema = schema
        return self.openapi_schema


def create_app(
    db_path: str | Path, faults: FaultSettings | None = None, alterations: Alterations | None = None
) -> FastAPI:
    """The sandbox app on a SQLite file (created with the demo dataset when new), with optional faults and
    alterations of the staff values it stores.

    >>> app = create_app("/tmp/sandbox.db")  # doctest: +SKIP
    """
    store = Store(db_path)
    injector = FaultInjector(faults)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        with store.held_open():  # no checkpoint of the WAL at the end of every request
            yield

    app = _SandboxApp(
        lifespan=lifespan,
        title="hrimport sandbox",
        version="1",
        description="A local implementation of the platform's staff, time-off and vendor interface. "
        "The base URL is /sandbox (the instance segment of the spec's {base_url}).",
    )
    app.state.store = store
    app.state.faults = injector
    app.state.alterations = alterations or Alterations()  # replaced whole by POST /_admin/alterations
    app.add_middleware(FaultMiddleware, injector=injector)

    @app.exception_handler(RequestInvalid)
    async def _invalid(_request: Request, exc: RequestInvalid) -> JSONResponse:
        return JSONResponse({"error": "Invalid request", "details": [d.to_json() for d in exc.details]}, 400)

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body, exc.status, headers=exc.headers)

    api = APIRouter(prefix=API_PREFIX, tags=["platform"])

    async def body_of(request: Request) -> dict[str, Any]:
        check_json_content_type(request.headers.get("content-type", ""))
        return parse_json_object(await request.body())

    @api.get(
        "/vendor/get_customer",
        summary="Get vendor customer list",
        openapi_extra=openapi.operation(None, (403, "Not a vendor user with vendor portal access.")),
    )
    def get_customer(request: Request) -> JSONResponse:
        """Spec, endpoint 1: the vendor record with its ``customer_list``; vendor users with portal only."""
        principal = authenticate(store, request, bearer_required=True)
        vendor = (
            store.vendor(principal.vendor_id)
            if principal.vendor_id is not None and principal.portal
            else None
        )
        if vendor is None:
            return JSONResponse({"code": "ERROR_FATAL", "message": "Access Denied", "payload": ""}, 403)
        return JSONResponse(vendor)

    staff_extra = openapi.operation("StaffInput", (400, "Invalid request: every problem in details."))

    @api.post("/api/add_edit_staff", summary="Create or update one staff record", openapi_extra=staff_extra)
    @api.post("/api/add-edit-staff", include_in_schema=False)
    async def single_staff(request: Request) -> JSONResponse:
        """Spec, endpoint 2: messages ``add successfully``, ``update successfully``, ``permission denied``."""
        principal = authenticate(store, request)
        data = await body_of(request)
        return JSONResponse(
            await run_in_threadpool(add_edit_staff, store, principal, data, app.state.alterations)
        )

    bulk_extra = openapi.operation("BulkStaffInput", (400, "Invalid request: every bad element by index."))

    @api.post(
        "/api/bulk_add_edit_staff", summary="Create or update many staff records", openapi_extra=bulk_extra
    )
    @api.post("/api/bulk-add-edit-staff", include_in_schema=False)
    async def bulk_staff(request: Request) -> JSONResponse:
        """Spec, endpoint 3: all or nothing; messages ``Add Successfully``, ``Update Successfully``,
        ``Permission Denied``."""
        principal = authenticate(store, request)
        data = await body_of(request)
        elements = data.get("bulk_staff_data")
        request.state.elements = len(elements) if isinstance(elements, list) else None
        return JSONResponse(
            await run_in_threadpool(bulk_add_edit_staff, store, principal, data, app.state.alterations)
        )

    @api.post(
        "/api/calculate-total-days",
        summary="Calculate total leave days",
        openapi_extra=openapi.operation("LeaveDaysInput", (400, "Invalid request.")),
    )
    async def total_days(request: Request) -> JSONResponse:
        """Spec, endpoint 4: ``{"totaldays": n}``, weekends and public holidays of the country excluded."""
        authenticate(store, request)
        data = await body_of(request)
        return JSONResponse(await run_in_threadpool(calculate_total_days, data))

    @api.post(
        "/api/apply-ee-time-off",
        summary="Add time-off record",
        openapi_extra=openapi.operation(
            "TimeOffInput",
            (400, "Invalid request: every problem in details (a total_days that is not a number of days, 0 or more)."),
            (403, "The token may not act for customer_id."),
            (404, "No staff with that customer_system_id."),
            (409, "The period overlaps an existing time-off record of the staff member."),
        ),
    )
    async def time_off(request: Request) -> JSONResponse:
        """Spec, endpoint 5: adds one record; ``{"time_off_data": {...}, "message": "add successfully"}``."""
        principal = authenticate(store, request)
        data = await body_of(request)
        status, body = await run_in_threadpool(add_time_off, store, principal, data, app.state.alterations)
        if status != 200:
            raise ApiError(status, body)
        return JSONResponse(body)

    app.include_router(api)
    _add_admin_routes(app, store, injector)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def health(request: Request) -> HTMLResponse:
        """200 once the sandbox is ready: a page naming the base URL and endpoints."""
        base = str(request.base_url).rstrip("/") + API_PREFIX
        items = "".join(
            f"<li><code>{' '.join(sorted(getattr(r, 'methods', ())))} {r.path}</code></li>"
            for r in api.routes
            if isinstance(r, APIRoute)
        )
        return HTMLResponse(_HEALTH.format(base=base, items=items))
    return app


def _add_admin_routes(app: FastAPI, store: Store, injector: FaultInjector) -> None:
    """Routes outside the instance segment, for tests and demos (no token: a local sandbox)."""
    admin = APIRouter(prefix="/_admin", tags=["admin"])

    @admin.get("/requests", summary="The request log (API requests under /sandbox, oldest first)")
    def requests_log() -> list[dict[str, Any]]:
        return injector.log()

    @admin.delete("/requests", summary="Empty the request log")
    def clear_requests() -> dict[str, str]:
        injector.clear_log()
        return {"message": "request log cleared"}

    @admin.get("/faults", summary="Current fault settings (rules show their remaining counts)")
    def get_faults() -> FaultSettings:
        return injector.settings

    @admin.post("/faults", summary="Replace the fault settings")
    def set_faults(settings: FaultSettings) -> FaultSettings:
        injector.set(settings)
        return injector.settings

    @admin.delete("/faults", summary="Turn every fault off")
    def clear_faults() -> FaultSettings:
        injector.set(FaultSettings())
        return injector.settings

    @admin.get("/alterations", summary="Current alterations of stored staff values")
    def get_alterations() -> Alterations:
        current: Alterations = app.state.alterations
        return current

    @admin.post("/alterations", summary="Replace the alterations of stored staff values")
    def set_alterations(settings: Alterations) -> Alterations:
        app.state.alterations = settings
        return settings

    @admin.delete("/alterations", summary="Store staff values as sent again")
    def clear_alterations() -> Alterations:
        app.state.alterations = Alterations()
        return Alterations()

    @admin.get("/staff", summary="Stored staff records (input fields as stored, plus id and timestamps)")
    def staff(customer_id: int | None = None) -> list[dict[str, Any]]:
        return store.staff(customer_id)

    @admin.get("/time_off", summary="Stored time-off records")
    def time_off(customer_id: int | None = None) -> list[dict[str, Any]]:
        return store.time_off(customer_id)

    @admin.delete("/time_off/{record_id}", summary="Cancel a time-off record, as HR does in the platform's own pages")
    def cancel_time_off(record_id: int) -> dict[str, Any]:
        record = store.cancel_time_off(record_id)
        if record is None:
            raise HTTPException(status_code=404, detail=f"no time-off record {record_id}")
        return record

    @admin.get("/leave_types", summary="The leave-type dictionary")
    def leave_types() -> list[dict[str, Any]]:
        return [
            {
                "id": t.id,
                "en": t.en,
                "zh": t.zh,
                "zh_hant": t.zh_hant,
                "zh_aliases": list(t.zh_aliases),
                "basis": t.basis,
            }
            for t in store.leave_types()
        ]

    app.include_router(admin)
