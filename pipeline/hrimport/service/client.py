"""The platform's five endpoints over one injected ``httpx.Client``, with retries.

This module is the one place where httpx's exceptions (and the service's error answers) become hrimport's
(all drawn in ``hrimport.errors``)::

    HTTP 2xx                       -> the parsed JSON answer (staff records normalised, see ``normalise_user``)
    HTTP 2xx with the spec's error
    body and not the endpoint's
    answer ({"error": ...}; code
    ERROR_FATAL)                   -> RequestRejected; AccessDenied for ERROR_FATAL (its status is the 2xx)
    HTTP 401                       -> AuthenticationError          (exit 4; never retried)
    HTTP 409                       -> Conflict(RequestRejected)    (e.g. time off overlapping a stored record)
    HTTP 403                       -> AccessDenied(RequestRejected) (vendor listing without portal access)
    other HTTP 4xx (400, 404...)   -> RequestRejected              (bad data: status, error, details)
    429/500/502/503/504, timeouts,
    connection errors, still so
    after the retries; other 5xx   -> RetriesExhausted(ServiceUnavailableError)   (exit 4 if not handled)
    a 2xx that is not the JSON
    the spec describes, or a 404
    that says no error (no such
    endpoint: a wrong base URL)    -> UnexpectedAnswer(ServiceError)

Retry policy (``RetryPolicy``; api-notes "Transport and authentication": "429 ... back off exponentially",
"500 (retry, then quote a request id)"): exponential backoff with jitter (stamina), at most ``attempts``
tries within ``timeout`` seconds. A ``Retry-After`` header (seconds or an HTTP date) replaces the computed
wait, capped at ``retry_after_max``. What is retried depends on whether the call may be repeated:

- idempotent calls (the staff upserts are keyed by external id, the day calculation and the vendor listing
  only read): connection errors, timeouts, dropped connections, 429, 500, 502, 503 and 504. 500 is retried
  because the platform's own documentation says so; when it persists the error quotes the request id the
  service sent, if any.
- the time-off endpoint is *not* idempotent (issue 5): only failures where the request cannot have been
  processed are retried: connection refused or not established in time, no free pooled connection, 429
  and 503. A read timeout or a 500/502/504 there is reported at once, since a retry could add a record
  twice.

Never retried: 400, 401, 403, 404, 409 and every other 4xx.

One budget per run (issue 12): once one request has used up its retries on a connection-level failure
(no connection could be made, or the connection kept failing or timing out), the service is taken as
gone for this client's life. ``lost`` holds that failure, requests retrying at that moment stop, and every
later call raises at once ``RetriesExhausted`` with the code ``not-sent``, so a run whose service dies
ends within one request's retry budget (``RetryPolicy.timeout``) instead of waiting out the retries of
every remaining request; the import reports the rows not sent and exits 4. ``halt(reason)`` stops a
client the same way on purpose (Ctrl-C, SIGTERM: ``hrimport.interrupts``): requests in flight finish,
nothing new is sent.

The token lives only in the ``httpx.Client``'s headers; it never appears in an exception, a log line or a
repr (httpx itself masks ``Authorization`` in ``Headers.__repr__``).

Example::

    with open_client("http://127.0.0.1:8765/sandbox", token, token_source="HRIMPORT_TOKEN") as client:
        results = client.bulk_add_edit_staff("99", [record, ...])
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import httpx
import stamina

from hrimport.errors import (
    AccessDenied,
    AuthenticationError,
    Conflict,
    RequestRejected,
    RetriesExhausted,
    UnexpectedAnswer,
)
from hrimport.service.urls import shown_url

__all__ = [
    "RetryPolicy",
    "ServiceClient",
    "normalise_user",
    "open_client",
    "retry_after_seconds",
]

log = logging.getLogger(__name__)

#: Statuses worth another try for a call that may safely be repeated (see the module docstring).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: Statuses that say the request was not processed, so even a non-idempotent call may be repeated.
RETRY_STATUSES_UNPROCESSED = frozenset({429, 503})
#: Headers a service commonly uses for the request id to quote to its support (api-notes: "500: ... quote
#: a request id"); the platform does not publish which one it uses.
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-correlation-id", "x-amzn-requestid")


# --------------------------------------------------------------------------------------------- exceptions
# The exceptions this module raises live in ``hrimport.errors`` (one tree for all of hrimport); only the
# internal signal that an answer is worth another try stays here.


class _RetryableStatus(Exception):
    """Internal: an HTTP answer worth another try; becomes ``RetriesExhausted`` if the tries run out."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"HTTP {response.status_code} from {response.request.method} {response.request.url}")
        self.response = response


