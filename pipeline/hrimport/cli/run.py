"""``hrimport run JOB.toml``: the unattended monthly run, for cron and systemd timers."""

from __future__ import annotations

from pathlib import Path

import click

from hrimport.cli.common import progress_bar
from hrimport.listing import one_line


@click.command("run")
@click.argument("job_file", metavar="JOB.toml", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--accept-drift", is_flag=True,
              help="Send a file the drift guard would hold (after a person has checked it).")
@click.option("--full", is_flag=True,
              help="Send every row, and import the file again when it is the one imported last time (never an "
                   "export older than that one, nor than max_source_age_days).")
@click.option("--new-ledger", is_flag=True,
              help="Let a time-off step send although its ledger went missing while the job's earlier runs sent "
                   "time off (the state folder lost or moved: exit 2 without it), when that time off is not on "
                   "the platform.")
# no envvar here: $HRIMPORT_BASE_URL must not outrank each config's own base_url (hrimport.service.connection's order)
@click.option("--base-url", metavar="URL", default=None,
              help="Send every step to this base URL (default: each config's, else $HRIMPORT_BASE_URL; the "
                   "embedded sandbox only when the job file says sandbox = true).")
def run(job_file: Path, accept_drift: bool, full: bool, new_ledger: bool, base_url: str | None) -> None:
    """Run the imports a job file names, in order, without asking anything: safe from cron.

    One line per step on stderr; everything else goes to run.log in the run's report folder. A second
    run of the same job while one is going exits 3 at once. Rows the service already holds unchanged are
    not sent again, and a source file identical to the last one imported is not read again: its line says
    "no new export" (--full sends them anyway). A step whose newest file holds an export it imported
    before its last import (a sync touched May's file after June's was imported) sends nothing and exits 2,
    since it would put older values back over newer ones; so does a step whose newest file is older than
    the job file's max_source_age_days, so a month whose export never came is not a success.
    The verdict is e-mailed as the job's [notify] table says. A step with no base URL stops the run
    (exit 2) unless the job file says sandbox = true.

    Exit codes: 0 everything imported (or no new export: the newest file is the one already imported);
    1 some rows need attention (see the report); 2 a usage, config or input-file error (an export missing,
    unreadable, older than max_source_age_days or than the last one imported); 3 another run of the same
    job is in progress; 4 the service was unreachable or refused the token; 5 held for review: the drift
    guard found a file too different from last time, nothing sent (--accept-drift once checked); 6 a
    step's report (the next run writes it into its folder once there is room), the run's run.json or the
    state folder (which stops the sending) could not be written;
    70 hrimport stopped on an unexpected error, a bug (its traceback is in run.log: report it);
    130 / 143 stopped by Ctrl-C / SIGTERM.

    Example:

        hrimport run samples/monthly_job.toml
    """
    from hrimport.jobs import EXIT_MEANINGS, load_job_or_tell, run_job  # every stage: pandas, the reporter

    def say(line: str) -> None:
        click.echo(one_line(line, None), err=True)  # cron's log: one line a step, whatever a file name holds

    job = load_job_or_tell(job_file, echo=say)
    result = run_job(job, full=full, accept_drift=accept_drift, new_ledger=new_ledger, base_url=base_url, echo=say,
                     progress_bar=progress_bar)
    if result.folder is not None:
        say(f"Report folder: {result.folder}")
    say(f"{job.name}: {result.headline()} (exit {result.exit_code}: {EXIT_MEANINGS[result.exit_code]})")
    raise SystemExit(result.exit_code)
