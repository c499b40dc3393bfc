"""`make bench`: hrimport's whole commands, as a user runs them, beside the practical limits (issue 17).

Each measurement is one command in a fresh process: its wall time, its CPU time (user + system, its own
child processes included, from ``os.wait4``) and its peak resident memory (``ru_maxrss``), each the median
of ``--repeats`` runs (default 3). The baselines run in the same run, on the same files:

- ``startup``: ``hrimport --help``;
- ``csv``, ``xlsx``: ``hrimport staff validate`` and ``hrimport staff import --dry-run`` of a 100,000-row x
  40-column export (tests/bench/bench_files.py), beside a bare pyarrow CSV read, a bare fastexcel XLSX read
  and ``frictionless validate`` (the bench extra: ``pip install -e '.[bench]'``);
- ``million``: ``hrimport staff validate`` of a 1,000,000-row CSV, beside the bare pyarrow read of it;
- ``timeoff``: ``hrimport timeoff validate`` of a 100,000-row leave history (CSV);
- ``import``: ``hrimport staff import`` of the 100,000-row CSV into a served sandbox (``hrimport sandbox
  serve``), beside a minimal httpx loop posting the dry run's request bodies (``payloads.jsonl``: the same
  payloads in the same batches) into another fresh sandbox; with the client's CPU and the server's (from
  ``/proc/PID/stat``).

Then the issue's targets, each met or not. A full run writes the table to tests/bench/RESULTS.md and into
the README between its bench markers, so the README quotes the bench and no number is typed by hand;
``--quick`` (small files, one run each) only prints. ``--stages`` times the stages inside one process
instead (read + map + validate of each file, the reporter's files for a 100,000-row run), as the bench did
before issue 17.

Run: ``python tests/bench/run_bench.py [--quick] [--repeats 3] [--only startup,csv,xlsx,million,timeoff,import]``
or ``python tests/bench/run_bench.py --stages [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_files import CUSTOM, CUSTOMER_ID, TOKEN  # beside this script, which Python puts on sys.path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
RESULTS = HERE / "RESULTS.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
PARTS = ("startup", "csv", "xlsx", "million", "timeoff", "import")

# This process imports nothing heavy and writes the files in a child: a child's ru_maxrss starts from the
# size of the process it was forked from, so the bench's own memory must stay below every command's.
PYTHON = sys.executable
HRIMPORT = [str(Path(PYTHON).with_name("hrimport"))] if Path(PYTHON).with_name("hrimport").exists() \
    else [PYTHON, "-m", "hrimport"]
FRICTIONLESS = Path(PYTHON).with_name("frictionless")

PYARROW_READ = "import sys, pyarrow.csv; print(pyarrow.csv.read_csv(sys.argv[1]).num_rows)"
FASTEXCEL_READ = "import sys, fastexcel; print(fastexcel.read_excel(sys.argv[1]).load_sheet(0).to_arrow().num_rows)"
# what a person would write to post the bodies: one client, one request per batch, stop at the first error
HTTPX_LOOP = """
import json, sys, httpx
url, token, bodies = sys.argv[1:]
with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
    with open(bodies, encoding="utf-8") as lines:
        for line in lines:
            client.post("/api/bulk_add_edit_staff", json=json.loads(line)).raise_for_status()
"""


@dataclass(frozen=True)
class Sizes:
    rows: int  # the CSV and XLSX exports, and the import
    million: int  # the large CSV

    @staticmethod
    def of(quick: bool) -> Sizes:
        return Sizes(5_000, 20_000) if quick else Sizes(100_000, 1_000_000)


@dataclass(frozen=True)
class Run:
    """One command's cost, and what it printed."""

    wall: float
    cpu: float
    peak_mb: float
    stdout: str
    server_cpu: float | None = None  # the sandbox server's CPU during the command (the import part)


@dataclass
class Measured:
    """A command's runs; its figures are medians."""

    label: str
    runs: list[Run]
    baseline: bool = False

    def median(self, what: str) -> float:
        return float(statistics.median(getattr(run, what) for run in self.runs))