# ------------------------------------------------------------------------------------------------ helpers


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: at most ``attempts`` tries within ``timeout`` seconds, waits growing from
    ``wait_initial`` to ``wait_max`` (plus up to ``wait_jitter`` of random jitter); a ``Retry-After`` is
    honoured up to ``retry_after_max`` seconds."""

    attempts: int = 5
    timeout: float = 60.0
    wait_initial: float = 0.5
    wait_max: float = 10.0
    wait_jitter: float = 1.0
    retry_after_max: float = 30.0


def retry_after_seconds(value: str | None, *, now: dt.datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (delta-seconds or an HTTP date, RFC 9110 10.2.3).

    >>> retry_after_seconds("2")
    2.0
    >>> retry_after_seconds("soon") is None
    True
    """
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        seconds = (when - (now or dt.datetime.now(dt.UTC))).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def normalise_user(user: Any) -> Any:
    """Return a staff output record with the sample response's typo ``passpost_issue_date`` read as
    ``passport_issue_date`` (spec "Staff output record"; api-notes "A client must read either")."""
    if not isinstance(user, dict) or "passpost_issue_date" not in user:
        return user
    fixed = dict(user)
    typo = fixed.pop("passpost_issue_date")
    if not fixed.get("passport_issue_date"):
        fixed["passport_issue_date"] = typo
    return fixed


#: JSON as httpx encodes a ``json=`` body (``httpx._content.encode_json``), for a body this module encodes
_encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_JSON_CONTENT = {"Content-Type": "application/json"}


def _on_body_written(on_sent: Callable[[], None]) -> Callable[[str, dict[str, Any]], None]:
    """httpcore's ``trace`` extension calling ``on_sent`` once a request's body is written ("http11." or
    "http2." ``send_request_body.complete``)."""

    def trace(event: str, info: dict[str, Any]) -> None:
        if event.endswith(".send_request_body.complete"):
            on_sent()

    return trace


