"""The ``hrimport`` command line: parses options, calls one library function, maps the result to an exit code.

click is imported only in this package and in ``hrimport/sandbox/cli.py``. Every known failure is an
``HrimportError`` and ends as one line ``Error: ...`` with the exit code of ``hrimport.errors``;
``--debug`` shows the traceback as well, and keeps the exit code.

Start-up stays light: the command modules import only click and small modules of ours at load, and each
command imports the subsystems it uses (pandas and the readers, the reporter, the sandbox's server) when it runs,
so ``hrimport --help`` and ``hrimport leave-days`` load none of them (tests/test_fast_start.py).
"""

from __future__ import annotations

import logging
import sys
import traceback
from typing import TYPE_CHECKING, Any

import click

from hrimport.errors import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_UNEXPECTED,
    HrimportError,
    journal_named,
    unexpected_error,
)
from hrimport.hidden import hide_secrets
from hrimport.listing import one_line

if TYPE_CHECKING:
    import stamina.instrumentation


class _CurrentStderr(logging.StreamHandler[Any]):
    """A log handler writing to whatever ``sys.stderr`` is at the time (click's test runner swaps it)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


class _OursUnlessDebugging(logging.Filter):
    """hrimport's own log lines only: a library's warnings (calamine's "'worksheet' not a valid worksheet" on
    a damaged sheet) were a second line beside the one-line error. ``--debug`` shows them too."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name.partition(".")[0] == "hrimport" or logging.getLogger("hrimport").isEnabledFor(logging.DEBUG)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``, printed as click's version option prints it, but the installed version is read only
    when asked (the package metadata costs a noticeable part of start-up)."""
    if not value or ctx.resilient_parsing:
        return
    from hrimport import __version__

    click.echo(f"hrimport, version {__version__}")
    ctx.exit()


class _ErrorBoundaryGroup(click.Group):
    """Turn every ``HrimportError`` into one line on stderr and its exit code, Ctrl-C into exit 130, SIGTERM
    into exit 143, and any other exception (a bug) into one line and exit 70."""

    def invoke(self, ctx: click.Context) -> Any:
        from hrimport.interrupts import Terminated, raise_on_sigterm

        try:
            with raise_on_sigterm():
                return super().invoke(ctx)
        except HrimportError as exc:
            self._fail(ctx, str(exc), exc.exit_code)
        except KeyboardInterrupt:
            # Ctrl-C outside the sending (``hrimport.interrupts`` has it there): reading, a dry run, validate,
            # the report. click would print "Aborted!" and exit 1, which is "some rows need attention"
            self._fail(ctx, f"stopped by Ctrl-C (SIGINT) before the command finished; {_RUN_AGAIN}", EXIT_INTERRUPTED)
        except Terminated:  # SIGTERM there (systemctl stop, a container stopped): the same, exit 143
            self._fail(ctx, f"stopped by SIGTERM before the command finished; {_RUN_AGAIN}", EXIT_TERMINATED)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own: a bad option, --help, ctx.exit()
        except Exception as exc:  # noqa: BLE001 (the one place every unforeseen exception ends)
            # a bug of ours or a library's error never met: Python's traceback would exit 1, "some rows need
            # attention", which cron and systemd (SuccessExitStatus=1) take for a finished run
            debugging = ctx.find_root().params.get("debug")
            what_now = ("report it with the traceback above" if debugging else
                        "run the command again with --debug for the traceback, and report it")
            # memory bounded whatever the file is the design: running out is a bug too, unless the machine (or a
            # limit set on the process) has less than the README's figures, which the line lets a person check
            what = ("the machine or the process's memory limit may be smaller than the README's figures (Bounded "
                    "memory); if not, this is a bug in hrimport" if isinstance(exc, MemoryError) else
                    "this is a bug in hrimport")
            journal = journal_named(exc)
            if journal is not None:  # rows were done before it: what happened to each is in the run's journal
                what += (f"; each row's outcome before it is in the run's journal {journal}, and running the import "
                         "again imports nothing twice")
            self._fail(ctx, f"{unexpected_error(exc)}: {what}; {what_now}", EXIT_UNEXPECTED)

    @staticmethod
    def _fail(ctx: click.Context, message: str, exit_code: int) -> None:
        if ctx.find_root().params.get("debug"):
            # the traceback, and still the documented exit code: --debug must not turn 4 into 1; no secret in it,
            # whatever a library put in an exception's text
            sys.stderr.write(hide_secrets(traceback.format_exc()))
        click.echo(f"Error: {one_line(message, None)}", err=True)  # one line, whatever a name in it holds
        ctx.exit(exit_code)


_RUN_AGAIN = "run it again when ready (nothing is imported twice)"


@click.group(cls=_ErrorBoundaryGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
@click.option("--debug", is_flag=True, help="Show the traceback above each one-line error (same exit codes).")
def main(debug: bool) -> None:
    """Load HRIS spreadsheet exports into the HR/payroll platform, with a report of every row.

    Exit codes: 0 every row imported; 1 some rows need attention; 2 a usage, config or input-file
    error; 3 another run of the same job (or time-off import of the same state folder) is in progress;
    4 the service was unreachable or refused the token; 5 held for review by the drift guard, nothing
    sent; 6 the rows were sent but the report could not be written (or the state folder, which
    stops the sending); 70 hrimport stopped on an unexpected error (a bug: run again with --debug
    for the traceback, and report it); 130 / 143 stopped by Ctrl-C / SIGTERM.
    """
    # log lines (retries, warnings) go to stderr, one line each, friendly to cron mail and log files
    root = logging.getLogger()
    if not any(isinstance(h, _CurrentStderr) for h in root.handlers):
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("hrimport: %(message)s"))
        handler.addFilter(_OursUnlessDebugging())
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
    # our own loggers only: never the HTTP libraries', whose debug output could show headers; set on every
    # invocation, so that a --debug run does not leave debug lines on for the next one in the same process
    logging.getLogger("hrimport").setLevel(logging.DEBUG if debug else logging.NOTSET)
    # stamina's retry lines replaced by ours; httpx (hrimport.service.client) is loaded only when a retry is
    # logged, so that a command which never connects (``staff validate``) does not load it
    import stamina.instrumentation

    stamina.instrumentation.set_on_retry_hooks([_log_retry])


def _log_retry(details: stamina.instrumentation.RetryDetails) -> None:
    from hrimport.service.client import log_retry

    log_retry(details)


def _register_subcommands() -> None:
    from hrimport.cli.demo import demo, report
    from hrimport.cli.init import init
    from hrimport.cli.run import run
    from hrimport.cli.runs import runs
    from hrimport.cli.service import customers, leave_days
    from hrimport.cli.staff import staff
    from hrimport.cli.timeoff import timeoff
    from hrimport.sandbox.cli import sandbox

    main.add_command(init)
    main.add_command(run)
    main.add_command(runs)
    main.add_command(staff)
    main.add_command(timeoff)
    main.add_command(leave_days)
    main.add_command(customers)
    main.add_command(report)
    main.add_command(demo)
    main.add_command(sandbox)


_register_subcommands()
