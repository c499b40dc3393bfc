"""Fault injection and the request log: an ASGI middleware in front of the API under ``/sandbox``.

Faults exist for the client's resilience tests and demos (issue 2, "Faults on demand"). Random faults
(``error_rate``, ``drop_rate``) draw from one seeded generator; scripted ``rules`` are exact ("the next
2 requests to ``/api/bulk_add_edit_staff`` answer 503"), so retry tests reproduce exactly.

When a fault acts:
- an error status (500/502/503, 429) is answered *before* the endpoint runs: nothing is stored;
- a dropped connection happens *after* the endpoint ran (the change is stored): the response headers
  and half the body are sent, then the connection closes, the case a client must retry idempotently;
- latency is added before the request reaches the endpoint;
- a rule with ``after`` lets the endpoint run first (the change is stored), then answers its ``status``
  instead of the endpoint's answer, or holds the answer back ``delay`` seconds (beyond a client's read
  timeout: a stall). A gateway that times out, or a service that fails after committing, look like this
  to a client: the record exists although the answer says otherwise, so a request that is not idempotent
  must not be repeated;
- a rule with a ``body`` answers that JSON object (with its ``status``, 200 unless given) instead of the
  endpoint's answer: an answer the spec allows and the sandbox never gives by itself, such as the spec's
  ``{"error": "Invalid request"}`` in an HTTP 200 (the spec shows no status for its errors) or a bulk
  ``result`` of mixed messages. Before the endpoint runs (nothing stored), or with ``after`` once it has.

Only requests under ``/sandbox`` are faulted and logged; ``/``, ``/docs`` and ``/_admin`` never are.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import deque
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from starlette.requests import ClientDisconnect

API_PREFIX = "/sandbox"
LOG_LIMIT = 10_000

#: The endpoints a rule may name (``app.py`` serves each under API_PREFIX, the staff ones also spelled
#: with hyphens: a rule's ``-`` and ``_`` are alike, so it names an endpoint in either spelling).
ENDPOINTS = (
    "/vendor/get_customer",
    "/api/add_edit_staff",
    "/api/bulk_add_edit_staff",
    "/api/calculate-total-days",
    "/api/apply-ee-time-off",
)
#: Statuses a fault may answer: errors only (a success or redirect with an error body would mislead).
ERROR_STATUSES = range(400, 600)


def path_segments(path: str) -> tuple[str, ...]:
    """A path's segments with ``-`` read as ``_``: ``/api/bulk-add-edit-staff`` and ``bulk_add_edit_staff``
    end alike."""
    return tuple(part.replace("-", "_") for part in path.split("/") if part)


def _ends_with(path: tuple[str, ...], end: tuple[str, ...]) -> bool:
    return len(end) <= len(path) and path[len(path) - len(end):] == end


_ENDPOINT_SEGMENTS = tuple(path_segments(API_PREFIX + endpoint) for endpoint in ENDPOINTS)


class FaultRule(BaseModel):
    """A deterministic fault: the next ``count`` matching requests (after ``skip`` of them) fail, before
    the endpoint runs or, with ``after``, once it has stored the change."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        default=None,
        description="The endpoint to match, whole or its end (/api/add_edit_staff, add-edit-staff: - and _ "
        "alike); any if null.",
    )
    method: str | None = Field(default=None, description="Match this HTTP method only; any if null.")
    status: int | None = Field(
        default=None, ge=200, le=599,
        description="Answer this status (e.g. 503, 429); a success (200-299) only with a `body`.",
    )
    body: dict[str, Any] | None = Field(
        default=None,
        description="Answer this JSON object (with `status`, default 200) instead of the endpoint's answer: "
        "an answer the spec allows that the sandbox never gives by itself, e.g. the spec's error body "
        '{"error": "Invalid request"} in an HTTP 200 (the spec shows no status for its errors).',
    )
    drop: bool = Field(
        default=False, description="Drop the connection mid-response instead (after the endpoint ran)."
    )
    delay: float = Field(default=0.0, ge=0, le=60, description="Seconds to wait before answering.")
    after: bool = Field(
        default=False,
        description="Act after the endpoint ran (the change is stored): answer `status` instead of the "
        "endpoint's answer, and wait `delay` between the endpoint's work and the answer (a stall). "
        "Without it a status is answered before the endpoint runs (nothing stored).",
    )
    retry_after: int | None = Field(
        default=None, ge=0, description="Retry-After header value (default 1 on a 429)."
    )
    count: int = Field(default=1, ge=0, description="How many matching requests this rule acts on.")
    skip: int = Field(default=0, ge=0, description="Let this many matching requests through first.")

    @field_validator("path")
    @classmethod
    def _names_an_endpoint(cls, path: str | None) -> str | None:
        """A path that ends no endpoint's path (a typo, a missing word) would never act: refused."""
        if path is None:
            return None
        end = path_segments(path)
        if not end:
            raise ValueError(f"{path!r} names no endpoint; leave path out to match every endpoint")
        if not any(_ends_with(known, end) for known in _ENDPOINT_SEGMENTS):
            raise ValueError(
                f"{path!r} is not an endpoint of the sandbox; give one of {', '.join(ENDPOINTS)} (or its end, "
                "e.g. bulk_add_edit_staff; - and _ alike)"
            )
        return path

    @model_validator(mode="after")
    def _success_only_with_a_body(self) -> FaultRule:
        """A success status without a body of its own would answer nothing the endpoint did: refused."""
        if self.status is not None and self.status < 400 and self.body is None:
            raise ValueError(
                f"status {self.status} is not an HTTP error; a rule answers a success only with its own body "
                '(e.g. "body": {"error": "Invalid request"})'
            )
        return self

    def matches(self, method: str, path: str) -> bool:
        return (self.path is None or _ends_with(path_segments(path), path_segments(self.path))) and (
            self.method is None or self.method.upper() == method
        )