def _without_customer_id(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """A bulk element: ``customer_id`` is sent once, at the top level (a copy only of an element holding
    one; a StaffRecord's payload never does)."""
    return {k: v for k, v in record.items() if k != "customer_id"} if "customer_id" in record else record


def _request_id(response: httpx.Response, body: Any) -> str | None:
    for name in REQUEST_ID_HEADERS:
        header: str | None = response.headers.get(name)
        if header:
            return header
    if isinstance(body, dict):
        for key in ("request_id", "requestId", "trace_id"):
            if body.get(key):
                return str(body[key])
    return None


#: The key each endpoint's success answer holds (spec "Endpoints"), by the path's last segment.
_SUCCESS_KEYS = {
    "get_customer": "customer_list",
    "add_edit_staff": "user",
    "bulk_add_edit_staff": "result",
    "calculate-total-days": "totaldays",
    "apply-ee-time-off": "time_off_data",
}


def _is_refusal(body: Any, path: str) -> bool:
    """Whether a 2xx answer is one of the spec's error bodies ("Errors": ``{"error": "Invalid request"}``,
    ``{"code": "ERROR_FATAL", "message": "Access Denied", "payload": ""}``) rather than the endpoint's answer.
    The spec shows no status for them ("HTTP status codes of error responses: not shown"), so a platform may
    send them with 200: taken as the answer, a time-off row was reported added and remembered as stored,
    and never sent again. An answer holding the endpoint's own key is its answer, whatever else it holds."""
    if not isinstance(body, dict) or _SUCCESS_KEYS.get(path.rsplit("/", 1)[-1]) in body:
        return False
    return body.get("code") == "ERROR_FATAL" or bool(body.get("error"))


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:  # json.JSONDecodeError and UnicodeDecodeError are both ValueErrors
        return None


def _check_token(token: str) -> str:
    """Refuse a token that cannot be sent in a header, without ever quoting it."""
    token = token.strip()  # a trailing newline from `$(cat file)` is common and never part of a token
    if not token:
        raise AuthenticationError("the token is empty")
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise AuthenticationError(
            "the token contains spaces or characters that cannot be sent in an HTTP header"
        )
    return token


# ------------------------------------------------------------------------------------------------- client


class ServiceClient:
    """The platform's endpoints (spec "Endpoints" 1-5) over one ``httpx.Client``.

    The ``httpx.Client`` is injected and carries the base URL and the ``Authorization`` header; build one
    with ``open_client``. ``token_source`` (e.g. ``"HRIMPORT_TOKEN"``) is named in the 401 message so the
    person knows where to fix the token. Thread-safe: calls may run concurrently (time off, issue 5).
    """

    def __init__(
        self,
        http: httpx.Client,
        *,
        retry: RetryPolicy | None = None,
        token_source: str | None = None,
        owns_http: bool = False,
    ) -> None:
        self.http = http
        self.retry = retry or RetryPolicy()
        self.token_source = token_source
        self._owns_http = owns_http
        #: the connection-level failure that ended this client's use of the service (module docstring)
        self.lost: RetriesExhausted | None = None
        #: why sending was stopped on purpose ("SIGINT", "SIGTERM"), or None
        self.halted: str | None = None

    def __repr__(self) -> str:
        return f"<ServiceClient {shown_url(str(self.http.base_url))}>"  # a token in the URL is not shown

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def halt(self, reason: str) -> None:
        """Send nothing more: every later call raises ``RetriesExhausted`` (``not-sent``) at once, and calls
        waiting to retry give up. Safe to call from a signal handler (it only sets an attribute)."""
        self.halted = reason

    def close(self) -> None:
        """Close the ``httpx.Client`` if this object made it (an injected one is its owner's to close)."""
        if self._owns_http:
            self.http.close()

    # ---------------------------------------------------------------------------------------- endpoints

    def get_customers(self) -> dict[str, Any]:
        """The vendor record with its ``customer_list`` (spec endpoint 1; vendor tokens only, else
        ``AccessDenied``)."""
        answer = self._call("GET", "/vendor/get_customer")
        return self._expect_dict(answer, "GET /vendor/get_customer")

    def add_edit_staff(self, record: dict[str, Any]) -> dict[str, Any]:
        """Create or update one staff record (spec endpoint 2); the answer with ``user`` normalised.

        ``record`` holds the staff input fields at the top level, ``customer_id`` included.
        """
        answer = self._expect_dict(self._call("POST", "/api/add_edit_staff", record), "add_edit_staff")
        if "user" in answer:
            answer = {**answer, "user": normalise_user(answer["user"])}
        return answer

    def bulk_add_edit_staff(
        self, customer_id: str | int, records: Sequence[Mapping[str, Any] | str], *,
        on_resend: Callable[[], None] | None = None, on_sent: Callable[[], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Create or update many staff records (spec endpoint 3); the ``result`` list, users normalised.

        ``customer_id`` is sent once, as a string, at the top level (spec "Staff input fields"); a
        ``customer_id`` left inside an element is dropped, since elements must not hold one. An element
        given as text is the JSON of one (an object without ``customer_id``: ``hrimport.service.staff``
        encodes each record once, for this body and for the state folder), sent as it is. ``on_resend``
        is called when the request is sent again after an attempt the service may have processed (its
        answer lost): a record that attempt created is then answered "updated". ``on_sent`` is called once
        the request's body is written (at each attempt), while the service works on it.
        """
        answer = self._expect_dict(
            self._call("POST", "/api/bulk_add_edit_staff", content=self.bulk_json(customer_id, records),
                       on_resend=on_resend, on_sent=on_sent),
            "bulk_add_edit_staff",
        )
        result = answer.get("result")
        if not isinstance(result, list):
            raise UnexpectedAnswer("the service's bulk answer holds no 'result' list; check the base URL")
        for item in result:  # the answer was parsed for this call alone: normalised in place, not copied
            if isinstance(item, dict) and "user" in item:
                item["user"] = normalise_user(item["user"])
        return result

    @staticmethod
    def bulk_json(customer_id: str | int, records: Sequence[Mapping[str, Any] | str]) -> bytes:
        """The bulk request body as sent, encoded as httpx encodes ``json=`` (UTF-8, no spaces):
        ``customer_id`` once, as a string, at the top level (spec "Staff input fields"), a ``customer_id``
        left inside an element dropped (elements must not hold one), and each element given as text put in
        as it is, so no element is encoded twice."""
        elements = ",".join(r if isinstance(r, str) else _encode_json(_without_customer_id(r)) for r in records)
        return f'{{"customer_id":{_encode_json(str(customer_id))},"bulk_staff_data":[{elements}]}}'.encode()

    def calculate_total_days(
        self,
        country: str,
        start: str | dt.date,
        end: str | dt.date,
        half_start: bool = False,
        half_end: bool = False,
    ) -> float | int:
        """Leave days between two dates in a country as the service counts them (spec endpoint 4).

        The spec types ``totaldays`` as an integer, yet half days make 3.5 (api-notes): either is returned.
        """
        body = {
            "country": country,
            "start_date": start.isoformat() if isinstance(start, dt.date) else start,
            "end_date": end.isoformat() if isinstance(end, dt.date) else end,
            "is_half_start_date": bool(half_start),
            "is_half_end_date": bool(half_end),
        }
        answer = self._expect_dict(
            self._call("POST", "/api/calculate-total-days", body), "calculate-total-days"
        )
        days = answer.get("totaldays")
        if isinstance(days, str):  # tolerate a number sent as text
            try:
                days = float(days) if "." in days else int(days)
            except ValueError:
                pass
        if isinstance(days, bool) or not isinstance(days, int | float):
            raise UnexpectedAnswer(f"the service's day calculation holds no number in 'totaldays': {days!r}")
        return days

    def apply_time_off(self, body: dict[str, Any]) -> dict[str, Any]:
        """Add one time-off record (spec endpoint 5); the answer (``time_off_data``, ``message``).

        Not idempotent, so retried only when the request cannot have been processed (module docstring).
        A period overlapping a stored record raises ``Conflict``.
        """
        answer = self._call("POST", "/api/apply-ee-time-off", body, idempotent=False)
        return self._expect_dict(answer, "apply-ee-time-off")

    # -------------------------------------------------------------------------------------- machinery

    def _call(self, method: str, path: str, body: Any = None, *, content: bytes | None = None,
              idempotent: bool = True, on_resend: Callable[[], None] | None = None,
              on_sent: Callable[[], None] | None = None) -> Any:
        """Send one request with retries; return the parsed JSON of a 2xx or raise this module's errors.

        The request's JSON is ``body``, or ``content`` already encoded. ``on_resend`` is called before each
        repeat of an attempt the service may have processed; ``on_sent`` when an attempt's body is written
        (httpcore's ``trace`` extension)."""
        extensions = {"trace": _on_body_written(on_sent)} if on_sent is not None else None
        if self.halted is not None:
            raise RetriesExhausted(f"not sent: the run was stopped ({self.halted}); run the import again",
                                   code="not-sent", attempts=0)
        if self.lost is not None:
            raise RetriesExhausted(
                "not sent: the service became unreachable earlier in this run; run the import again once it "
                "is reachable",
                code="not-sent", attempts=0, unreachable=True, service_lost=True,
            )
        policy = self.retry
        attempts = 0
        maybe_processed = False  # did an earlier attempt reach the service and lose its answer?
        try:
            for attempt in stamina.retry_context(
                on=self._retry_hook(idempotent),
                attempts=policy.attempts,
                timeout=policy.timeout,
                wait_initial=policy.wait_initial,
                wait_max=policy.wait_max,
                wait_jitter=policy.wait_jitter,
            ):
                with attempt:
                    attempts = attempt.num
                    if maybe_processed and on_resend is not None:
                        on_resend()
                    try:
                        response = (
                            self.http.request(method, path, json=body, extensions=extensions) if content is None
                            else self.http.request(method, path, content=content, headers=_JSON_CONTENT,
                                                   extensions=extensions))
                    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout):
                        raise  # never reached the service
                    except httpx.TransportError:
                        maybe_processed = True
                        raise
                    log.debug("%s %s -> HTTP %s (attempt %d)", method, path, response.status_code, attempts)
                    statuses = RETRY_STATUSES if idempotent else RETRY_STATUSES_UNPROCESSED
                    if response.status_code in statuses:
                        maybe_processed = maybe_processed or response.status_code not in RETRY_STATUSES_UNPROCESSED
                        raise _RetryableStatus(response)
        except _RetryableStatus as exc:
            response = exc.response
        except httpx.TransportError as exc:
            raise self._lose_service(self._transport_failure(exc, method, path, attempts)) from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # too many redirects, bad URL...
            raise RetriesExhausted(
                f"could not send {method} {path}: {exc}", code="transport-failed", attempts=attempts
            ) from None
        return self._answer(response, method, path, attempts)

    def _retry_hook(self, idempotent: bool) -> Callable[[Exception], bool | float]:
        """stamina's ``on=`` hook: whether to try again, or how long to wait when ``Retry-After`` says."""

        def hook(exc: Exception) -> bool | float:
            if self.lost is not None or self.halted is not None:
                return False  # the service is gone, or the run is stopping: waiting longer helps nobody
            if isinstance(exc, _RetryableStatus):
                wait = retry_after_seconds(exc.response.headers.get("retry-after"))
                if wait is None:
                    return True  # stamina's exponential backoff with jitter
                return min(wait, self.retry.retry_after_max)
            if idempotent:
                return isinstance(
                    exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError
                )
            # not processed for sure: no connection was made, or none was free in the pool
            return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)

        return hook

    def _lose_service(self, failure: RetriesExhausted) -> RetriesExhausted:
        """Mark ``failure`` as ending the run's use of the service when it is connection-level and its
        retries were used up (a single dropped answer of a call that must not be repeated is not)."""
        if failure.unreachable or (failure.code in ("transport-failed", "timeout") and failure.attempts > 1):
            failure.service_lost = True
            if self.lost is None:
                self.lost = failure
        elif self.lost is not None:  # cut short because another request found the service gone
            failure.service_lost = True
        return failure

    def _transport_failure(
        self, exc: httpx.TransportError, method: str, path: str, attempts: int
    ) -> RetriesExhausted:
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        where = shown_url(str(self.http.base_url))  # a token written into the base URL is never echoed
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return RetriesExhausted(
                f"cannot connect to the service at {where} ({type(exc).__name__} after {tries}): "
                "check the base URL and that the service is running",
                code="connect-failed",
                attempts=attempts,
                unreachable=True,
            )
        if isinstance(exc, httpx.TimeoutException):
            return RetriesExhausted(
                f"the service at {where} did not answer {method} {path} in time "
                f"({type(exc).__name__} after {tries})",
                code="timeout",
                attempts=attempts,
            )
        return RetriesExhausted(
            f"the connection to {where} failed during {method} {path} ({type(exc).__name__} after {tries})",
            code="transport-failed",
            attempts=attempts,
        )

    def _answer(self, response: httpx.Response, method: str, path: str, attempts: int) -> Any:
        """Turn a final answer into its JSON or into this module's exception for its status."""
        status = response.status_code
        body = _json_or_none(response)
        if 200 <= status < 300:
            if body is None:
                raise UnexpectedAnswer(
                    f"the service answered {method} {path} with something that is not JSON; check the base URL"
                )
            if not _is_refusal(body, path):
                return body
        error = ""
        details: list[dict[str, Any]] = []
        if isinstance(body, dict):
            error = str(body.get("error") or body.get("message") or "")
            if isinstance(body.get("details"), list):
                details = body["details"]
        if 200 <= status < 300 and body.get("code") == "ERROR_FATAL":
            raise AccessDenied(status, error, details, body, method=method, path=path)
        if 200 <= status < 300:  # the spec's error body in a success status: refused for what it says
            raise RequestRejected(status, error, details, body, method=method, path=path)
        if status == 401:
            text = "the service refused the token (HTTP 401"
            text += f": {error})" if error else ")"
            if self.token_source:
                text += f": check the token in ${self.token_source}"
            raise AuthenticationError(text)
        if status == 403:
            raise AccessDenied(status, error, details, body, method=method, path=path)
        if status == 409:
            raise Conflict(status, error, details, body, method=method, path=path)
        if status == 404 and not error:
            # the platform's refusals say what they refuse ({"error": ...} or {"message": ...}; api-notes); a
            # bare 404 is no such endpoint: a wrong base URL, which must not make every row "rejected" for HR
            # to fix (staff), or "unknown staff" (time off), but stop the run as a service it cannot use
            raise UnexpectedAnswer(f"the service answered {method} {path} with HTTP 404 (no such endpoint there); "
                                   "check the base URL")
        if 400 <= status < 500 and status != 429:
            raise RequestRejected(status, error, details, body, method=method, path=path)
        if status >= 429:  # 429 or 5xx: retried as far as allowed, still failing
            request_id = _request_id(response, body)
            tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
            text = f"the service answered {method} {path} with HTTP {status}"
            if error:
                text += f" ({error})"
            text += f" after {tries}"
            if request_id:
                text += f"; quote request id {request_id} to its support"
            raise RetriesExhausted(
                text, code=f"http-{status}", attempts=attempts, status=status, request_id=request_id
            )
        raise UnexpectedAnswer(
            f"the service answered {method} {path} with HTTP {status}"
            + (f" (to {response.headers['location']})" if "location" in response.headers else "")
            + "; check the base URL"
        )

    @staticmethod
    def _expect_dict(answer: Any, what: str) -> dict[str, Any]:
        if not isinstance(answer, dict):
            raise UnexpectedAnswer(f"the service's answer to {what} is not a JSON object; check the base URL")
        return answer


def open_client(
    base_url: str,
    token: str,
    *,
    timeout: float = 30.0,
    max_connections: int = 4,
    retry: RetryPolicy | None = None,
    token_source: str | None = None,
    transport: httpx.BaseTransport | None = None,
) -> ServiceClient:
    """Build a ``ServiceClient`` with its own connection pool; use it as a context manager to close it.

    ``timeout`` bounds each request (connecting at most 10 s of it); ``max_connections`` bounds concurrent
    requests; ``token_source`` names where the token came from (``"HRIMPORT_TOKEN"``) for the 401 message;
    ``transport`` is for tests (``httpx.MockTransport``).

    Example::

        with open_client("http://127.0.0.1:8765/sandbox", os.environ["HRIMPORT_TOKEN"]) as client:
            print(client.get_customers()["name"])
    """
    from hrimport import __version__ as version

    token = _check_token(token)
    http = httpx.Client(
        base_url=base_url.rstrip("/"),
        headers={
            # api-notes: newer pages send "Bearer <token>"; the vendor listing requires it
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            "User-Agent": f"hrimport/{version}",
        },
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        transport=transport,
    )
    return ServiceClient(http, retry=retry, token_source=token_source, owns_http=True)


def log_retry(details: stamina.instrumentation.RetryDetails) -> None:
    """One readable line per retry, e.g. 'retrying in 1.2 s (attempt 2): HTTP 503'."""
    cause = details.caused_by
    why = f"HTTP {cause.response.status_code}" if isinstance(cause, _RetryableStatus) else type(cause).__name__
    log.warning("service busy or unreachable (%s); retrying in %.1f s (attempt %d)",
                why, details.wait_for, details.retry_num + 1)

