"""``hrimport staff validate|import``."""

from __future__ import annotations

from pathlib import Path

import click

from hrimport.cli.common import base_url_option, echo_problems, echo_run, progress_bar, report_dir_option
from hrimport.config import load_config
from hrimport.report import default_report_folder, write_report
from hrimport.service.connection import Target, open_target, resolve_connection
from hrimport.staff_import import import_staff

_file = click.Path(path_type=Path, dir_okay=False)


@click.group()
def staff() -> None:
    """Check and import staff records from an HRIS export."""


@staff.command("validate")
@click.argument("config", type=_file)
@click.argument("file", type=_file)
def validate_command(config: Path, file: Path) -> None:
    """Check every row of FILE against CONFIG without sending anything (no network).

    Prints every problem, one line each, and a summary; exits 0 if every row is valid, 1 otherwise.

    Example:

        hrimport staff validate samples/bamboohr_staff.toml samples/bamboohr_staff.csv
    """
    cfg = load_config(config)
    result = import_staff(cfg, file, Target(None, cfg.service.customer_id or "", ""), dry_run=True)
    echo_problems(result)
    echo_run(result)
    raise SystemExit(result.exit_code)


@staff.command("import")
@click.argument("config", type=_file)
@click.argument("file", type=_file)
@click.option("--dry-run", is_flag=True, help="Read, map and validate, write the report, send nothing.")
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=None,
              help="Rows per bulk request (default: the config's, else 100).")
@base_url_option
@report_dir_option
def import_command(config: Path, file: Path, dry_run: bool, batch_size: int | None, base_url: str | None,
                   report_dir: Path | None) -> None:
    """Import the staff in FILE as CONFIG describes, and write the report.

    Exits 0 when every row was added or updated, 1 when any row was not, 2 for a usage, config or
    file error, 4 when the service is unreachable or refuses the token. The token is read from the
    environment variable the config names (default HRIMPORT_TOKEN).

    Example:

        HRIMPORT_TOKEN=... hrimport staff import samples/bamboohr_staff.toml samples/bamboohr_staff.csv
    """
    cfg = load_config(config)
    conn = resolve_connection(cfg.service, base_url=base_url)
    with open_target(conn, offline=dry_run) as target, progress_bar("Sending") as progress:
        result = import_staff(cfg, file, target, dry_run=dry_run, batch_size=batch_size, progress=progress)
    folder = default_report_folder(report_dir or cfg.report.folder, cfg.report.job, result.info.started_at)
    files = write_report(result, folder)
    echo_problems(result)
    echo_run(result)
    click.echo(f"Report folder: {folder}")
    click.echo(f"Report: {files.html}")
    raise SystemExit(result.exit_code)
