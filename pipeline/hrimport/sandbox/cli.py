"""``hrimport sandbox ...``: run the sandbox and administer its SQLite file (server running or not).

The commands are thin: each opens ``hrimport.sandbox.store.Store`` or builds the app, makes one call,
and turns a known mistake into ``click.ClickException`` with a message saying how to fix it.
"""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import click

from hrimport.fields import Basis

DEFAULT_DB = "sandbox.db"
_db_option = click.option(
    "--db",
    "db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB,
    show_default=True,
    help="SQLite file of the sandbox (created with the demo dataset when new).",
)


class _BadOption(click.ClickException):
    """A bad option value: one line ``Error: ...``, and exit 2 like every usage error (not click's usage dump)."""

    exit_code = 2


_Opened = TypeVar("_Opened")


def _open_db(db: Path, opener: Callable[[Path], _Opened]) -> _Opened:
    """``opener(db)``, with a --db that SQLite cannot use (a spreadsheet given by mistake, a path under a
    file) or that is another program's database told in one line, exit 2, instead of a traceback."""
    from hrimport.sandbox.store import NotASandboxDatabase

    try:
        return opener(db)
    except (sqlite3.DatabaseError, OSError, NotASandboxDatabase) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise _BadOption(f"--db {db}: {reason}; give the sandbox's SQLite file or a new path") from None


@contextmanager
def _refusal_in_one_line() -> Iterator[None]:
    """An admin change the store refuses (an unknown customer, a leave-type name taken): its one line, exit 2."""
    from hrimport.sandbox.store import AdminRefused

    try:
        yield
    except AdminRefused as exc:
        raise _BadOption(str(exc)) from None


@click.group()
def sandbox() -> None:
    """Run and administer the local sandbox service."""


@sandbox.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8765, show_default=True, type=int, help="Port (0 picks a free one).")
@_db_option
@click.option(
    "--faults",
    "faults_spec",
    default=None,
    metavar="SPEC",
    help='Faults from the start: "error_rate=0.1,latency=0.2,rate_limit=5,drop_rate=0.05,seed=1,'
    'statuses=500/503" or JSON like \'{"rules": [{"path": "/api/add_edit_staff", '
    '"status": 503, "count": 2}]}\'.',
)
@click.option(
    "--alter",
    "alter_spec",
    default=None,
    metavar="SPEC",
    help='Store staff values otherwise than sent, as real platforms do: "typical" (free text cut to 40 '
    'characters, highest_education not kept), or "truncate_text=40,drop_fields=highest_education/location", '
    "or JSON.",
)
def serve(host: str, port: int, db: Path, faults_spec: str | None, alter_spec: str | None) -> None:
    """Run the sandbox until Ctrl-C (or SIGTERM); prints its base URL once it answers.

    \b
    Example:
        hrimport sandbox serve --port 8765 --db sandbox.db
        curl -H 'Authorization: Bearer demo-vendor' http://127.0.0.1:8765/sandbox/vendor/get_customer
        hrimport sandbox serve --alter typical   # stores less than sent: read-after-write warnings
    """
    import uvicorn

    from hrimport.sandbox.alterations import Alterations
    from hrimport.sandbox.app import create_app
    from hrimport.sandbox.faults import FaultSettings

    try:
        faults = FaultSettings.from_spec(faults_spec) if faults_spec else None
    except ValueError as exc:
        raise _BadOption(f"--faults {faults_spec!r}: {exc}") from None
    try:
        alterations = Alterations.from_spec(alter_spec) if alter_spec else None
    except ValueError as exc:
        raise _BadOption(f"--alter {alter_spec!r}: {exc}") from None
    app = _open_db(db, lambda path: create_app(path, faults, alterations))
    server = uvicorn.Server(
        uvicorn.Config(
            app, host=host, port=port, log_level="warning",
            timeout_graceful_shutdown=2,
        )
    )

    def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            time.sleep(0.02)
        bound = server.servers[0].sockets[0].getsockname()[1]
        click.echo(f"http://{host}:{bound}/sandbox")  # click.echo flushes: a script can read this line

    threading.Thread(target=announce, daemon=True).start()
    # uvicorn handles SIGINT/SIGTERM itself while it runs, then restores these handlers and re-raises
    # the signal it caught: ignoring it here makes Ctrl-C and SIGTERM a clean exit (status 0).
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: None)
    try:
        server.run()
    except SystemExit:  # uvicorn ends the process itself when it cannot listen, with status 3 ("another run")
        if server.started:
            raise
    if not server.started:  # uvicorn logged why on the line above
        raise _BadOption(f"the sandbox could not listen on {host}:{port}; try another --port (--port 0: any free one)")


