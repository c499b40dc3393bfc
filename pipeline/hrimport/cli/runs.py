"""``hrimport runs JOB.toml|REPORT_FOLDER``: a job's runs on the terminal, the lines of its index.html."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from hrimport.report.history import RunLine, list_runs

_COLUMNS = ("STARTED", "FILE", "READ", "IMPORTED", "SKIPPED", "ATTENTION", "EXIT", "REPORT", "VERDICT")
_RIGHT = {"READ", "IMPORTED", "SKIPPED", "ATTENTION", "EXIT"}


@click.command("runs")
@click.argument("job_or_folder", metavar="JOB.toml|REPORT_FOLDER", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help="Print the job's folder and its runs as JSON (one object per report, newest first).")
def runs(job_or_folder: Path, as_json: bool) -> None:
    """List the runs of a job, newest first: when, which file, rows read, imported, skipped (as no record, as
    the config says) and needing attention, the exit code, the report and the verdict. The same lines as the
    job's index.html, from the same summary.json files; a run whose summary cannot be read is listed as such.

    JOB.toml is a job file (its report_dir and name) or an import config (its [report] folder and job,
    where `staff import` and `timeoff import` write), REPORT_FOLDER a job's report folder (reports/<job>).

    Example:

    \b
        hrimport runs samples/monthly_job.toml
        hrimport runs reports/bamboohr-staff --json
    """
    folder, lines = list_runs(job_or_folder)
    if as_json:
        click.echo(json.dumps({"folder": str(folder), "runs": [asdict(line) for line in lines]},
                              ensure_ascii=False, indent=2))
        return
    if not lines:
        click.echo(f"No runs in {folder} yet.")
        return
    click.echo(f"Runs in {folder}, newest first (with charts: {folder / 'index.html'}):")
    table = [_COLUMNS, *(_cells(line) for line in lines)]
    widths = [max(len(row[i]) for row in table) for i in range(len(_COLUMNS) - 1)]
    for row in table:
        cells = [cell.rjust(w) if name in _RIGHT else cell.ljust(w)
                 for name, cell, w in zip(_COLUMNS, row, widths)]
        click.echo("  ".join([*cells, row[-1]]).rstrip())


def _cells(line: RunLine) -> tuple[str, ...]:
    def count(n: int | None) -> str:
        return "-" if n is None else f"{n:,}"

    verdict = line.problem or line.verdict
    if line.problem and line.verdict:
        verdict = f"{line.problem}: {line.verdict}"
    return (
        line.started_at[:16].replace("T", " "),
        f"{line.step}: {line.file or '-'}" if line.step else line.file or "-",
        count(line.rows_read),
        count(line.imported),
        count(line.skipped),
        count(line.need_attention),
        "-" if line.exit_code is None else str(line.exit_code),
        line.report or "-",
        verdict + (" (dry run)" if line.dry_run else ""),
    )
