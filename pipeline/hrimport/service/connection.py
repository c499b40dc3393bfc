"""Connection settings for every command: base URL, token and customer id, or the embedded sandbox.

The embedded sandbox itself is started by ``hrimport.sandbox.embedded``.

Where each comes from, first found wins:

- base URL: ``--base-url``, the config's ``[service] base_url``, ``$HRIMPORT_BASE_URL``; none of them
  means the **embedded sandbox**: a sandbox started inside this process on a free loopback port, its
  data kept in ``$HRIMPORT_SANDBOX_DB`` (default ``.hrimport/sandbox.db``), with its demo tokens. A token
  set in the environment with no base URL is a ``ConfigError``, not a silent switch to the sandbox: the
  token says a real service was meant (an environment file that set it but not the URL).
- token: the environment variable the config names (``token_env``, default ``HRIMPORT_TOKEN``); never
  a command-line option, where other users of the machine could read it in the process list.
- customer id: the config's ``[service] customer_id``, ``$HRIMPORT_CUSTOMER_ID``, 99 on the sandbox.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hrimport.config import DEFAULT_REQUEST_TIMEOUT, DEFAULT_TOKEN_ENV, ServiceSettings
from hrimport.errors import ConfigError
from hrimport.hidden import remember_secret
from hrimport.service.urls import EMBEDDED_SANDBOX, check_base_url, service_host, shown_url

if TYPE_CHECKING:
    from hrimport.service.client import ServiceClient

__all__ = [
    "BASE_URL_SETTINGS",
    "SANDBOX_CUSTOMER_ID",
    "SANDBOX_CUSTOMER_TOKEN",
    "SANDBOX_VENDOR_TOKEN",
    "Connection",
    "Target",
    "open_target",
    "resolve_base_url",
    "resolve_connection",
    "service_host",
    "service_key",
]

log = logging.getLogger(__name__)

SANDBOX_CUSTOMER_ID = "99"
SANDBOX_CUSTOMER_TOKEN = "demo-customer-99"
SANDBOX_VENDOR_TOKEN = "demo-vendor"


@dataclass(frozen=True)
class Connection:
    """Resolved settings. ``token`` is a secret: it is never printed, logged or written to a report."""

    base_url: str | None  # None: start the embedded sandbox
    token: str
    customer_id: str | None
    token_env: str
    timeout: float = DEFAULT_REQUEST_TIMEOUT  # seconds one request may take ([service] timeout)

    @property
    def embedded(self) -> bool:
        return self.base_url is None

    def __repr__(self) -> str:  # keep the token out of tracebacks and debug output, the URL's own included
        url = shown_url(self.base_url) if self.base_url is not None else None
        return f"Connection(base_url={url!r}, customer_id={self.customer_id!r}, token=<hidden>)"


#: Where a base URL can be set, as an error message names them.
BASE_URL_SETTINGS = "--base-url, base_url in the config's [service] table, or $HRIMPORT_BASE_URL"


def resolve_base_url(
    service: ServiceSettings | None = None, *, base_url: str | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The base URL as set (option, config, environment), or None: the embedded sandbox.

    A URL that cannot be used as it is (not http(s), a password or a query string in it) is a
    ``ConfigError`` naming the setting it came from (``hrimport.service.urls.check_base_url``).
    """
    env = os.environ if environ is None else environ
    service = service or ServiceSettings()
    settings = (
        (base_url, "--base-url"),
        (service.base_url, "base_url in the config's [service] table"),
        (env.get("HRIMPORT_BASE_URL", "").strip(), "$HRIMPORT_BASE_URL"),
    )
    for url, setting in settings:
        if url:
            check_base_url(url, setting, service.token_env or DEFAULT_TOKEN_ENV)
            return url
    return None


