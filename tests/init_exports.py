"""Realistic HR exports for the ``hrimport init`` tests, written by real writers (csv in the encodings the
HR systems use, openpyxl, xlsxwriter), each with what a person would map every column to and the answers a
user writes over the TODO lines."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import xlsxwriter
from openpyxl import Workbook

ROWS = 24
TODO_LINE = re.compile(r'^(?P<key>"(?:[^"\\]|\\.)*"|[A-Za-z_]+)(?P<gap>\s*=\s*)"TODO[^"]*"(?P<rest>.*)$')


@dataclass(frozen=True)
class Col:
    header: str
    value: Callable[[int], str]
    field: str | None  # what a person maps it to: a field, "name" for a part of a joined name, None: nothing


@dataclass(frozen=True)
class Export:
    name: str
    filename: str
    columns: list[Col]
    answers: dict[str, str]  # TODO key (a setting, constant or value in the file) -> what the user writes
    writer: str  # csv | openpyxl | xlsxwriter
    encoding: str = "utf-8"
    delimiter: str = ","
    titles: list[str] = field(default_factory=list)  # report title rows above the header (workbooks)

    def write(self, folder: Path) -> Path:
        path = folder / self.filename
        rows = [[c.value(i) for c in self.columns] for i in range(ROWS)]
        headers = [c.header for c in self.columns]
        if self.writer == "csv":
            with open(path, "w", encoding=self.encoding, newline="") as fh:
                out = csv.writer(fh, delimiter=self.delimiter)
                out.writerow(headers)
                out.writerows(rows)
        elif self.writer == "openpyxl":
            wb = Workbook()
            ws = wb.active
            assert ws is not None
            ws.title = "Export"
            for title in self.titles:
                ws.append([title])
            ws.append(headers)
            for row in rows:
                ws.append(row)
            wb.save(path)
        else:
            book = xlsxwriter.Workbook(str(path))
            sheet = book.add_worksheet("Report")
            for r, title in enumerate(self.titles):
                sheet.write_string(r, 0, title)
            for r, row in enumerate([headers, *rows], start=len(self.titles)):
                for c, value in enumerate(row):
                    sheet.write_string(r, c, value)
            book.close()
        return path

    @property
    def expected(self) -> dict[str, str | None]:
        return {c.header: c.field for c in self.columns}


def fill_todos(text: str, answers: dict[str, str]) -> str:
    """Write the answers over the TODO lines, as a user would; a TODO without an answer fails the test."""
    out = []
    for line in text.splitlines():
        match = TODO_LINE.match(line)
        if match:
            key = match["key"].strip('"')
            answers = {"customer_id": "99", **answers}
            assert key in answers, f"unexpected TODO line: {line}"
            line = f'{match["key"]}{match["gap"]}"{answers[key]}"{match["rest"]}'
        out.append(line)
    return "\n".join(out) + "\n"


def _pick(values: list[str]) -> Callable[[int], str]:
    return lambda i: values[i % len(values)]


def _date(i: int, style: str, base: int = 2010) -> str:
    y, m, d = base + i % 12, 1 + i % 12, 1 + (i * 7) % 28
    return {"us": f"{m:02d}/{d:02d}/{y}", "dmy": f"{d:02d}/{m:02d}/{y}", "de": f"{d:02d}.{m:02d}.{y}",
            "iso": f"{y}-{m:02d}-{d:02d}", "ymd": f"{y}/{m:02d}/{d:02d}", "zh": f"{y}年{m}月{d}日"}[style]


EN_FIRST = ["Aisha", "Wei Ming", "Priya", "John", "Maria", "Kenji", "Olivia", "Omar"]
EN_LAST = ["Rahman", "Tan", "Nair", "Smith", "Garcia", "Sato", "Brown", "Haddad"]


def _en_name(i: int) -> str:
    return f"{EN_FIRST[i % 8]} {EN_LAST[(i * 3) % 8]}"


def _email(i: int, domain: str = "acme.example") -> str:
    return f"person{i:03d}@{domain}"


EXPORTS = [
    Export("bamboohr", "bamboohr_employees.csv", [
        Col("Employee #", lambda i: f"{i + 1:04d}", "customer_system_id"),
        Col("First Name", lambda i: EN_FIRST[i % 8], "name"),
        Col("Last Name", lambda i: EN_LAST[(i * 3) % 8], "name"),
        Col("Work Email", _email, "system_email"),
        Col("Home Email", lambda i: _email(i, "home.example"), "personal_email"),
        Col("Hire Date", lambda i: _date(i, "us"), "job_start_date"),
        Col("Job Title", _pick(["Analyst", "Engineer", "Manager"]), "job_title"),
        Col("Employment Status", _pick(["Full-Time", "Part-Time"]), "staff_type"),
        Col("Country", _pick(["Malaysia", "Singapore"]), "country"),
        Col("Gender", _pick(["Female", "Male"]), "gender"),
        Col("Department", _pick(["Finance", "People"]), None),
        Col("Mobile Phone", lambda i: f"+60 12 345 {i:04d}", "phone"),
        Col("Reports To", _pick(["Tan Wei Ming", "Chen Jie"]), "reporting_officer"),
    ], {"customer_system_id_type": "BambooHR", "Full-Time": "Payroll", "Part-Time": "Payroll"}, "csv"),
    Export("workday", "workday_worker_roster.xlsx", [
        Col("Employee ID", lambda i: f"W{i + 1:05d}", "customer_system_id"),
        Col("Legal Name", _en_name, "name"),
        Col("Primary Work Email", _email, "system_email"),
        Col("Hire Date", lambda i: _date(i, "iso"), "job_start_date"),
        Col("Business Title", _pick(["Analyst", "Engineer"]), "job_title"),
        Col("Worker Type", _pick(["Regular", "Contractor"]), "staff_type"),
        Col("Location", _pick(["Singapore", "Kuala Lumpur"]), "location"),
        Col("Country", _pick(["SG", "MY"]), "country"),
        Col("Is Manager", _pick(["No", "Yes", "No"]), "is_manager"),
        Col("Cost Center", _pick(["CC-100", "CC-200"]), None),
        Col("Supervisory Organization", _pick(["Finance (Jane Doe)", "IT (Raj Patel)"]), None),
    ], {"customer_system_id_type": "Workday", "Regular": "Payroll", "Contractor": "EOR"}, "xlsxwriter",
        titles=["Worker Roster", "Run date: 2026-11-01"]),
    Export("successfactors", "sf_employee_export.xlsx", [
        Col("Person ID External", lambda i: f"{100200 + i}", "customer_system_id"),
        Col("First Name", lambda i: EN_FIRST[i % 8], "name"),
        Col("Last Name", lambda i: EN_LAST[(i * 5) % 8], "name"),
        Col("Email Address", _email, "system_email"),
        Col("Hire Date", lambda i: _date(i, "dmy"), "job_start_date"),
        Col("Job Title", _pick(["Analyst", "Consultant"]), "job_title"),
        Col("Employee Class", _pick(["Permanent", "Temporary"]), "staff_type"),
        Col("Country/Region", _pick(["Singapore", "Malaysia"]), "country"),
        Col("Date Of Birth", lambda i: _date(i, "dmy", 1970), "birthdate"),
        Col("Business Phone", lambda i: f"+65 6123 {i:04d}", "phone"),
        Col("Division", _pick(["APAC", "EMEA"]), None),
    ], {"customer_system_id_type": "SuccessFactors", "Permanent": "Payroll", "Temporary": "HRO"}, "openpyxl"),
    Export("personio", "personio_export.xlsx", [
        Col("ID", lambda i: f"{5000 + i}", "customer_system_id"),
        Col("First name", lambda i: EN_FIRST[i % 8], "name"),
        Col("Last name", lambda i: EN_LAST[(i * 7) % 8], "name"),
        Col("Email", _email, "system_email"),
        Col("Position", _pick(["Designer", "Developer"]), "job_title"),
        Col("Hire date", lambda i: _date(i, "iso"), "job_start_date"),
        Col("Employment type", _pick(["internal", "external"]), "staff_type"),
        Col("Gender", _pick(["male", "female", "diverse"]), "gender"),
        Col("Office", _pick(["Berlin", "Munich"]), "location"),
        Col("Nationality", _pick(["Germany", "DE"]), "nationality"),
        Col("Country", _pick(["Germany"]), "country"),
        Col("Department", _pick(["Product"]), None),
        Col("Weekly hours", _pick(["40", "20"]), None),
    ], {"customer_system_id_type": "Personio", "internal": "Payroll", "external": "EOR", "diverse": ""},
        "openpyxl"),
    Export("adp", "adp_workforce_now.csv", [
        Col("Associate ID", lambda i: f"ZX{i + 1:06d}", "customer_system_id"),
        Col("Legal First Name", lambda i: EN_FIRST[i % 8], "name"),
        Col("Legal Last Name", lambda i: EN_LAST[(i * 3) % 8], "name"),
        Col("Work Contact: Work Email", _email, "system_email"),
        Col("Hire/Rehire Date", lambda i: _date(i, "us"), "job_start_date"),
        Col("Job Title Description", _pick(["Accountant", "Clerk"]), "job_title"),
        Col("Worker Category", _pick(["Full Time", "Seasonal"]), "staff_type"),
        Col("Location Description", _pick(["Houston", "Austin"]), "location"),
        Col("Country", _pick(["United States", "USA"]), "country"),
        Col("Home Department Description", _pick(["Accounting"]), None),
        Col("Position Status", _pick(["Active"]), None),
    ], {"customer_system_id_type": "ADP", "Full Time": "Payroll", "Seasonal": "HRO"}, "csv"),
    Export("chinese", "员工花名册.csv", [
        Col("工号", lambda i: f"{i + 1:05d}", "customer_system_id"),
        Col("姓名", lambda i: "王李张刘陈杨黄赵"[i % 8] + ["伟", "芳", "娜", "敏静", "丽", "强"][i % 6], "name"),
        Col("性别", _pick(["男", "女"]), "gender"),
        Col("部门", _pick(["财务部", "人力资源部", "研发部"]), None),
        Col("职位", _pick(["会计", "工程师", "经理"]), "job_title"),
        Col("入职日期", lambda i: _date(i, "zh"), "job_start_date"),
        Col("邮箱", lambda i: _email(i, "example.cn"), "system_email"),
        Col("国家", _pick(["中国", "新加坡"]), "country"),
        Col("员工类型", _pick(["全职", "实习"]), "staff_type"),
        Col("手机号码", lambda i: f"139{i:08d}", "phone"),
        Col("出生日期", lambda i: _date(i, "ymd", 1980), "birthdate"),
        Col("直属上级", _pick(["陈杰", "刘洋"]), "reporting_officer"),
    ], {"customer_system_id_type": "北森", "全职": "Payroll", "实习": "Payroll"}, "csv", encoding="gb18030"),
    Export("japanese", "社員一覧.csv", [
        Col("社員番号", lambda i: f"{i + 1:06d}", "customer_system_id"),
        Col("氏名", lambda i: ["山田", "佐藤", "鈴木", "高橋"][i % 4] + " " + ["太郎", "花子", "一郎", "美咲", "健"][i % 5],
            "name"),
        Col("部署", _pick(["営業部", "総務部", "開発部"]), None),
        Col("役職", _pick(["課長", "主任", "担当"]), "job_title"),
        Col("メールアドレス", lambda i: _email(i, "example.jp"), "system_email"),
        Col("入社日", lambda i: _date(i, "ymd"), "job_start_date"),
        Col("雇用形態", _pick(["正社員", "契約社員"]), "staff_type"),
        Col("性別", _pick(["男性", "女性"]), "gender"),
        Col("生年月日", lambda i: _date(i, "ymd", 1975), "birthdate"),
        Col("国", _pick(["日本"]), "country"),
        Col("携帯電話番号", lambda i: f"090-1234-{i:04d}", "phone"),
    ], {"customer_system_id_type": "SmartHR", "正社員": "Payroll", "契約社員": "HRO"}, "csv",
        encoding="shift_jis"),
    Export("malay", "senarai_pekerja.xlsx", [
        Col("No. Pekerja", lambda i: f"P{i + 1:04d}", "customer_system_id"),
        Col("Nama Penuh", _pick(["Ahmad bin Ali", "Siti binti Hassan", "Muthu a/l Rajan", "Lim Mei Ling"]), "name"),
        Col("E-mel", lambda i: _email(i, "syarikat.my"), "system_email"),
        Col("Jantina", _pick(["Lelaki", "Perempuan"]), "gender"),
        Col("Tarikh Lahir", lambda i: _date(i, "dmy", 1985), "birthdate"),
        Col("Tarikh Mula Bekerja", lambda i: _date(i, "dmy"), "job_start_date"),
        Col("Jawatan", _pick(["Kerani", "Jurutera", "Pengurus"]), "job_title"),
        Col("Jabatan", _pick(["Kewangan", "Sumber Manusia"]), None),
        Col("Negara", _pick(["Malaysia", "Singapura"]), "country"),
        Col("Jenis Pekerja", _pick(["Tetap", "Kontrak"]), "staff_type"),
        Col("No. Telefon Bimbit", lambda i: f"+60 12 {i:03d} 4567", "phone"),
        Col("Pengurus", _pick(["Encik Razak", "Puan Aminah"]), "reporting_officer"),
    ], {"customer_system_id_type": "Kakitangan", "Tetap": "Payroll", "Kontrak": "EOR"}, "xlsxwriter",
        titles=["Senarai Pekerja Aktif", "Dijana pada: 01/11/2026"]),
    Export("german", "Mitarbeiterliste.csv", [
        Col("Personalnummer", lambda i: f"{i + 1:05d}", "customer_system_id"),
        Col("Vorname", _pick(["Lukas", "Anna", "Jonas", "Lea", "Jürgen"]), "name"),
        Col("Nachname", _pick(["Müller", "Schmidt", "Schneider", "Fischer", "Weiß", "Groß"]), "name"),
        Col("E-Mail", lambda i: _email(i, "firma.de"), "system_email"),
        Col("Geschlecht", _pick(["männlich", "weiblich"]), "gender"),
        Col("Geburtsdatum", lambda i: _date(i, "de", 1980), "birthdate"),
        Col("Eintrittsdatum", lambda i: _date(i, "de"), "job_start_date"),
        Col("Position", _pick(["Buchhalterin", "Entwickler", "Teamleiter"]), "job_title"),
        Col("Abteilung", _pick(["Finanzen", "Personal"]), None),
        Col("Beschäftigungsart", _pick(["Vollzeit", "Teilzeit", "Werkstudent"]), "staff_type"),
        Col("Land", _pick(["Deutschland", "Österreich"]), "country"),
        Col("Standort", _pick(["München", "Wien"]), "location"),
        Col("Vorgesetzter", _pick(["Frau Koch", "Herr Bauer"]), "reporting_officer"),
    ], {"customer_system_id_type": "Personio", "Vollzeit": "Payroll", "Teilzeit": "Payroll",
        "Werkstudent": "Payroll"}, "csv", encoding="utf-8-sig", delimiter=";"),
    Export("french", "export_salaries.xlsx", [
        Col("Matricule", lambda i: f"{i + 1:06d}", "customer_system_id"),
        Col("Prénom", _pick(["Camille", "Léa", "Hugo", "Chloé", "Théo"]), "name"),
        Col("Nom", _pick(["Martin", "Bernard", "Dubois", "Lefèvre"]), "name"),
        Col("Adresse e-mail", lambda i: _email(i, "societe.fr"), "system_email"),
        Col("Sexe", _pick(["Homme", "Femme"]), "gender"),
        Col("Date de naissance", lambda i: _date(i, "dmy", 1982), "birthdate"),
        Col("Date d'entrée", lambda i: _date(i, "dmy"), "job_start_date"),
        Col("Intitulé de poste", _pick(["Comptable", "Développeur"]), "job_title"),
        Col("Service", _pick(["Finance", "RH"]), None),
        Col("Type de contrat", _pick(["CDI", "CDD"]), "ec_type"),
        Col("Pays", _pick(["France", "Belgique"]), "country"),
        Col("Site", _pick(["Paris", "Bruxelles"]), "location"),
        Col("Responsable", _pick(["Mme Petit", "M. Roux"]), "reporting_officer"),
    ], {"customer_system_id_type": "Lucca", "staff_type": "Payroll", "CDI": "Indefinite", "CDD": "Fixed-term"},
        "openpyxl"),
]
