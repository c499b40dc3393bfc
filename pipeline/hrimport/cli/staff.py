"""``hrimport staff validate|import|plan``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hrimport.cli.common import (
    base_url_option,
    echo_file_import,
    echo_plan,
    json_option,
    progress_bar,
    report_dir_option,
    stage_lines,
)
from hrimport.config import load_config

# A folder given as the config or the export is refused by load_config or the reader in one line.
_file = click.Path(path_type=Path)


@click.group()
def staff() -> None:
    """Check and import staff records from an HRIS export."""


@staff.command("validate")
@click.argument("config", type=_file)
@click.argument("file", type=_file)
@json_option
def validate_command(config: Path, file: Path, as_json: bool) -> None:
    """Check every row of FILE against CONFIG without sending anything (no network).

    Prints every problem, one line each, and a summary; exits 0 if every row is valid, 1 otherwise.

    Example:

        hrimport staff validate samples/bamboohr_staff.toml samples/bamboohr_staff.csv
    """
    from hrimport.imports import import_file

    with stage_lines():
        run = import_file(load_config(config), file, kind="staff", validate_only=True)
    echo_file_import(run, as_json=as_json)
    raise SystemExit(run.exit_code)


@staff.command("import")
@click.argument("config", type=_file)
@click.argument("file", type=_file)
@click.option("--dry-run", is_flag=True, help="Read, map and validate, write the report, send nothing.")
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=None,
              help="Rows per bulk request (default: the config's, else 100).")
@click.option("--concurrency", type=click.IntRange(1, 4), default=None,
              help="Bulk requests in flight at once (default: the config's [staff] concurrency, else 1).")
@click.option("--accept-drift", is_flag=True,
              help="Send even if the drift guard would hold the file (after a person has checked it).")
@base_url_option
@report_dir_option
@json_option
def import_command(config: Path, file: Path, dry_run: bool, batch_size: int | None, concurrency: int | None,
                   accept_drift: bool, base_url: str | None, report_dir: Path | None, as_json: bool) -> None:
    """Import the staff in FILE as CONFIG describes, and write the report.

    Exits 0 when every row was added or updated, 1 when any row was not, 2 for a usage, config or
    file error, 4 when the service is unreachable or refuses the token, 5 when the drift guard held the
    file (nothing sent). The token is read from the environment variable the config names (default
    HRIMPORT_TOKEN).

    Example:

        HRIMPORT_TOKEN=... hrimport staff import samples/bamboohr_staff.toml samples/bamboohr_staff.csv
    """
    from hrimport.imports import import_file

    cfg = load_config(config)
    with progress_bar("Sending") as progress:
        run = import_file(cfg, file, kind="staff", dry_run=dry_run, base_url=base_url, batch_size=batch_size,
                          concurrency=concurrency, accept_drift=accept_drift, report_dir=report_dir,
                          progress=progress)
    echo_file_import(run, as_json=as_json)
    raise SystemExit(run.exit_code)


@staff.command("plan")
@click.argument("config", type=_file)
@click.argument("file", type=_file)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@base_url_option
@report_dir_option
def plan_command(config: Path, file: Path, as_json: bool, base_url: str | None, report_dir: Path | None) -> None:
    """What importing FILE would change, against what the platform last accepted (the state folder): each
    row new, changed (field by field), unchanged or invalid, and who is missing. Sends nothing; writes a
    dry run's report. Exits as a dry run does (5 when the drift guard would hold the file).

    Example:

        hrimport staff plan samples/bamboohr_staff.toml samples/bamboohr_staff.csv
    """
    from hrimport.imports import import_file

    run = import_file(load_config(config), file, kind="staff", dry_run=True, base_url=base_url,
                      report_dir=report_dir)
    plan = run.result.info.plan
    assert plan is not None  # a staff dry run always plans
    if as_json:
        click.echo(json.dumps({**plan, "held": run.result.info.held, "notes": run.result.info.notes,
                               "exit_code": run.exit_code}, ensure_ascii=False, indent=2))
    else:
        for note in run.result.info.notes:  # e.g. that the file holds an export older than the last imported
            click.echo(f"Note: {note}")
        echo_plan(plan)
        for message in run.result.info.held:
            click.echo(f"Would be held for review: {message}.")
        if run.report is not None:
            click.echo(f"Report: {run.report.html}")
    raise SystemExit(run.exit_code)
