"""What the commands share: opening the service (or the embedded sandbox), progress, printing a run."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from pipeline.client import ServiceClient, open_client
from pipeline.connection import Connection, running_sandbox, sandbox_db_path, service_host
from pipeline.outcomes import RunResult
from pipeline.staff_import import Target

base_url_option = click.option(
    "--base-url", metavar="URL", envvar="HRIMPORT_BASE_URL", show_envvar=True,
    help="The service's base URL (with its instance segment). Default: the config's, else the embedded sandbox.",
)


@contextmanager
def open_target(conn: Connection, *, offline: bool = False) -> Iterator[Target]:
    """The service to send to: the configured one, or the embedded sandbox (said on stderr)."""
    if offline:
        yield Target(None, conn.customer_id or "", conn.base_url or "(embedded sandbox)")
        return
    if conn.embedded:
        db = sandbox_db_path()
        click.echo(f"No service configured (--base-url, [service] base_url or HRIMPORT_BASE_URL): "
                   f"using the embedded sandbox, data kept in {db}", err=True)
        with running_sandbox(db) as url, _client(url, conn) as client:
            yield Target(client, conn.customer_id or "", service_host(url))
    else:
        assert conn.base_url is not None
        with _client(conn.base_url, conn) as client:
            yield Target(client, conn.customer_id or "", service_host(conn.base_url))


@contextmanager
def _client(url: str, conn: Connection) -> Iterator[ServiceClient]:
    with open_client(url, conn.token, token_source=conn.token_env) as client:
        yield client


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on a terminal; nothing at all when stderr is not a TTY (cron, CI, pipes)."""
    if not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=0, label=label, file=sys.stderr) as bar:
        def advance(n: int) -> None:
            bar.update(n)
        yield advance


def echo_run(result: RunResult) -> None:
    """The run's verdict and its counts, one line each, log-friendly."""
    counts = {k: v for k, v in result.counts().items() if v}
    parts = " + ".join(f"{v:,} {k}" for k, v in counts.items()) or "0"
    click.echo(f"{result.verdict()}.")
    click.echo(f"Rows read: {len(result.rows):,} = {parts}")
    if result.info.ignored_columns:
        cols = ", ".join(repr(c) for c in result.info.ignored_columns)
        click.echo(f"Ignored columns (neither mapped nor packed as custom data): {cols}")


def echo_problems(result: RunResult, limit: int = 200) -> None:
    shown = 0
    for row in result.need_attention:
        for problem in row.problems or ():
            if shown < limit:
                click.echo(problem.message)
            shown += 1
        if not row.problems and row.message:
            if shown < limit:
                click.echo(f"Row {row.row}: {row.outcome.label}: {row.message}")
            shown += 1
    if shown > limit:
        click.echo(f"... and {shown - limit:,} more (see the report)")


def report_dir_option(func: Callable) -> Callable:
    return click.option(
        "--report-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
        help="Where report folders go (default: the config's [report] folder, else ./reports).",
    )(func)
