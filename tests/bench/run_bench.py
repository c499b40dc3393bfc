"""`make bench`: read + map + validate 100,000 rows x 40 columns, and write every report file.

Generates a 100k-row, 40-column XLSX and CSV (ids with leading zeros, real Excel date cells, ~5% bad
rows), and the same XLSX with the ids stored as numbers shown through a ``000000`` number format (as many
HR systems write them), then times, each in a fresh process so peak memory is its own:

- hrimport read + map + validate on the XLSX, the XLSX with formatted ids and the CSV (median of
  ``--runs``, default 3);
- baselines on the same files in the same run: ``pandas.read_excel(engine="openpyxl", dtype=str)``
  (what a hand-made script does; read alone) and ``frictionless validate`` (XLSX and CSV);
- the reporter writing all report files for a 100k-row run (tests/bench/bench_report.py).

Baselines take minutes each; they run ``--baseline-runs`` times (default 1). ``--quick`` skips them;
``--only xlsx,padded,csv,report`` times just those parts (no baselines).
Run: ``python tests/bench/run_bench.py [--rows N] [--runs 3] [--baseline-runs 1] [--quick] [--only ...]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

MAPPED = {
    "Employee ID": "customer_system_id", "Full Name": "name", "Work Email": "system_email",
    "Country": "country", "Job Title": "job_title", "Hire Date": "job_start_date",
    "Worker Type": "staff_type", "Gender": "gender", "Birth Date": "birthdate", "Nationality": "nationality",
    "Personal Email": "personal_email", "Phone": "phone", "Location": "location", "Manager": "reporting_officer",
    "Is Manager": "is_manager", "Contract Type": "ec_type", "Contract Start": "ec_start_date",
    "Probation End": "probation_end_date", "Passport Number": "passport_number", "Passport Expiry": "passport_expiry_date",
}
CUSTOM = {f"Custom {i}": f"Custom {i}" for i in range(1, 11)}
IGNORED = [f"Extra {i}" for i in range(1, 11)]
HEADER = [*MAPPED, *CUSTOM, *IGNORED]
assert len(HEADER) == 40


def make_rows(n: int, seed: int = 42):
    rng = random.Random(seed)
    countries = ["SG", "MY", "CN", "Malaysia", "SGP", "US", "Singapore"]
    base = dt.date(2010, 1, 1)
    for i in range(n):
        bad = rng.random() < 0.05
        hire = base + dt.timedelta(days=rng.randrange(5000))
        row = [
            f"{i:07d}", f"Person {i}", f"person{i}@acme.example" if not bad else f"person{i}.acme",
            rng.choice(countries) if not (bad and i % 2) else "Atlantis", "Analyst", hire,
            rng.choice(["Payroll", "EOR", "payroll"]), rng.choice(["M", "F", "Male", "Female"]),
            base - dt.timedelta(days=rng.randrange(10000, 20000)), "SG", f"p{i}@mail.example",
            f"+65 8{i:07d}", "Singapore", "Boss", rng.choice(["Yes", "No"]), "Indefinite", hire, hire,
            f"K{i:07d}", dt.date(2030, 1, 1),
        ]
        row += [f"value {i % 97}" for _ in CUSTOM] + [f"x{i % 13}" for _ in IGNORED]
        yield row


def write_files(folder: Path, n: int) -> tuple[Path, Path, Path, Path]:
    import csv

    import xlsxwriter

    xlsx, csv_path, config = folder / "bench.xlsx", folder / "bench.csv", folder / "bench.toml"
    padded = folder / "bench-padded.xlsx"
    books = [xlsxwriter.Workbook(str(p), {"constant_memory": True}) for p in (xlsx, padded)]
    sheets = [wb.add_worksheet("Staff") for wb in books]
    date_fmts = [wb.add_format({"num_format": "yyyy-mm-dd"}) for wb in books]
    id_fmt = books[1].add_format({"num_format": "000000"})
    for ws in sheets:
        ws.write_row(0, 0, HEADER)
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        for r, row in enumerate(make_rows(n), start=1):
            for ws, date_fmt in zip(sheets, date_fmts):
                for c, value in enumerate(row):
                    if isinstance(value, dt.date):
                        ws.write_datetime(r, c, dt.datetime.combine(value, dt.time()), date_fmt)
                    elif c == 0 and ws is sheets[1]:
                        ws.write_number(r, c, int(value), id_fmt)  # shows as 000123, like the text id
                    else:
                        ws.write_string(r, c, value)
            writer.writerow([v.strftime("%d/%m/%Y") if isinstance(v, dt.date) else v for v in row])
    for wb in books:
        wb.close()
    columns = "\n".join(f'"{k}" = "{v}"' for k, v in MAPPED.items())
    custom = "\n".join(f'"{k}" = "{v}"' for k, v in CUSTOM.items())
    config.write_text(textwrap.dedent("""\
        [service]
        customer_id = 99
        [source]
        date_order = "day-first"
        [staff]
        customer_system_id_type = "Bench"
        [staff.columns]
        {columns}
        [staff.custom_fields]
        {custom}
        """).format(columns=columns, custom=custom))
    return xlsx, padded, csv_path, config


OURS = """
import json, resource, sys, time
from pathlib import Path
from hrimport.config import load_config
from hrimport.imports.staff import prepare_staff
t = time.perf_counter()
table, mapped, problems, timings = prepare_staff(load_config(Path(sys.argv[1])), Path(sys.argv[2]))
print(json.dumps({"seconds": time.perf_counter() - t, "rows": len(mapped), "invalid": len(problems),
                  "stages": timings, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

OPENPYXL = """
import json, resource, sys, time
import pandas as pd
t = time.perf_counter()
df = pd.read_excel(sys.argv[1], engine="openpyxl", dtype=str)
print(json.dumps({"seconds": time.perf_counter() - t, "rows": len(df),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

# frictionless refuses absolute paths as "not safe": validate the file by its name from its own folder
FRICTIONLESS = """
import json, os, resource, sys, time
from frictionless import validate
os.chdir(os.path.dirname(sys.argv[1]))
t = time.perf_counter()
report = validate(os.path.basename(sys.argv[1]))
stats = report.tasks[0].stats if report.tasks else {}
if not stats.get("rows"):
    sys.exit("frictionless validated no rows: " + str(report.flatten(["type", "message"]))[:300])
print(json.dumps({"seconds": time.perf_counter() - t, "rows": stats["rows"], "errors": stats.get("errors"),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

REPORT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from bench_report import bench_report
print(json.dumps(bench_report(int(sys.argv[2]))))
"""


def measure(code: str, *args: str, runs: int) -> dict:
    results = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    best = {"seconds": statistics.median(r["seconds"] for r in results),
            # the reporter writes to_fix in a second process: count both
            "peak_mb": statistics.median(r.get("peak_mb", r.get("peak_rss_mb", 0) + r.get("peak_rss_child_mb", 0))
                                         for r in results),
            "runs": runs, "last": results[-1]}
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-runs", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="skip the slow baselines")
    parser.add_argument("--only", help="comma-separated parts to time: xlsx, padded, csv, report (no baselines)")
    args = parser.parse_args()
    parts = set(args.only.split(",")) if args.only else {"xlsx", "padded", "csv", "report", "baselines"}

    folder = Path(tempfile.mkdtemp(prefix="hrimport-bench-"))
    try:
        print(f"Writing a {args.rows:,}-row x 40-column XLSX (twice) and CSV ...", flush=True)
        xlsx, padded, csv_path, config = write_files(folder, args.rows)
        rows = []
        if "xlsx" in parts:
            rows.append(("hrimport read+map+validate, XLSX", measure(OURS, str(config), str(xlsx), runs=args.runs)))
        if "padded" in parts:
            rows.append(("hrimport read+map+validate, XLSX, ids formatted 000000",
                         measure(OURS, str(config), str(padded), runs=args.runs)))
        if "csv" in parts:
            rows.append(("hrimport read+map+validate, CSV", measure(OURS, str(config), str(csv_path), runs=args.runs)))
        if "report" in parts:
            report = measure(REPORT, str(HERE), str(args.rows), runs=args.runs)
            rows.append(("hrimport all report files (both processes' peaks added)", report))
        if not args.quick and "baselines" in parts:
            rows.append(("baseline pandas.read_excel(openpyxl, dtype=str), read only",
                         measure(OPENPYXL, str(xlsx), runs=args.baseline_runs)))
            if shutil.which("frictionless") or _has("frictionless"):
                rows.append(("baseline frictionless validate, XLSX", measure(FRICTIONLESS, str(xlsx), runs=args.baseline_runs)))
                rows.append(("baseline frictionless validate, CSV", measure(FRICTIONLESS, str(csv_path), runs=args.baseline_runs)))
        print(f"\n{args.rows:,} rows x 40 columns; medians of the runs shown; peak RSS of the process")
        print(f"{'what':62} {'runs':>4} {'median s':>9} {'peak MB':>8}")
        for label, r in rows:
            print(f"{label:62} {r['runs']:>4} {r['seconds']:>9.2f} {r['peak_mb']:>8.0f}")
        ours_x = next((r for label, r in rows if label.startswith("hrimport read+map+validate, XLSX")), None)
        if ours_x:
            stages = {k: round(v, 2) for k, v in ours_x["last"]["stages"].items()}
            print(f"\nrows flagged invalid: {ours_x['last']['invalid']:,} of {ours_x['last']['rows']:,}; "
                  f"XLSX stage timings (last run): {json.dumps(stages)}")
        baseline = next((r for label, r in rows if "openpyxl" in label), None)
        if baseline and ours_x:
            print(f"XLSX speed-up over the openpyxl read alone: {baseline['seconds'] / ours_x['seconds']:.1f}x")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    main()
