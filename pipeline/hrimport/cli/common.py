"""What the commands share: the --base-url option, progress, printing a run."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hrimport.listing import one_line, quoted, sentences
from hrimport.report.cells import Masker
from hrimport.report.summary import summary_json
from hrimport.report.view import reading_summary, sandbox_notice
from hrimport.service.urls import describe_target
from hrimport.stages import stage_listener

if TYPE_CHECKING:
    from hrimport.imports import FileImport
    from hrimport.outcomes import Progress, RowOutcome, RunResult

# No click envvar: $HRIMPORT_BASE_URL must not outrank a config's own [service] base_url, and click would
# read the variable as if it were typed. hrimport.service.connection.resolve_connection applies the order.
base_url_option = click.option(
    "--base-url", metavar="URL", default=None,
    help="The service's base URL (with its instance segment). Default: the config's [service] base_url, "
         "else $HRIMPORT_BASE_URL, else the embedded sandbox.",
)
# The same for a command that reads no config (leave-days, customers): it has no [service] base_url to take.
service_base_url_option = click.option(
    "--base-url", metavar="URL", default=None,
    help="The service's base URL (with its instance segment). Default: $HRIMPORT_BASE_URL, else the embedded "
         "sandbox.",
)


@contextmanager
def stage_lines() -> Iterator[None]:
    """On a terminal, a line on stderr as each stage of an import starts (reading, validating, sending), so
    the seconds before the progress bar are not silent; nothing when stderr is not a TTY (cron, CI, pipes)."""
    if not sys.stderr.isatty():
        yield
        return
    with stage_listener(lambda line: click.echo(f"{line}...", err=True)):
        yield


@contextmanager
def progress_bar(label: str) -> Iterator[Progress | None]:
    """On a terminal, the stage lines, then a progress bar of rows done / total, drawn from the first report
    on; nothing when stderr is not a TTY (cron, CI, pipes), so logs stay one line per event."""
    if not sys.stderr.isatty():
        yield None
        return
    with stage_lines(), ExitStack() as stack:
        bars: list[Any] = []

        def advance(sent: int, total: int) -> None:
            if not bars:
                bar = click.progressbar(length=total, label=label, file=sys.stderr, show_percent=True)
                # the rows done as every other line writes counts (1,200/19,527), not click's 1200/19527
                bar.item_show_func = lambda _: f"{bar.pos:,}/{total:,}"
                bars.append(stack.enter_context(bar))
            bars[0].update(sent)

        yield advance


def echo_run(result: RunResult, *, err: bool = False) -> None:
    """How the file was read, the run's verdict and its counts, one line each, log-friendly (on stderr with
    ``err``)."""
    def say(line: str) -> None:
        click.echo(one_line(line, None), err=err)  # a sheet's name may hold a line break

    counts = {k: v for k, v in result.counts().items() if v}
    parts = " + ".join(f"{v:,} {k}" for k, v in counts.items()) or "0"
    say(f"Read: {reading_summary(result.info.source)}")
    for note in result.info.notes:
        say(f"Note: {note}")
    if result.info.plan is not None and not result.info.plan["first_run"]:  # a first run's plan: all new
        say(f"Plan: {plan_line(result.info.plan, dry_run=result.info.dry_run)}")
    if result.info.held:
        say("Held for review, nothing sent: " + sentences(result.info.held)
            + " Check the file and the mapping; to send it as it is, run again with --accept-drift.")
    say(f"{result.verdict()}.")
    say(f"Rows read: {len(result.rows):,} = {parts}")
    target = describe_target(result.info.service_url)
    if target:  # where the rows went; a sandbox said loudly, so that it is never taken for the platform
        say(f"Target: {target}")
        notice = sandbox_notice(result.info.service_url)
        if notice:
            say(notice)
    if result.info.ignored_columns:
        # a few names and a count: a sheet of 10,000 columns must not print a line of 200 KB
        cols = quoted(result.info.ignored_columns)
        say(f"Ignored columns (neither mapped nor packed as custom data): {cols}")


def echo_file_import(run: FileImport, *, as_json: bool = False) -> None:
    """An import's problems and summary, then its report files (none after ``validate``).

    ``as_json`` (``--json``): stdout gets only the run's summary.json, as written in the report folder (a
    validate's, which writes no file, has the same fields), and the lines for a person go to stderr.
    """
    echo_problems(run.result, err=as_json)
    echo_run(run.result, err=as_json)
    if run.report is not None:
        click.echo(f"Report folder: {run.report.folder}", err=as_json)
        click.echo(f"Report: {run.report.html}", err=as_json)
    if as_json:
        if run.report is not None:
            click.echo(run.report.summary.read_text(encoding="utf-8"), nl=False)
        else:
            click.echo(summary_json(run.result), nl=False)


def plan_line(plan: dict[str, Any], *, dry_run: bool = False) -> str:
    """The plan in one line: ``2 new, 3 changed (job_title 2, country 1), 10 unchanged, ...``."""
    counts = plan["counts"]
    fields = ", ".join(f"{name} {n:,}" for name, n in list(plan["fields"].items())[:6])
    # a plan saying "unchanged" beside a send of every row must say that they go all the same
    sent_again = (f" ({'would be ' if dry_run else ''}sent again; hrimport run without --full skips them)"
                  if plan.get("unchanged_sent") else "")
    parts = [f"{counts['new']:,} new", f"{counts['changed']:,} changed" + (f" ({fields})" if fields else ""),
             f"{counts['unchanged']:,} unchanged" + (sent_again if counts["unchanged"] else ""),
             f"{counts['invalid']:,} invalid", f"{counts['missing']:,} missing"]
    marked = [f"{h['title'].split(' (')[0].lower()} {h['count']:,}" for h in plan["highlights"].values() if h["count"]]
    first = " (no earlier import of this job is remembered: every valid row is new)" if plan["first_run"] else ""
    return ", ".join(parts) + (f"; {', '.join(marked)}" if marked else "") + first


def echo_plan(plan: dict[str, Any]) -> None:
    """The whole plan for a person: counts, each highlight with examples, the changed fields, the missing."""
    click.echo(f"Plan: {plan_line(plan, dry_run=True)}")
    for highlight in plan["highlights"].values():
        if highlight["count"]:
            click.echo(f"{highlight['title']}: {highlight['count']:,}")
            for e in highlight["examples"]:
                change = f": {e['changes']}" if e["changes"] else ""
                click.echo(f"  row {e['row']} {e['external_id']} {e['name']}{change}")
    if plan["fields"]:
        click.echo("Changed fields: " + ", ".join(f"{k} {v:,}" for k, v in plan["fields"].items()))
    if plan["missing"]["count"]:
        click.echo(f"Missing (accepted before, not in this file): {plan['missing']['count']:,}")
        for m in plan["missing"]["examples"]:
            click.echo(f"  {m['external_id']} {m['name']} (accepted {m['accepted_at']})")


# problems every row of a stopped or held run shares: the verdict and the notes say them once
_SAID_ONCE = frozenset({"not-sent", "held-for-review"})


def echo_problems(result: RunResult, limit: int = 200, *, err: bool = False) -> None:
    """The problems, then the warnings, at most ``limit`` lines, masked as the report masks them (a terminal,
    a cron mail or a CI log is no place for a passport number either).

    Rows with the very same problem share a line (``Rows 2, 3, 4, 5, 6 and 19,522 more: the service rejected
    ...``): a mistake every row repeats (a custom field the platform has not configured) would otherwise
    fill all the lines with one sentence and hide the other problems under "... and 19,527 more"."""
    masker = Masker(result.info.mask_fields)

    def masked(row: RowOutcome, text: str) -> str:
        if masker and row.problems:
            quoted = [p.value for p in row.problems if p.value and masker.applies(p.field, p.column)]
            return masker.text(text, quoted) if quoted else text
        return text

    problems, warnings = SameProblemLines(limit), SameProblemLines(limit)
    # one walk of the rows (past a few thousand, they are read back from a file)
    for row in result.rows.listed():  # the rows with problems (the others are only counted)
        if row.outcome.needs_attention:
            for problem in row.problems or ():
                if not (problem.is_warning or problem.code in _SAID_ONCE):
                    problems.add(row.row, problem.message, partial(masked, row))
            if not row.problems and row.message and row.outcome.value != "not_sent":
                problems.add(row.row, f"Row {row.row}: {row.outcome.label}: {row.message}", partial(masked, row))
        for problem in row.problems:
            if problem.is_warning:
                warnings.add(row.row, problem.message, partial(masked, row))
    lines = problems.lines() + [(n, f"Warning: {text}") for n, text in warnings.lines()]
    for _, text in lines[:limit]:
        click.echo(one_line(text), err=err)  # one line each, whatever a quoted cell holds
    more = problems.total + warnings.total - sum(n for n, _ in lines[:limit])
    if more:
        click.echo(f"... and {more:,} more (see the report)", err=err)


_ROW_FIRST = re.compile(r"Row (\d+)(?=[,:])")  # how a problem's message starts: "Row 12: ..." or "Row 12, column"


class SameProblemLines:
    """Problem messages merged into one line per sentence, whatever row it names, in the order first met.

    Only the first ``limit`` different sentences are kept (the rest are counted in ``total``), and a sentence
    is masked once, by ``mask`` of the first row that says it: the rows it merges say the same values."""

    ROWS_NAMED = 5

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._lines: dict[str, tuple[list[int], str]] = {}  # sentence -> (its rows, its masked text)
        self._counts: dict[str, int] = {}

    def add(self, row: int, message: str, mask: Callable[[str], str]) -> None:
        self.total += 1
        start = _ROW_FIRST.match(message)
        sentence = message[start.end():] if start and int(start.group(1)) == row else message
        if sentence in self._counts:
            self._counts[sentence] += 1
            rows = self._lines[sentence][0]
            if len(rows) < self.ROWS_NAMED:
                rows.append(row)
        elif len(self._counts) < self.limit:
            self._counts[sentence] = 1
            self._lines[sentence] = ([row], mask(message))

    def lines(self) -> list[tuple[int, str]]:
        """(how many problems, the line) for each sentence: its own message when one row says it."""
        out = []
        for sentence, count in self._counts.items():
            rows, text = self._lines[sentence]
            if count > 1:
                if count > len(rows):
                    named = ", ".join(map(str, rows)) + f" and {count - len(rows):,} more"
                else:
                    named = ", ".join(map(str, rows[:-1])) + f" and {rows[-1]}"
                start = _ROW_FIRST.match(text)
                text = f"Rows {named}{text[start.end():]}" if start else f"{text} (rows {named})"
            out.append((count, text))
        return out


json_option = click.option(
    "--json", "as_json", is_flag=True,
    help="Print the run's summary.json to stdout (the lines for a person go to stderr).",
)


def report_dir_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--report-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
        help="Where report folders go (default: the config's [report] folder, else ./reports).",
    )(func)
