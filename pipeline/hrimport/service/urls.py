"""A service's URL made fit to show, and the name of where a run's records went.

A base URL may carry a secret: a user may write ``https://x:TOKEN@host/...`` or ``?api_key=...`` into it.
``check_base_url`` refuses such a base URL before anything is sent; and every URL hrimport prints, logs or
writes to a report or ``summary.json`` goes through ``shown_url`` (or ``service_host``, which drops
credentials and query altogether), so that no such secret is ever echoed, the refusal's included.

Its own module, not ``connection``: the client (``hrimport.service.client``) names the URL in its "cannot
connect" message, and ``connection`` imports the client.

A run's *target* says where its records went, in the words ``summary.json`` and the report use:
``"embedded-sandbox"`` (the sandbox started inside hrimport when no base URL is set), ``"sandbox at URL"``
(a sandbox started with ``hrimport sandbox serve``, whose base URL always ends in ``/sandbox``) or
``"service at URL"``.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hrimport.errors import ConfigError

__all__ = [
    "EMBEDDED_SANDBOX",
    "HIDDEN",
    "check_base_url",
    "describe_target",
    "is_sandbox_target",
    "service_host",
    "shown_url",
]

HIDDEN = "***"

#: What a run against the embedded sandbox records as its service URL: the sandbox has no lasting URL (a
#: free port picked for each run), and its name is what every output must say.
EMBEDDED_SANDBOX = "embedded-sandbox"

# The sandbox's API is served under this path (hrimport.sandbox.app.API_PREFIX); named here, not imported,
# so that the code talking to the platform never imports the sandbox.
_SANDBOX_PATH = "/sandbox"


def shown_url(url: str) -> str:
    """``url`` with its credentials hidden: the user and password, and every query value, become ``***``.

    Any query parameter may be a key (``token``, ``access_token``, ``api_key``, ``sig``...), and a base URL
    needs none to be recognised, so every value is hidden; the names stay, to show what was set.

    >>> shown_url("https://x:s3cret@api.example.com/api:v1?token=abc&v=2")
    'https://***:***@api.example.com/api:v1?token=***&v=***'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # a malformed host or port: show nothing of it rather than risk a secret
        return "(a URL that cannot be read)"
    if ":" in host:  # IPv6
        host = f"[{host}]"
    netloc = host + (f":{port}" if port is not None else "")
    if parts.username is not None or parts.password is not None:
        netloc = HIDDEN + (f":{HIDDEN}" if parts.password is not None else "") + "@" + netloc
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(key, HIDDEN) for key, _ in pairs], safe="*") if pairs else HIDDEN
    fragment = HIDDEN if parts.fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def check_base_url(url: str, setting: str, token_env: str) -> None:
    """Refuse a base URL the requests cannot be sent to as meant: ``ConfigError`` naming ``setting`` (where
    the URL was written) and the fix, the URL shown without its secrets.

    Besides a URL that is not http(s): a user name or password in it is sent by httpx as Basic auth in
    place of the Bearer token (every request answered 401, "check the token"), and a query string ends up
    before every request's path (``/api?x=1/add_edit_staff``: every request to the base URL's own path).

    >>> check_base_url("https://x:s3cret@api.example.com/api:v1", "--base-url", "HRIMPORT_TOKEN")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    hrimport.errors.ConfigError: --base-url has a user name or password in it (https://***:***@api.example.com/api:v1), ...
    """
    if not _is_http_url(url):
        raise ConfigError(f"{setting} {shown_url(url)!r} is not an http(s) URL, e.g. https://api.example.com/api:v1")
    fix = f"put the token in the environment variable named by token_env ({token_env}), not in the URL"
    if "@" in urlsplit(url).netloc:
        raise ConfigError(f"{setting} has a user name or password in it ({shown_url(url)}), which would be sent "
                          f"in place of the token: remove it from the URL, and {fix}")
    if "?" in url.split("#", 1)[0]:
        shown = shown_url(url) if urlsplit(url).query else shown_url(url).split("#", 1)[0] + "?"  # a bare "?" too
        raise ConfigError(f"{setting} has a query string ({shown}), which would be added to every request's path: "
                          f"remove everything from the '?' on, and {fix}")


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        port = parts.port  # parsed here, so that "host:abc" is refused now rather than by the client
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and port != 0


def service_host(url: str) -> str:
    """The part of a base URL a report may show: scheme, host and path, never credentials or query.

    The one place a service's URL is made fit to name state by; the report shows its host.

    >>> service_host("https://user:pw@api.example.com:8443/api:v1?sig=abc")
    'https://api.example.com:8443/api:v1'
    """
    if url == EMBEDDED_SANDBOX:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(a URL that cannot be read)"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}"


def describe_target(service_url: str) -> str:
    """Where a run's records went, from its ``service_url``; ``""`` when nothing was to be sent (validate).

    >>> describe_target("embedded-sandbox")
    'embedded-sandbox'
    >>> describe_target("http://127.0.0.1:8765/sandbox")
    'sandbox at http://127.0.0.1:8765/sandbox'
    >>> describe_target("https://u:p@api.example.com/api:v1")
    'service at https://api.example.com/api:v1'
    """
    if not service_url or service_url == EMBEDDED_SANDBOX:
        return service_url
    shown = service_host(service_url)
    kind = "sandbox" if urlsplit(shown).path.rstrip("/").endswith(_SANDBOX_PATH) else "service"
    return f"{kind} at {shown}"


def is_sandbox_target(service_url: str) -> bool:
    """Whether a run's records went to a sandbox (embedded or served), not to the platform."""
    return describe_target(service_url).startswith((EMBEDDED_SANDBOX, "sandbox at "))