class FaultSettings(BaseModel):
    """Fault settings of a running sandbox (``--faults``, ``POST /_admin/faults``); all off by default."""

    model_config = ConfigDict(extra="forbid")

    error_rate: float = Field(
        default=0.0, ge=0, le=1, description="Share of requests answered with an error status."
    )
    error_statuses: list[int] = Field(
        default=[500, 502, 503], description="Statuses error_rate draws from (HTTP errors, 400-599)."
    )
    rate_limit: float | None = Field(
        default=None, gt=0, description="Requests per second above which 429 is answered."
    )
    retry_after: int = Field(default=1, ge=0, description="Retry-After seconds sent with 429.")
    latency: float = Field(default=0.0, ge=0, le=60, description="Seconds added to every request.")
    drop_rate: float = Field(
        default=0.0, ge=0, le=1, description="Share of connections dropped mid-response."
    )
    seed: int | None = Field(
        default=None, description="Seed of the random draws (reproducible random faults)."
    )
    rules: list[FaultRule] = Field(
        default=[],
        description="Deterministic faults, before random ones: the first rule "
        "matching a request with count left decides (so rules act one after another).",
    )

    @field_validator("error_statuses")
    @classmethod
    def _error_statuses(cls, statuses: list[int]) -> list[int]:
        if not statuses:
            raise ValueError("give at least one status, e.g. 500/503")
        wrong = [status for status in statuses if status not in ERROR_STATUSES]
        if wrong:
            raise ValueError(
                f"{wrong[0]} is not an HTTP error status; give statuses from 400 to 599, e.g. 500/503 or 429"
            )
        return statuses

    @classmethod
    def from_spec(cls, spec: str) -> FaultSettings:
        """Parse ``--faults``: JSON (``{"error_rate": 0.1, "rules": [...]}``) or ``key=value,...``.

        >>> FaultSettings.from_spec("error_rate=0.2,latency=0.05,statuses=500/503").error_statuses
        [500, 503]

        A bad spec is a ``ValueError`` whose message is one line (the first problem, and how many more).
        """
        spec = spec.strip()
        try:
            if spec.startswith("{"):
                return cls.model_validate_json(spec)
            values: dict[str, Any] = key_values(spec, "fault setting")
            given = [values.pop(key) for key in ("statuses", "error_statuses") if key in values]
            if given:
                statuses = given[-1]
                try:
                    values["error_statuses"] = [int(s) for s in statuses.split("/")]
                except ValueError:
                    raise ValueError(f"statuses must be HTTP statuses joined by /, e.g. 500/503, not {statuses!r}")
            return cls.model_validate(values)
        except ValidationError as exc:
            raise ValueError(first_problem(exc)) from None