@sandbox.command("add-customer")
@_db_option
@click.argument("customer_id", type=int)
@click.argument("name")
@click.option("--inactive", is_flag=True, help="The customer is not active (writes for it are denied).")
@click.option("--vendor", "vendor_id", type=int, default=None, help="Vendor of the customer (default: 1).")
@click.option("--logo", default="", help="Logo URL (default: empty).")
def add_customer(
    db: Path, customer_id: int, name: str, inactive: bool, vendor_id: int | None, logo: str
) -> None:
    """Add a customer company (or update the one with that id).

    \b
    Example:
        hrimport sandbox add-customer --db sandbox.db 200 "Globex Pte Ltd"
    """
    from hrimport.sandbox.store import Store

    _open_db(db, Store).add_customer(customer_id, name, active=not inactive, vendor_id=vendor_id, logo=logo)
    click.echo(f"customer {customer_id} {name!r} ({'inactive' if inactive else 'active'}) in {db}")


@sandbox.command("add-token")
@_db_option
@click.argument("token")
@click.option("--customer", "customer_id", type=int, default=None, help="Company the token acts for.")
@click.option("--vendor", "vendor_id", type=int, default=None, help="Vendor the token's user belongs to.")
@click.option("--no-portal", is_flag=True, help="The vendor user has no vendor portal access.")
def add_token(db: Path, token: str, customer_id: int | None, vendor_id: int | None, no_portal: bool) -> None:
    """Add an auth token for a company (--customer) or a vendor user (--vendor).

    \b
    Example:
        hrimport sandbox add-token --db sandbox.db my-token --customer 200
    """
    from hrimport.sandbox.store import Store

    if (customer_id is None) == (vendor_id is None):
        raise click.UsageError("give exactly one of --customer ID or --vendor ID")
    if no_portal and vendor_id is None:
        raise click.UsageError("--no-portal applies to vendor tokens (--vendor ID) only")
    with _refusal_in_one_line():
        user_id = _open_db(db, Store).add_token(
            token, customer_id=customer_id, vendor_id=vendor_id, portal=not no_portal
        )
    whom = f"customer {customer_id}" if customer_id is not None else f"vendor {vendor_id}"
    click.echo(f"token {token!r} (user {user_id}) acts for {whom} in {db}")


@sandbox.command("add-data-type")
@_db_option
@click.option("--customer", "customer_id", type=int, required=True, help="Company the data types belong to.")
@click.argument("names", nargs=-1, required=True)
def add_data_type(db: Path, customer_id: int, names: tuple[str, ...]) -> None:
    """Configure company data types (names allowed in customer_data_type).

    \b
    Example:
        hrimport sandbox add-data-type --db sandbox.db --customer 99 "Cost Center" "Band"
    """
    from hrimport.sandbox.store import Store

    store = _open_db(db, Store)
    with _refusal_in_one_line():
        store.add_data_types(customer_id, list(names))
    click.echo(f"customer {customer_id} data types: {', '.join(sorted(store.data_types(customer_id)))}")


@sandbox.command("add-leave-type")
@_db_option
@click.argument("english")
@click.argument("chinese")
@click.option("--traditional", default=None, help="Traditional Chinese name (default: the Chinese name).")
@click.option(
    "--basis",
    type=click.Choice(["Working", "Calendar"]),
    default="Working",
    show_default=True,
    help="Working: weekends and public holidays not counted; Calendar: every day counted.",
)
@click.option("--id", "leave_type_id", type=int, default=None, help="Id (default: the next free one).")
def add_leave_type(
    db: Path, english: str, chinese: str, traditional: str | None, basis: Basis, leave_type_id: int | None
) -> None:
    """Add a leave type to the dictionary (or change the one with that English name or id, keeping its id).

    \b
    Example:
        hrimport sandbox add-leave-type --db sandbox.db "Volunteer Leave" 志愿假 --traditional 志願假
    """
    from hrimport.sandbox.store import Store

    with _refusal_in_one_line():
        new_id = _open_db(db, Store).add_leave_type(
            english, chinese, zh_hant=traditional, basis=basis, leave_type_id=leave_type_id
        )
    click.echo(f"leave type {new_id} {english!r} / {chinese!r} ({basis}) in {db}")
