"""Write samples/leave_history.xlsx: a leave history export mixing English and Chinese leave types.

The staff ids are those of the staff samples (bamboohr_staff.csv 0001xx, workday_staff.xlsx 0002xx), so
``make demo`` imports this file after them. On purpose the sheet mixes English, Simplified and Traditional
Chinese leave types and the company's own names ("AL", "Vacation", "MC"), real Excel date cells and typed
day-first text dates, half days, rows with and without a Days figure, and a few rows the report must
flag: one wrong total, one pair of overlapping rows, one unknown staff id and one unknown leave type.

Run it again to regenerate: ``python samples/make_leave_sample.py``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Font

HEADER = ["Employee ID", "Leave Type", "From", "To", "Half Day", "Days", "Country", "Reason", "Status"]
D = dt.date

ROWS: list[list[object]] = [
    # English, Malaysia, five working days, total given and right
    ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", 5, "MY", "Family trip", "Approved"],
    # Simplified Chinese sick leave on a weekend: a Calendar-basis type, both days count (api-notes example)
    ["000101", "病假", D(2024, 4, 13), D(2024, 4, 14), "", "", "MY", "Fever", "Approved"],
    # Chinese annual leave in China, no total: filled from the calculation endpoint
    ["000104", "年假", D(2024, 5, 6), D(2024, 5, 8), "", "", "CN", "", "Approved"],
    # a morning off (上午): half a day
    ["000104", "事假", D(2024, 6, 3), D(2024, 6, 3), "上午", 0.5, "CN", "办理证件", "Pending"],
    # Traditional Chinese bereavement and paternity leave
    ["000105", "喪假", D(2024, 7, 1), D(2024, 7, 3), "", 3, "CN", "", "Approved"],
    ["000105", "陪產假", D(2024, 9, 2), D(2024, 9, 6), "", "", "CN", "", "Approved"],
    # the company's own name "AL"; Singapore from default_country; WRONG total: 9 Aug is National Day
    ["000106", "AL", D(2024, 8, 5), D(2024, 8, 9), "", 5, "", "", "Approved"],
    # "Vacation" from the afternoon (PM) of the first day: 1.5 days; a typed day-first date
    ["000106", "Vacation", "14/10/2024", "15/10/2024", "PM", 1.5, "SG", "", "Approved"],
    ["000110", "MC", D(2024, 2, 19), D(2024, 2, 19), "", 1, "SG", "Flu", "Approved"],
    # these two overlap each other (22 Feb): both are flagged, neither is sent
    ["000110", "Annual Leave", D(2024, 2, 20), D(2024, 2, 23), "", "", "SG", "", "Approved"],
    ["000110", "Personal Leave", D(2024, 2, 22), D(2024, 2, 22), "", 1, "SG", "", "Approved"],
    # nobody has this id: the service answers that it does not know the staff member
    ["000999", "Annual Leave", D(2024, 5, 13), D(2024, 5, 14), "", "", "SG", "", "Approved"],
    # marriage leave ending at noon on the last day (First Half on a longer record): 2.5 days
    ["000201", "婚假", D(2024, 11, 11), D(2024, 11, 13), "First Half", "", "CN", "", "Approved"],
    ["000204", "育嬰假", D(2024, 12, 2), D(2024, 12, 3), "", 2, "CN", "", "Pending"],
    # not a leave type hrimport knows: sent with a warning naming the closest names; the sandbox refuses it
    ["000203", "Birthday Leave", D(2024, 6, 10), D(2024, 6, 10), "", 1, "MY", "", "Approved"],
]


def write_leave_history(path: Path) -> None:
    """The sheet as an HR system's "Leave history" export: a title row, then the header."""
    wb = Workbook()
    ws = wb.active
    ws.title = "Leave history"
    ws.append(["Leave history export, generated for the hrimport demo"])
    ws["A1"].font = Font(bold=True)
    ws.append(HEADER)
    for row in ROWS:
        ws.append(row)
    for cells in ws.iter_rows(min_row=3, min_col=3, max_col=4):
        for cell in cells:
            if isinstance(cell.value, dt.date):
                cell.number_format = "yyyy-mm-dd"
    for cell in ws["A"][2:]:
        cell.number_format = "@"  # ids are text: 000101 keeps its zeros
    wb.save(path)


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    write_leave_history(here / "leave_history.xlsx")
    print(f"wrote {here / 'leave_history.xlsx'}")
