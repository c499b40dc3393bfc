"""``hrimport timeoff validate|import``."""

from __future__ import annotations

from pathlib import Path

import click

from hrimport.cli.common import (
    base_url_option,
    echo_file_import,
    json_option,
    progress_bar,
    report_dir_option,
    stage_lines,
)
from hrimport.config import load_config

# A folder given as the config or the export is refused by load_config or the reader in one line.
_file = click.Path(path_type=Path)



@click.group()
def timeoff() -> None:
    """Check and import time-off records (leave history, monthly leave) from a spreadsheet."""


@timeoff.command("validate")
@click.argument("config", type=_file)
@click.argument("file", type=_file)
@json_option
def validate_command(config: Path, file: Path, as_json: bool) -> None:
    """Check every row of FILE against CONFIG without sending anything (no network).

    Checks fields, leave types (English or Chinese), half-day markers, overlaps within the file and leaves
    listed twice.
    Totals are checked against the service's calculation only by `import` (and `import --dry-run`).
    Prints every problem, one line each, and a summary; exits 0 if every row is valid, 1 otherwise.

    Example:

    \b
        hrimport timeoff validate samples/leave_history.toml samples/leave_history.xlsx
    """
    from hrimport.imports import import_file

    with stage_lines():
        run = import_file(load_config(config), file, kind="timeoff", validate_only=True)
    echo_file_import(run, as_json=as_json)
    raise SystemExit(run.exit_code)


@timeoff.command("import")
@click.argument("config", type=_file)
@click.argument("file", type=_file)
@click.option("--dry-run", is_flag=True,
              help="Check everything, totals included (the calculation endpoint only reads), write the "
                   "report, add nothing.")
@click.option("--concurrency", type=click.IntRange(1, 32), default=None,
              help="Records posted at once (default: the config's [timeoff] concurrency, else 4).")
@click.option("--new-ledger", is_flag=True,
              help="Send although the ledger went missing while earlier imports in the report folder sent time "
                   "off (the state folder lost or moved: exit 2 without it), when that time off is not on the "
                   "platform.")
@base_url_option
@report_dir_option
@json_option
def import_command(config: Path, file: Path, dry_run: bool, concurrency: int | None, new_ledger: bool,
                   base_url: str | None, report_dir: Path | None, as_json: bool) -> None:
    """Import the time-off records in FILE as CONFIG describes, and write the report.

    total_days is filled from the service's calculation when the sheet has none; a row whose figure
    disagrees with it is sent with the file's figure and a total-days-differs warning ([timeoff]
    total_days = "service" sends the service's count instead, "strict" holds the row back). Records the service accepted are kept in a ledger in the config's state
    folder (default .hrimport/): running the same file again adds nothing. Exits 0 when every row was
    added or already imported, 1 when any row needs attention, 2 for a usage, config or file error, 3
    when another time-off import uses the same state folder, 4 when the service is unreachable or
    refuses the token. The token is read from the environment variable the config names (default
    HRIMPORT_TOKEN), never from the command line.

    Example:

    \b
        HRIMPORT_TOKEN=... hrimport timeoff import samples/leave_history.toml samples/leave_history.xlsx
    """
    from hrimport.imports import import_file

    cfg = load_config(config)
    with progress_bar("Sending") as progress:
        run = import_file(cfg, file, kind="timeoff", dry_run=dry_run, base_url=base_url, concurrency=concurrency,
                          report_dir=report_dir, progress=progress, new_ledger=new_ledger)
    echo_file_import(run, as_json=as_json)
    raise SystemExit(run.exit_code)


@timeoff.command("rebuild-ledger")
@click.argument("config", metavar="CONFIG|JOB.toml", type=_file)
@base_url_option
@report_dir_option
def rebuild_ledger_command(config: Path, base_url: str | None, report_dir: Path | None) -> None:
    """Rebuild the time-off ledger of a state folder that was lost or moved, from the reports of the imports
    that sent the time off (CONFIG's [report] folder, or a job file's reports).

    Every record those reports list as added or already imported is written into the ledger as on the
    platform, so the next import sends only what is new. Use it when an import stops because its ledger
    went missing, once the state folder cannot be brought back. A report of a run killed before it was
    written is not read (each is named). Exits 0 when the ledger was rebuilt, 2 when there is nothing to
    rebuild it from (or a config error).

    Example:

    \b
        hrimport timeoff rebuild-ledger samples/leave_history.toml
    """
    from hrimport.imports.ledger_recovery import rebuild_ledgers

    for rebuilt in rebuild_ledgers(config, base_url=base_url, report_dir=report_dir):
        click.echo(f"Rebuilt the time-off ledger {rebuilt.ledger} from {rebuilt.reports:,} report(s) in "
                   f"{rebuilt.history}: {rebuilt.records:,} record(s) added, each taken as on the platform.")
        for unread in rebuilt.unread:
            click.echo(f"Not read (its rows are not taken as on the platform): {unread}", err=True)


@timeoff.command("mark-cancelled")
@click.argument("config", metavar="CONFIG|JOB.toml", type=_file)
@click.argument("record_ids", metavar="RECORD_ID...", nargs=-1, required=True, type=click.IntRange(min=1))
@base_url_option
def mark_cancelled_command(config: Path, record_ids: tuple[int, ...], base_url: str | None) -> None:
    """Mark time-off records HR cancelled on the platform as cancelled in the ledger of CONFIG's state folder
    (or a job file's, for its time-off steps), by the platform's record id.

    An import tells each leave imported before that its export no longer lists (the report's 'No longer in the
    export', with each record id): cancelled or moved in the HR system, while the record stays on the platform,
    whose interface cannot remove it. Once HR has cancelled it there, this marks it so: it is kept in the ledger
    with when, no longer told, and the same leave in a later export is sent again. Nothing is sent. Exits 0 when
    every record was marked (now or before), 2 when one is not in the ledger (nothing is marked) or for a config
    error.

    Example:

    \b
        hrimport timeoff mark-cancelled samples/leave_history.toml 1042 1043
    """
    from hrimport.imports.cancellations import mark_cancelled

    for marked in mark_cancelled(config, list(record_ids), base_url=base_url):
        done = marked.done
        if done.marked:
            leave = ", ".join(f"{e.record_id} ({e.key.external_id} {e.key.leave_type} {e.key.start_date}.."
                              f"{e.key.end_date})" for e in done.marked)
            click.echo(f"Marked as cancelled on the platform in {marked.ledger}: record(s) {leave}; no longer told, "
                       "and sent again if a later export lists the leave again.")
        for record_id, when in done.before.items():
            click.echo(f"Record {record_id} was marked as cancelled on {when} already.")
