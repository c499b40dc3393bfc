"""Realistic ``RunResult`` values for the reporter's tests (tests/test_report*.py).

Every outcome a staff import produces, the problems HR staff meet most, and the hostile values a
spreadsheet can carry: a ``<script>`` name, a formula, a passport number to mask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openpyxl import load_workbook

from hrimport.outcomes import Outcome, Problem, RowOutcome, RunInfo, RunResult, SourceInfo

#: Would show up in a report only if some stage leaked it: the RunResult never holds it.
TOKEN = "tok_live_9f8e7d6c5b4a39281706SECRET"
XSS_NAME = "<script>alert(1)</script>"
# Adds an element and retitles the page if it ever runs: what the browser test looks for.
XSS_MARKER_NAME = (
    "<script>document.title='PWNED';document.documentElement.appendChild(document.createElement('pwned-marker'))"
    "</script>"
)
FORMULA = '=HYPERLINK("http://x")'
PASSPORT = "X12345678"
HEADERS = [
    "Employee ID",
    "First name",
    "Last name",
    "Work e-mail",
    "Country",
    "Start date",
    "Passport number",
]


def _cells(
    ext: str, first: str, last: str, email: str, country: str, start: str, passport: str
) -> dict[str, str]:
    return dict(zip(HEADERS, [ext, first, last, email, country, start, passport], strict=True))


def sample_result(
    *, fmt: str = "xlsx", delimiter: str | None = None, html_row_limit: int = 5000
) -> RunResult:
    """A staff run of ten rows: four imported, six needing attention, hostile values included."""
    name = "staff_export.csv" if fmt in ("csv", "tsv") else "staff_export.xlsx"
    source = SourceInfo(
        path=f"/data/hris/{name}",
        name=name,
        format=fmt,
        size=48_213,
        sha256="3f5a0c1e9b7d2a4c6e8f0a1b3c5d7e9f1a2b3c4d5e6f708192a3b4c5d6e7f809",
        sheet=None if fmt in ("csv", "tsv") else "Staff",
        header_row=3,
        headers=HEADERS,
        preamble=[["HRIS export: all staff"], ["Generated 2024-05-01 08:55"]],
        encoding="utf-8" if fmt in ("csv", "tsv") else None,
        delimiter=delimiter,
        rows_read=10,
    )
    info = RunInfo(
        kind="staff",
        job="monthly-staff",
        source=source,
        service_url="https://sandbox.example.com:8443/api/v1",
        customer_id="CUST-0042",
        started_at="2024-05-01T09:00:00+02:00",
        finished_at="2024-05-01T09:00:42+02:00",
        duration_s=42.4,
        tool_version="0.1.0",
        timings={"read": 0.2, "validate": 0.1, "submit": 41.8},
        ignored_columns=["Shoe size"],
        html_row_limit=html_row_limit,
    )
    rows = [
        RowOutcome(4, "E001", "Ada Lovelace", Outcome.ADDED, details={"department": "Engineering"}),
        RowOutcome(5, "E002", "Grace Hopper", Outcome.UPDATED, details={"department": "Research"}),
        RowOutcome(6, "E003", "Alan Turing", Outcome.UNCHANGED),
        RowOutcome(
            7,
            "E004",
            XSS_NAME,
            Outcome.INVALID,
            (
                Problem(
                    "not-a-date",
                    "Row 7: Start date '31/02/2024' is not a date",
                    7,
                    "Start date",
                    "start_date",
                    "31/02/2024",
                ),
                Problem(
                    "unknown-country",
                    "Row 7: Country 'Atlantis' is not a country code",
                    7,
                    "Country",
                    "country",
                    "Atlantis",
                ),
            ),
            source=_cells(
                "E004", "<script>alert(1)</script>", "", "a@example.com", "Atlantis", "31/02/2024", ""
            ),
        ),
        RowOutcome(
            8,
            "E005",
            "Marie Curie",
            Outcome.INVALID,
            (
                Problem(
                    "not-an-email",
                    f"Row 8: Work e-mail '{FORMULA}' is not an e-mail address",
                    8,
                    "Work e-mail",
                    "work_email",
                    FORMULA,
                ),
            ),
            source=_cells("E005", "Marie", "Curie", FORMULA, "FR", "2024-02-01", "-12"),
        ),
        RowOutcome(
            9,
            "E006",
            "Rosalind Franklin",
            Outcome.INVALID,
            (
                Problem(
                    "not-an-allowed-value",
                    f"Row 9: Passport number '{PASSPORT}' has the wrong form",
                    9,
                    "Passport number",
                    "passport_number",
                    PASSPORT,
                ),
            ),
            details={"passport_number": PASSPORT},
            source=_cells("E006", "Rosalind", "Franklin", "rf@example.com", "GB", "2024-03-01", PASSPORT),
        ),
        RowOutcome(
            10,
            "E007",
            XSS_MARKER_NAME,
            Outcome.REJECTED,
            (
                Problem(
                    "service-rejected", "Row 10: the platform refused the row: 'job_title is too long'", 10
                ),
            ),
            message="The platform refused the row: 'job_title is too long'",
            source=_cells("E007", "Kurt", "Gödel", "kg@example.com", "AT", "2024-01-15", ""),
        ),
        RowOutcome(
            11,
            "E008",
            "Emmy Noether",
            Outcome.FAILED,
            (Problem("http-503", "Row 11: the platform answered 503 Service Unavailable after 5 tries", 11),),
            source=_cells("E008", "Emmy", "Noether", "en@example.com", "DE", "2024-04-01", ""),
        ),
        RowOutcome(
            12,
            "E009",
            "Katherine Johnson",
            Outcome.PERMISSION_DENIED,
            message="The import account may not change staff in department Finance",
            source=_cells("E009", "Katherine", "Johnson", "kj@example.com", "US", "2024-04-02", ""),
        ),
        RowOutcome(13, "E010", "Hedy Lamarr", Outcome.ADDED, details={"department": "Engineering"}),
    ]
    return RunResult(info, rows)


def sheet_lines(report_xlsx: Path, sheet: str) -> list[tuple[Any, ...]]:
    """One sheet of a report.xlsx, header line first, the workbook closed again (a read-only one keeps its
    file open until closed, and the warning of a file left open surfaces in whichever test runs next)."""
    book = load_workbook(report_xlsx, read_only=True)
    try:
        return list(book[sheet].iter_rows(values_only=True))
    finally:
        book.close()
