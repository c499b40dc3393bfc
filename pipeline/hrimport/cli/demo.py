"""``hrimport demo`` and ``hrimport report``."""

from __future__ import annotations

from pathlib import Path

import click

from hrimport.cli.common import echo_run
from hrimport.errors import InputFileError, UsageError


@click.command("demo")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("demo-output"),
              show_default=True, help="Folder for the sandbox's database and the reports.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Sandbox port (default: any free one).")
def demo(output: Path, port: int) -> None:
    """Start the embedded sandbox, import the sample exports into it and write their reports.

    Example:

        hrimport demo --output demo-output
    """
    from hrimport.demo import run_demo

    def announce(url: str) -> None:
        click.echo(f"Sandbox running at {url} (data in {output / 'sandbox.db'})")

    reports = []
    for step in run_demo(output, port=port, on_url=announce):
        click.echo(f"\n== {step.source.name} (config {step.config.name})")
        echo_run(step.result)
        click.echo(f"Report: {step.report.html}")
        reports.append(step.report.html)
    click.echo("\nDone. Open the reports in a browser:\n" + "\n".join(f"  {p}" for p in reports))


@click.command("report")
@click.argument("outcomes", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write into (default: the folder holding OUTCOMES).")
def report(outcomes: Path, output: Path | None) -> None:
    """Render the report files again from a run's saved OUTCOMES.jsonl.

    A run whose report could not be written (a full disk) kept its outcomes in the state folder's unreported/:
    the next `hrimport run` of its job writes that report into its folder once there is room; by hand, its report
    needs --output FOLDER, and once it is written there (with the outcomes) the kept file is removed.

    Example:

    \b
        hrimport report reports/bamboohr-staff/2026-11-01_020000/outcomes.jsonl
        hrimport report .hrimport/unreported/leave-2026-11-01_020000.jsonl --output reports/leave/late
    """
    from hrimport.outcomes import read_outcomes
    from hrimport.private_files import PARTIAL
    from hrimport.report import write_report
    from hrimport.report.writer import is_unreported

    kept = is_unreported(outcomes)
    if kept and output is None:  # its report would be written into the state folder, where nobody looks
        raise UsageError(f"{outcomes} is the outcomes of a run kept in the state folder: give the folder to write its "
                         f"report into with --output FOLDER (hrimport report {outcomes} --output FOLDER)")
    if outcomes.name.endswith(PARTIAL):  # cut by a kill: it may hold some rows only, and would read as the run
        whole = outcomes.name.removesuffix(PARTIAL)
        raise InputFileError(f"{outcomes} is a file a killed write left half written, not a run's outcomes: give "
                             f"{whole} beside it")
    try:
        result = read_outcomes(outcomes)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputFileError(f"{outcomes} is not a run's outcomes file ({exc})") from None
    folder = output or outcomes.parent
    files = write_report(result, folder, outcomes_path=outcomes)
    echo_run(result)
    click.echo(f"Report: {files.html}")
    if kept and files.outcomes.is_file() and not files.outcomes.samefile(outcomes):
        # its report is written, with its outcomes beside it: kept on, it would be told by every hrimport run
        outcomes.unlink(missing_ok=True)
        click.echo(f"Removed {outcomes} from the state folder: its outcomes are in {files.outcomes} now.")