def key_values(spec: str, what: str) -> dict[str, str]:
    """A command line's ``key=value,...`` settings (``-`` in a key read as ``_``), values stripped; ``what``
    names a setting in the error of one that is not ``key=value``."""
    values: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"{what} {item!r} is not key=value")
        values[key.strip().replace("-", "_")] = value.strip()
    return values


def first_problem(exc: ValidationError) -> str:
    """pydantic's report in one line: the first problem with where it is, and how many others there are."""
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")  # a validator's own ValueError says it all
    text = f"{where}: {message}" if where else message
    return text + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")


class FaultInjector:
    """Holds the fault settings and the request log of one app; decisions are made under a lock."""

    def __init__(self, settings: FaultSettings | None = None) -> None:
        self._lock = threading.Lock()
        self._log: deque[dict[str, Any]] = deque(maxlen=LOG_LIMIT)
        self._admitted: deque[float] = deque()
        self.set(settings or FaultSettings())

    def set(self, settings: FaultSettings) -> None:
        with self._lock:
            self.settings = settings.model_copy(deep=True)
            self._random = random.Random(settings.seed)
            self._admitted.clear()

    def log(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._log)

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._log.append(entry)

    def decide(self, method: str, path: str) -> dict[str, Any]:
        """What to do with one request: ``{"status", "retry_after", "drop", "delay", "after",
        "delay_after", "fault"}`` (``after``: act once the endpoint ran; ``delay_after``: then wait)."""
        s = self.settings
        with self._lock:
            decision: dict[str, Any] = {
                "status": None,
                "retry_after": None,
                "drop": False,
                "delay": s.latency,
                "after": False,
                "delay_after": 0.0,
                "body": None,
                "fault": None,
            }
            for rule in s.rules:
                if rule.count <= 0 or not rule.matches(method, path):
                    continue
                if rule.skip > 0:
                    # The first matching rule decides: while it skips, the request passes the rules.
                    rule.skip -= 1
                    break
                rule.count -= 1
                status = rule.status if rule.status is not None or rule.body is None else 200
                decision["body"] = rule.body
                if rule.after and not rule.drop:  # a drop acts after the endpoint anyway
                    decision.update(after=True, delay_after=rule.delay, status=status, fault="rule")
                else:
                    decision.update(
                        delay=s.latency + rule.delay, drop=rule.drop, status=status, fault="rule"
                    )
                if status is not None:
                    default = 1 if status == 429 else None
                    decision["retry_after"] = rule.retry_after if rule.retry_after is not None else default
                return decision
            now = time.monotonic()
            while self._admitted and now - self._admitted[0] >= 1.0:
                self._admitted.popleft()
            if s.rate_limit is not None and len(self._admitted) >= s.rate_limit:
                decision.update(status=429, retry_after=s.retry_after, fault="rate_limit")
                return decision
            self._admitted.append(now)
            if s.error_rate and self._random.random() < s.error_rate:
                decision.update(status=self._random.choice(s.error_statuses), fault="error_rate")
            elif s.drop_rate and self._random.random() < s.drop_rate:
                decision.update(drop=True, fault="drop_rate")
            return decision


#: Logged for a request whose caller disconnected before the answer (nginx's convention).
CLIENT_CLOSED_REQUEST = 499

_REASONS = {
    429: "Too many requests",
    500: "Internal server error",
    502: "Bad gateway",
    503: "Service unavailable",
    504: "Gateway timeout",
}