@dataclass
class Section:
    title: str
    size: int  # rows in the file
    rows: list[Measured] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def find(self, label_start: str) -> Measured | None:
        return next((m for m in self.rows if m.label.startswith(label_start)), None)


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no service or token of ours, and Python's bytecode cache on (a
    pip-installed package has its .pyc files; PYTHONDONTWRITEBYTECODE would make every start compile)."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"HRIMPORT_BASE_URL", "HRIMPORT_TOKEN", "PYTHONDONTWRITEBYTECODE"}}
    return {**env, **extra}


def run_once(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None,
             exit_codes: tuple[int, ...] = (0,)) -> Run:
    """Run ``argv`` in a fresh process and measure it; a failure stops the bench with the command's stderr."""
    cwd.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env or child_env(), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own usage, its waited-for children included
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode not in exit_codes:
        sys.exit(f"{' '.join(argv)} exited {proc.returncode}:\n{stderr[-2000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout)


def measure(label: str, argv: list[str], *, cwd: Path, repeats: int, baseline: bool = False,
            exit_codes: tuple[int, ...] = (0,), shared_cwd: bool = False) -> Measured:
    """``repeats`` runs, each in a folder of its own under ``cwd`` (its reports and state apart), or all in
    ``cwd`` itself with ``shared_cwd``."""
    print(f"  {label} ...", flush=True)
    return Measured(label, [run_once(argv, cwd=cwd if shared_cwd else cwd / f"run{i}", exit_codes=exit_codes)
                            for i in range(repeats)], baseline)


def write_files(folder: Path, rows: int, kinds: str) -> None:
    print(f"Writing {rows:,} rows x 40 columns ({kinds}) ...", flush=True)
    subprocess.run([PYTHON, str(HERE / "bench_files.py"), str(folder), "--rows", str(rows), "--kinds", kinds],
                   check=True)


def file_mb(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.0f} MB" if path.stat().st_size >= 1e6 else f"{path.stat().st_size / 1e3:.0f} KB"


# --- the parts ------------------------------------------------------------------------------------------


def bench_startup(work: Path, repeats: int) -> Section:
    section = Section("Start-up", 0)
    section.rows.append(measure("`hrimport --help`", [*HRIMPORT, "--help"], cwd=work / "help", repeats=repeats))
    return section


def bench_file(kind: str, data: Path, work: Path, rows: int, repeats: int) -> Section:
    """validate and dry run of one export, beside the bare read of its format and frictionless."""
    source = data / ("staff.csv" if kind == "csv" else "staff.xlsx")
    config = data / "staff.toml"
    section = Section(f"{rows:,} rows x 40 columns, {kind.upper()} ({file_mb(source)})", rows)
    here = work / kind
    if kind == "csv":
        section.rows.append(measure("baseline: bare pyarrow CSV read", [PYTHON, "-c", PYARROW_READ, str(source)],
                                    cwd=here / "pyarrow", repeats=repeats, baseline=True))
    else:
        section.rows.append(measure("baseline: bare fastexcel XLSX read", [PYTHON, "-c", FASTEXCEL_READ, str(source)],
                                    cwd=here / "fastexcel", repeats=repeats, baseline=True))
    if FRICTIONLESS.exists():
        # frictionless refuses absolute paths as "not safe": it validates the file by name from its folder
        frictionless = measure("baseline: `frictionless validate`",
                               [str(FRICTIONLESS), "validate", "--json", source.name], cwd=data, shared_cwd=True,
                               repeats=repeats, baseline=True, exit_codes=(0, 1))
        for run in frictionless.runs:  # see that it read every row (it stops at its error limit)
            stats = json.loads(run.stdout)["tasks"][0]["stats"]
            if stats["rows"] != rows:
                sys.exit(f"frictionless validated {stats['rows']} rows of {rows}")
        section.rows.append(frictionless)
    else:
        section.notes.append("frictionless is not installed (pip install -e '.[bench]'): no frictionless baseline.")
    section.rows.append(measure("`hrimport staff validate`", [*HRIMPORT, "staff", "validate", str(config),
                                                               str(source)],
                                cwd=here / "validate", repeats=repeats, exit_codes=(0, 1)))
    section.rows.append(measure("`hrimport staff import --dry-run`",
                                [*HRIMPORT, "staff", "import", "--dry-run", str(config), str(source), "--report-dir",
                                 "reports"], cwd=here / "dry-run", repeats=repeats, exit_codes=(0, 1)))
    section.notes.append(f"{kind.upper()}: " + _rows_line(section.rows[-1].runs[-1].stdout))
    return section


def bench_million(data: Path, work: Path, rows: int, repeats: int) -> Section:
    source, config = data / "staff.csv", data / "staff.toml"
    section = Section(f"{rows:,} rows x 40 columns, CSV ({file_mb(source)})", rows)
    section.rows.append(measure("baseline: bare pyarrow CSV read", [PYTHON, "-c", PYARROW_READ, str(source)],
                                cwd=work / "pyarrow", repeats=repeats, baseline=True))
    section.rows.append(measure("`hrimport staff validate`", [*HRIMPORT, "staff", "validate", str(config),
                                                               str(source)],
                                cwd=work / "validate", repeats=repeats, exit_codes=(0, 1)))
    section.notes.append(f"{rows:,}-row CSV: " + _rows_line(section.rows[-1].runs[-1].stdout))
    return section


def bench_timeoff(data: Path, work: Path, rows: int, repeats: int) -> Section:
    """The time-off commands' check of a leave history (no baseline: what matters is its memory)."""
    source, config = data / "leave.csv", data / "leave.toml"
    section = Section(f"{rows:,} leave records, CSV ({file_mb(source)})", rows)
    section.rows.append(measure("`hrimport timeoff validate`", [*HRIMPORT, "timeoff", "validate", str(config),
                                                                 str(source)],
                                cwd=work / "validate", repeats=repeats, exit_codes=(0, 1)))
    section.notes.append("Leave history: " + _rows_line(section.rows[-1].runs[-1].stdout))
    return section


def bench_import(data: Path, work: Path, rows: int, repeats: int) -> Section:
    """The import into a served sandbox, beside a minimal httpx loop posting the same bodies."""
    source, config = data / "staff.csv", data / "staff.toml"
    section = Section(f"Importing {rows:,} rows (the CSV) into a served sandbox", rows)
    # the bodies hrimport sends, batch by batch at the config's batch size: a dry run writes them
    run_once([*HRIMPORT, "staff", "import", "--dry-run", str(config), str(source), "--report-dir", "reports"],
             cwd=work / "payloads", exit_codes=(0, 1))
    bodies = next((work / "payloads").glob("reports/**/payloads.jsonl"))
    batches = sum(1 for _ in bodies.open(encoding="utf-8"))

    def served(label: str, name: str, command: Callable[[str, Path], list[str]]) -> Measured:
        print(f"  {label} ...", flush=True)
        runs = []
        for i in range(repeats):
            folder = work / name / f"run{i}"
            folder.mkdir(parents=True)
            with served_sandbox(folder, data_types=list(CUSTOM)) as (url, pid):
                before = process_cpu(pid)
                run = run_once(command(url, folder), cwd=folder, env=child_env(HRIMPORT_TOKEN=TOKEN),
                               exit_codes=(0, 1))
                runs.append(Run(run.wall, run.cpu, run.peak_mb, run.stdout, process_cpu(pid) - before))
                statuses = [r["status"] for r in admin_get(url, "/requests") if r["path"].endswith("bulk_add_edit_staff")]
            if statuses != [200] * batches:
                sys.exit(f"{label}: the sandbox answered {len(statuses)} bulk requests ({sorted(set(statuses))}), "
                         f"not {batches} x 200")
        return Measured(label, runs, baseline=label.startswith("baseline"))

    def ours(url: str, folder: Path) -> list[str]:
        shutil.copy(config, folder / "staff.toml")  # its own state folder (.hrimport beside the config)
        return [*HRIMPORT, "staff", "import", str(folder / "staff.toml"), str(source), "--base-url", url,
                "--report-dir", "reports"]

    section.rows.append(served("baseline: minimal httpx loop, same bodies and batches", "httpx-loop",
                               lambda url, _: [PYTHON, "-c", HTTPX_LOOP, url, TOKEN, str(bodies)]))
    section.rows.append(served("`hrimport staff import`", "hrimport", ours))
    section.notes.append(f"Import: {batches:,} bulk requests each, all answered 200; hrimport: "
                         + _rows_line(section.rows[-1].runs[-1].stdout)
                         + f" (customer {CUSTOMER_ID}, a fresh sandbox and state folder for every run).")
    return section


@contextmanager
def served_sandbox(folder: Path, *, data_types: list[str]) -> Iterator[tuple[str, int]]:
    """``hrimport sandbox serve`` on a free port with a fresh database whose customer knows the custom
    fields; yields its base URL and pid, and stops it with SIGTERM (as Ctrl-C would)."""
    db = folder / "sandbox.db"
    subprocess.run([*HRIMPORT, "sandbox", "add-data-type", "--db", str(db), "--customer", str(CUSTOMER_ID), *data_types],
                   check=True, env=child_env(), capture_output=True)
    with open(folder / "sandbox.log", "wb") as log:
        server = subprocess.Popen([*HRIMPORT, "sandbox", "serve", "--port", "0", "--db", str(db)], cwd=folder,
                                  env=child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                                  text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()  # printed once the server answers
        if not url.startswith("http"):
            sys.exit(f"the sandbox did not start: {(folder / 'sandbox.log').read_text()[-2000:]}")
        yield url, server.pid
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process so far (its threads included), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def admin_get(base_url: str, path: str) -> list[dict[str, Any]]:
    root = base_url.rsplit("/sandbox", 1)[0]
    with urllib.request.urlopen(f"{root}/_admin{path}", timeout=30) as answer:
        result: list[dict[str, Any]] = json.load(answer)
        return result


def _rows_line(stdout: str) -> str:
    """The command's own count of the rows, e.g. 'Rows read: 100,000 = 95,012 valid + 4,988 invalid'."""
    return next((line for line in stdout.splitlines() if line.startswith("Rows read:")), "(no 'Rows read' line)")


# --- the table ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    what: str
    measured: str
    met: bool


def targets(sections: dict[str, Section]) -> list[Target]:
    """The issue's targets that this run measured, named with the sizes measured (the issue's: 100,000 and
    1,000,000 rows)."""
    out: list[Target] = []

    def ratio(section: str, ours: str, base: str, limit: float, what: str, *, faster: bool = False) -> None:
        s = sections.get(section)
        mine, theirs = (s.find(ours), s.find(base)) if s else (None, None)
        if mine and theirs:
            a, b = mine.median("wall"), theirs.median("wall")
            r = b / a if faster else a / b
            out.append(Target(what, f"{r:.2f}x ({a:.2f} s against {b:.2f} s)", r >= limit if faster else r <= limit))

    if "startup" in sections:
        wall = sections["startup"].rows[0].median("wall")
        out.append(Target("`hrimport --help` under 0.3 s", f"{wall:.2f} s", wall < 0.3))
    ratio("csv", "`hrimport staff validate`", "baseline: bare pyarrow", 3, "CSV validate within 3x of the bare pyarrow read")
    ratio("csv", "`hrimport staff validate`", "baseline: `frictionless", 2,
          "CSV validate at least 2x faster than `frictionless validate`", faster=True)
    ratio("xlsx", "`hrimport staff validate`", "baseline: bare fastexcel", 1.5,
          "XLSX validate within 1.5x of the bare fastexcel read")
    # the import too: it runs on the same 100,000 rows
    ours_100k = [m for key in ("csv", "xlsx", "timeoff", "import") if key in sections for m in sections[key].rows
                 if not m.baseline]
    if ours_100k:
        worst = max(ours_100k, key=lambda m: m.median("peak_mb"))
        peak = worst.median("peak_mb")
        size = sections["csv" if "csv" in sections else "xlsx"].size
        out.append(Target(f"Peak RSS under 400 MB at {size:,} rows (every command at that size)",
                          f"{peak:.0f} MB ({worst.label.strip('`')}, {_kind_of(sections, worst)})", peak < 400))
    if "million" in sections:
        ours = sections["million"].find("`hrimport staff validate`")
        assert ours is not None
        size = sections["million"].size
        out.append(Target(f"Peak RSS under 600 MB at {size:,} rows (CSV validate)", f"{ours.median('peak_mb'):.0f} MB",
                          ours.median("peak_mb") < 600))
        out.append(Target(f"{size:,}-row CSV validate under 25 s", f"{ours.median('wall'):.1f} s",
                          ours.median("wall") < 25))
    ratio("import", "`hrimport staff import`", "baseline: minimal httpx", 1.3,
          "Import wall time within 1.3x of the minimal httpx loop")
    if "import" in sections and (ours := sections["import"].find("`hrimport staff import`")):
        client, server = ours.median("cpu"), statistics.median(r.server_cpu or 0 for r in ours.runs)
        out.append(Target("Import: the client's CPU at most a third of the sandbox server's",
                          f"{client / server:.2f}x ({client:.1f} s against {server:.1f} s)" if server else "no server CPU",
                          bool(server) and client <= server / 3))
    return out


def _kind_of(sections: dict[str, Section], measured: Measured) -> str:
    key = next(key for key, s in sections.items() if measured in s.rows)
    return {"import": "CSV, into a served sandbox", "timeoff": "leave history, CSV"}.get(key, key.upper())


def render(sections: dict[str, Section], *, repeats: int, quick: bool, load_at_start: float) -> str:
    lines = [f"Measured by `make bench` on {dt.date.today().isoformat()}: {os.cpu_count()} cores, load average "
             f"{load_at_start:.1f} at the start and {os.getloadavg()[0]:.1f} at the end (a busy machine stretches "
             f"wall times, less so CPU times); each command a fresh process, median of {repeats} run"
             f"{'s' if repeats > 1 else ''}. Wall and CPU in seconds (CPU: user + system, the command's child "
             "processes included), peak resident memory in MB." + (" QUICK RUN: small files, not the issue's "
                                                                    "sizes." if quick else ""),
             "", "| What | Wall s | CPU s | Peak MB | Server CPU s | Wall against |", "|---|--:|--:|--:|--:|---|"]
    for section in sections.values():
        lines.append(f"| **{section.title}** | | | | | |")
        bases = [m for m in section.rows if m.baseline]
        for m in section.rows:
            server = (f"{statistics.median(r.server_cpu for r in m.runs if r.server_cpu is not None):.1f}"
                      if any(r.server_cpu is not None for r in m.runs) else "")
            against = "" if m.baseline else ", ".join(
                f"{m.median('wall') / b.median('wall'):.2f}x {_short(b.label)}" for b in bases)
            lines.append(f"| {m.label} | {m.median('wall'):.2f} | {m.median('cpu'):.2f} | {m.median('peak_mb'):.0f} "
                         f"| {server} | {against} |")
    found = targets(sections)
    if found:
        lines += ["", "| Target (issue 17) | Measured | Met |", "|---|---|---|"]
        lines += [f"| {t.what} | {t.measured} | {'met' if t.met else '**not met**'} |" for t in found]
    notes = [n for s in sections.values() for n in s.notes]
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _short(label: str) -> str:
    """'baseline: bare pyarrow CSV read' -> 'pyarrow'."""
    for name in ("pyarrow", "fastexcel", "frictionless", "httpx"):
        if name in label:
            return name
    return label


def publish(table: str) -> None:
    """Write the table to RESULTS.md, and into the README between its bench markers."""
    RESULTS.write_text(table, encoding="utf-8")
    text = README.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        print(f"The README has no {BEGIN} ... {END} markers: not updated.")
        return
    README.write_text(pattern.sub(lambda _: f"{BEGIN}\n{table}{END}", text), encoding="utf-8")
    print(f"Wrote {RESULTS.relative_to(ROOT)} and the README's Benchmarks table.")


# --- the stages (the bench before issue 17) -------------------------------------------------------------

STAGES = """
import json, sys, time
from pathlib import Path
from hrimport.config import load_config
from hrimport.imports.staff import prepare_staff
t = time.perf_counter()
table, mapped, problems, timings = prepare_staff(load_config(Path(sys.argv[1])), Path(sys.argv[2]))
print(json.dumps({"seconds": time.perf_counter() - t, "rows": len(mapped), "invalid": len(problems),
                  "stages": {k: round(v, 2) for k, v in timings.items()}}))
"""
REPORT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from bench_report import bench_report
print(json.dumps(bench_report(int(sys.argv[2]))))
"""

#: (file, label) of each stage measurement; no file: the reporter
STAGED = [
    ("staff.xlsx", "read+map+validate, XLSX"),
    ("staff-padded.xlsx", "read+map+validate, XLSX, ids formatted 000000"),
    ("staff.csv", "read+map+validate, CSV"),
    ("", "every report file (bench_report.py)"),
]


def bench_stages(data: Path, work: Path, rows: int, repeats: int) -> None:
    """read + map + validate of each file in one process, with each stage's time; the reporter alone."""
    config = data / "staff.toml"
    print(f"\n{rows:,} rows x 40 columns, in one process; medians of {repeats}")
    print(f"{'what':58} {'wall s':>7} {'CPU s':>6} {'peak MB':>8}  stages (last run)")
    for name, label in STAGED:
        argv = ([PYTHON, "-c", STAGES, str(config), str(data / name)] if name
                else [PYTHON, "-c", REPORT, str(HERE), str(rows)])
        m = measure(label, argv, cwd=work / (name or "report"), repeats=repeats)
        last = json.loads(m.runs[-1].stdout.strip().splitlines()[-1])
        stages = last.get("stages") or last.get("timings")
        print(f"{label:58} {m.median('wall'):>7.2f} {m.median('cpu'):>6.2f} {m.median('peak_mb'):>8.0f}  "
              f"{json.dumps(stages)}")


# --- main -----------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small files (5,000 and 20,000 rows), one run each; prints, writes nothing")
    parser.add_argument("--repeats", type=int, default=None, help="runs of each command (default 3; --quick 1)")
    parser.add_argument("--only", default=",".join(PARTS), help=f"comma-separated parts: {', '.join(PARTS)}")
    parser.add_argument("--stages", action="store_true", help="time the stages inside one process instead")
    args = parser.parse_args()
    sizes, repeats = Sizes.of(args.quick), args.repeats or (1 if args.quick else 3)
    load_at_start = os.getloadavg()[0]
    parts = [p for p in args.only.split(",") if p]
    if unknown := set(parts) - set(PARTS):
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    # a user's install has its bytecode compiled (pip does it); a checkout's is compiled here, once
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(ROOT / "pipeline" / "hrimport")], check=True,
                   env=child_env())

    folder = Path(tempfile.mkdtemp(prefix="hrimport-bench-"))
    try:
        data, work = folder / "data", folder / "work"
        if args.stages:
            write_files(data, sizes.rows, "csv,xlsx,padded")
            bench_stages(data, work, sizes.rows, repeats)
            return
        if {"csv", "xlsx", "timeoff", "import"} & set(parts):
            write_files(data, sizes.rows, ",".join(["csv", *(["xlsx"] if "xlsx" in parts else []),
                                                    *(["leave"] if "timeoff" in parts else [])]))
        if "million" in parts:
            write_files(folder / "million", sizes.million, "csv")
        sections: dict[str, Section] = {}
        for part in parts:
            print(f"{part}:", flush=True)
            if part == "startup":
                sections[part] = bench_startup(work, repeats)
            elif part in ("csv", "xlsx"):
                sections[part] = bench_file(part, data, work, sizes.rows, repeats)
            elif part == "million":
                sections[part] = bench_million(folder / "million", work / "million", sizes.million, repeats)
            elif part == "timeoff":
                sections[part] = bench_timeoff(data, work / "timeoff", sizes.rows, repeats)
            else:
                sections[part] = bench_import(data, work / "import", sizes.rows, repeats)
        table = render(sections, repeats=repeats, quick=args.quick, load_at_start=load_at_start)
        print("\n" + table)
        if not args.quick and parts == list(PARTS):
            publish(table)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