def resolve_connection(
    service: ServiceSettings | None = None,
    *,
    base_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    vendor: bool = False,
    sending: bool = True,
) -> Connection:
    """Work out where to connect, from options, the config and the environment (see module docstring).

    ``sending=False``: for a command that sends nothing and only needs to know the service (its key in the state
    folder, ``service_key``) and the customer, such as marking records in the time-off ledger: a base URL
    without a token is no error there (the connection's token is then empty, and nothing may be sent with it).
    """
    env = os.environ if environ is None else environ
    service = service or ServiceSettings()
    url = resolve_base_url(service, base_url=base_url, environ=env)
    token_env = service.token_env or DEFAULT_TOKEN_ENV
    token = env.get(token_env, "").strip()
    customer_id = service.customer_id or env.get("HRIMPORT_CUSTOMER_ID", "").strip() or None
    if customer_id is not None and not customer_id.isdigit():
        # the config's value is checked when it is loaded; the variable's only here
        raise ConfigError(f"HRIMPORT_CUSTOMER_ID must be the company's number, not {customer_id!r}")
    if url is None and token:
        raise ConfigError(
            f"${token_env} is set but no base URL is: set it with {BASE_URL_SETTINGS} (or unset {token_env} "
            "to use the embedded sandbox)"
        )
    if url is None:
        token = SANDBOX_VENDOR_TOKEN if vendor else SANDBOX_CUSTOMER_TOKEN
        customer_id = customer_id or SANDBOX_CUSTOMER_ID
    elif token:
        remember_secret(token)  # never in the line of an error nobody foresaw (hrimport.hidden)
    elif sending:
        raise ConfigError(f"no token: set the environment variable {token_env} to the service's auth token")
    if url is not None:
        url = url.rstrip("/")
    return Connection(url, token, customer_id, token_env, service.timeout)


@dataclass(frozen=True)
class Target:
    """Where records go: the service (``client`` None when nothing is sent) and the company.

    ``service_url`` is what a report may show (``service_host``), or ``EMBEDDED_SANDBOX`` for the
    embedded sandbox (its outputs say so: ``hrimport.service.urls.describe_target``); ``service_key``
    names the service in the state folder (staff fingerprints, time-off ledger), so that a trial run on a
    sandbox never makes the production import skip a row.
    """

    client: ServiceClient | None
    customer_id: str
    service_url: str
    service_key: str = ""

    @property
    def keyed_as(self) -> str:
        """The service as the state folder keys what it accepted (``service_key``, else ``service_url``), and as a
        run's journal names it (``hrimport.outcomes.OutcomeJournal``)."""
        return self.service_key or self.service_url


def service_key(conn: Connection) -> str:
    """The name under which the state folder remembers what this service accepted."""
    if conn.base_url is None:
        from hrimport.sandbox.embedded import sandbox_db_path  # see open_target

        return f"embedded-sandbox:{sandbox_db_path().resolve()}"
    return service_host(conn.base_url)


@contextmanager
def open_target(conn: Connection, *, offline: bool = False) -> Iterator[Target]:
    """The service to send to: the configured one, or the embedded sandbox (said on the log, i.e. stderr)."""
    key = service_key(conn)
    if offline:
        yield Target(None, conn.customer_id or "", service_host(conn.base_url) if conn.base_url else EMBEDDED_SANDBOX,
                     key)
        return
    if conn.base_url is None:
        # Imported here, not at the top: only a run with no service configured starts the embedded
        # sandbox, and the service package must not depend on the sandbox (a second platform would be a
        # sibling of this package; the sandbox imitates this one).
        from hrimport.sandbox.embedded import running_sandbox, sandbox_db_path

        db = sandbox_db_path()
        log.warning("no service configured (--base-url, [service] base_url or HRIMPORT_BASE_URL): "
                    "using the embedded sandbox, data kept in %s", db)
        with running_sandbox(db) as url, _client(url, conn) as client:
            yield Target(client, conn.customer_id or "", EMBEDDED_SANDBOX, key)
    else:
        with _client(conn.base_url, conn) as client:
            yield Target(client, conn.customer_id or "", service_host(conn.base_url), key)


def _client(url: str, conn: Connection) -> ServiceClient:
    """The client for ``conn``: each request may take ``conn.timeout`` seconds, and one request's retries
    together at least three times that (so a slow service still gets its retries)."""
    # here: a command that never connects (``staff validate``) does not load httpx
    from hrimport.service.client import RetryPolicy, open_client

    retry = RetryPolicy(timeout=max(RetryPolicy.timeout, 3 * conn.timeout))
    return open_client(url, conn.token, timeout=conn.timeout, retry=retry, token_source=conn.token_env)