class FaultMiddleware:
    """ASGI middleware: applies the injector's decision to API requests and logs every one of them."""

    def __init__(self, app: Any, injector: FaultInjector) -> None:
        self.app = app
        self.injector = injector

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == API_PREFIX or path.startswith(API_PREFIX + "/")):
            await self.app(scope, receive, send)
            return
        started = time.time()
        method = scope["method"]
        scope.setdefault("state", {})
        decision = self.injector.decide(method, path)
        if decision["delay"]:
            await asyncio.sleep(decision["delay"])
        status_holder: dict[str, Any] = {"status": None}

        if decision["after"]:
            await self._after_endpoint(scope, receive, send, decision, status_holder)
        elif decision["status"] is not None:
            scope["state"]["elements"] = await _count_elements(receive)
            await _send_error(send, decision["status"], decision["retry_after"], decision["body"])
            status_holder["status"] = decision["status"]
        elif decision["drop"]:
            await self.app(scope, receive, _dropping_send(send, status_holder))
        else:

            async def recording_send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    status_holder["status"] = message["status"]
                await send(message)

            try:
                await self.app(scope, receive, recording_send)
            except ClientDisconnect:
                # the caller went away mid-request (a killed import): nothing to answer, nothing to trace
                status_holder["status"] = CLIENT_CLOSED_REQUEST
        self.injector.record(
            {
                "time": round(started, 3),
                "method": method,
                "path": path,
                "status": status_holder["status"],
                "elements": scope["state"].get("elements"),
                "fault": ("drop" if decision["drop"] else decision["fault"]) if decision["fault"] else None,
                "duration_ms": round((time.time() - started) * 1000, 1),
            }
        )


    async def _after_endpoint(
        self, scope: dict[str, Any], receive: Any, send: Any, decision: dict[str, Any],
        status_holder: dict[str, Any],
    ) -> None:
        """An ``after`` rule: the endpoint runs (and stores) with its answer held back; after
        ``delay_after`` seconds the rule's status is answered instead, or the held answer if it has none."""
        held: list[dict[str, Any]] = []

        async def holding_send(message: dict[str, Any]) -> None:
            held.append(message)

        try:
            await self.app(scope, receive, holding_send)
        except ClientDisconnect:
            status_holder["status"] = CLIENT_CLOSED_REQUEST
            return
        if decision["delay_after"]:
            # The body is read, so the next message the server gives is the caller hanging up: a caller
            # that gives up during the stall (its read timeout) is logged 499 and sent nothing.
            try:
                message = await asyncio.wait_for(receive(), decision["delay_after"])
            except TimeoutError:
                pass
            else:
                if message["type"] == "http.disconnect":
                    status_holder["status"] = CLIENT_CLOSED_REQUEST
                    return
        if decision["status"] is not None:
            await _send_error(send, decision["status"], decision["retry_after"], decision["body"])
            status_holder["status"] = decision["status"]
            return
        for message in held:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
            await send(message)


async def _send_error(send: Any, status: int, retry_after: int | None, answer: dict[str, Any] | None = None) -> None:
    """Answer an injected status with a small JSON body, or the rule's own ``answer`` exactly as given (and
    ``Retry-After`` when set)."""
    headers = [(b"content-type", b"application/json")]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    given = answer if answer is not None else {"error": _REASONS.get(status, "Injected fault"), "fault": "injected"}
    body = json.dumps(given, ensure_ascii=False).encode()
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _count_elements(receive: Any) -> int | None:
    """The length of ``bulk_staff_data`` in a request the endpoint will not see (for the request log)."""
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    try:
        elements = json.loads(b"".join(chunks)).get("bulk_staff_data")
    except (ValueError, AttributeError):
        return None
    return len(elements) if isinstance(elements, list) else None


def _dropping_send(send: Any, status_holder: dict[str, Any]) -> Any:
    """A ``send`` that forwards the headers and half the first body chunk, then nothing: the server
    closes the connection because the response never completes ("connection dropped mid-response")."""
    state: dict[str, Any] = {"start": None, "done": False}

    async def dropping(message: dict[str, Any]) -> None:
        if state["done"]:
            return
        if message["type"] == "http.response.start":
            state["start"] = message
            status_holder["status"] = message["status"]
            return
        if message["type"] == "http.response.body":
            body = message.get("body", b"")
            await send(state["start"])
            await send(
                {"type": "http.response.body", "body": body[: max(1, len(body) // 2)], "more_body": True}
            )
            state["done"] = True

    return dropping
