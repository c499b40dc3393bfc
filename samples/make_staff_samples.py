"""Write the staff sample exports in samples/: a BambooHR-style CSV and a Workday-style XLSX.

Both look like what those systems export (title rows, Excel date cells, ids with leading zeros, custom
columns) and both hold a few bad rows, so the demo's report has something to show. Run it again to
regenerate them: ``python samples/make_staff_samples.py``.
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

from openpyxl import Workbook

HERE = Path(__file__).resolve().parent

BAMBOO_HEADER = [
    "Employee #", "First Name", "Last Name", "Work Email", "Home Email", "Gender", "Date of Birth",
    "Hire Date", "Job Title", "Employment Status", "Country", "Nationality", "Mobile Phone", "Department",
    "Division", "Cost Centre", "Location", "Reports To", "Emergency Contact", "Emergency Phone",
    "Passport Number", "Shirt Size",
]

# (id, first, last, work email, home email, gender, birth, hire, title, status, country, nationality, ...)
BAMBOO_ROWS = [
    ["000101", "Aisha", "Rahman", "aisha.rahman@acme.example", "aisha@mail.example", "F", "03/14/1990",
     "01/06/2020", "Payroll Specialist", "Full-Time", "MY", "Malaysia", "+60 12 345 6789", "Finance",
     "APAC", "CC-100", "Kuala Lumpur", "Tan Wei Ming", "Farid Rahman", "+60 12 000 1111", "A12345678", "M"],
    ["000102", "Tan", "Wei Ming", "Tan.WeiMing@ACME.example", "", "Male", "11/02/1984", "07/15/2015",
     "Finance Manager", "Full-Time", "Singapore", "SG", "+65 8123 4567", "Finance", "APAC", "CC-100",
     "Singapore", "", "Lim Mei", "+65 9000 0000", "K7654321", "L"],
    ["000103", "Priya", "Nair", "priya.nair@acme.example", "", "female", "07/30/1995", "03/01/2022",
     "HR Generalist", "Part-Time", "SGP", "India", "+65 8555 1212", "People", "APAC", "CC-200",
     "Singapore", "Tan Wei Ming", "", "", "", "S"],
    ["000104", "Li", "Na", "li.na@acme.example", "", "F", "05/09/1988", "09/01/2019", "Software Engineer",
     "Full-Time", "CN", "CN", "+86 138 0013 8000", "Engineering", "Greater China", "CC-300", "Shanghai",
     "Chen Jie", "Li Qiang", "+86 139 0000 0000", "E12345678", "M"],
    ["000105", "Chen", "Jie", "chen.jie@acme.example", "", "M", "12/12/1980", "02/28/2012",
     "Engineering Manager", "Full-Time", "China", "China", "+86 137 1111 2222", "Engineering",
     "Greater China", "CC-300", "Shanghai", "", "", "", "", "XL"],
    ["000106", "Marcus", "Lee", "marcus.lee@acme.example", "", "M", "01/20/1999", "06/01/2024", "Analyst",
     "Contractor", "SG", "MY", "+65 8000 1234", "Finance", "APAC", "CC-100", "Singapore", "Tan Wei Ming",
     "", "", "", "M"],
    # bad rows: the report should show each of these with its problem
    ["000107", "Noor", "Aziz", "noor.aziz@acme", "", "F", "04/04/1993", "02/30/2021", "Recruiter",
     "Full-Time", "MY", "MY", "", "People", "APAC", "CC-200", "Kuala Lumpur", "", "", "", "", "S"],
    ["000108", "Sam", "Wong", "sam.wong@acme.example", "", "M", "08/08/1991", "10/10/2018", "",
     "Full-Time", "Singapur", "SG", "", "Sales", "APAC", "CC-400", "Singapore", "", "", "", "", "M"],
    ["000102", "Wei Ming", "Tan", "weiming.tan2@acme.example", "", "M", "11/02/1984", "07/15/2015",
     "Finance Manager", "Full-Time", "SG", "SG", "", "Finance", "APAC", "CC-100", "Singapore", "", "", "",
     "", "L"],
    ["000110", "Ravi", "Kumar", "ravi.kumar@acme.example", "", "M", "09/09/1989", "04/01/2021",
     "Sales Lead", "Full-Time", "SG", "IN", "+65 8999 0000", "Sales", "APAC", "CC-400", "Singapore",
     "Tan Wei Ming", "", "", "P9876543", "L"],
]

WORKDAY_HEADER = [
    "Employee ID", "Legal Name", "Primary Work Email", "Hire Date", "Business Title", "Worker Type",
    "Location", "Country", "Gender", "Is Manager", "Is Intern", "Date of Birth", "Contract Type",
    "Cost Center", "Grade", "Supervisory Organization",
]

D = dt.date
WORKDAY_ROWS = [
    ["000201", "王芳", "wang.fang@acme.example", D(2018, 3, 12), "HR Business Partner", "Regular",
     "Beijing", "中国", "女", "No", "No", D(1987, 6, 1), "Indefinite", "CC-500", "G7", "People APAC"],
    ["000202", "Lim Mei Ling", "lim.meiling@acme.example", D(2021, 11, 1), "Payroll Analyst", "Regular",
     "Singapore", "Singapore", "F", "No", "No", D(1994, 2, 17), "Fixed Term", "CC-100", "G5",
     "Finance APAC"],
    ["000203", "Ahmad bin Ismail", "ahmad.ismail@acme.example", D(2016, 5, 3), "Operations Director",
     "Regular", "Kuala Lumpur", "Malaysia", "M", "Yes", "No", D(1979, 9, 23), "Indefinite", "CC-600",
     "G9", "Operations"],
    ["000204", "张伟", "zhang.wei@acme.example", D(2023, 7, 17), "Data Engineer", "Regular", "Shenzhen",
     "CHN", "男", "No", "No", D(1996, 12, 5), "fixed-term", "CC-300", "G6", "Engineering"],
    ["000205", "Emily Carter", "emily.carter@acme.example", D(2025, 1, 6), "Summer Intern", "Intern",
     "Singapore", "SG", "F", "No", "Yes", D(2003, 4, 2), "Fixed-term", "CC-100", "G1", "Finance APAC"],
    # bad rows
    ["000206", "Jon Park", "jon.park@acme.example", D(2024, 2, 1), "Team Lead Intern", "Intern",
     "Singapore", "SG", "M", "Yes", "Yes", D(2001, 1, 1), "Fixed-term", "CC-100", "G2", "Sales"],
    ["000207", "Siti Hajar", "siti.hajar@acme.example", None, "Accountant", "Regular", "Penang",
     "Malaysia", "F", "No", "No", D(1990, 10, 10), "Permanent", "CC-600", "G5", "Finance APAC"],
]


def write_bamboohr(path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(BAMBOO_HEADER)
        writer.writerows(BAMBOO_ROWS)


def write_workday(path: Path) -> None:
    wb = Workbook()
    ws = wb.active
    ws.title = "Worker Roster"
    ws.append(["Worker Roster Report: All Active Workers"])
    ws.append([f"Run date: {D(2026, 11, 1).isoformat()}"])
    ws.append([])
    ws.append(WORKDAY_HEADER)
    for row in WORKDAY_ROWS:
        ws.append(row)
    for cells in ws.iter_rows(min_row=5):
        cells[0].number_format = "@"  # the id column is text: its leading zeros are part of the id
        for cell in cells:
            if isinstance(cell.value, dt.date):
                cell.number_format = "yyyy-mm-dd"
    wb.save(path)


if __name__ == "__main__":
    write_bamboohr(HERE / "bamboohr_staff.csv")
    write_workday(HERE / "workday_staff.xlsx")
