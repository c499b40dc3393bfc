"""A new user runs ``hrimport init`` on their HR system's export, fills in the TODO lines, validates and
imports: realistic exports (BambooHR, Workday, SuccessFactors, Personio, ADP in English; Chinese, Japanese,
Malay, German and French ones) written by real writers in the encodings those systems use."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hrimport.cli import main
from tests.init_exports import EXPORTS, ROWS, Export, fill_todos
from tests.staff_files import workbook_of_1904

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
pytestmark = pytest.mark.usefixtures("instant_retries")


def hrimport(*args: str, base_url: str = "") -> Result:
    env = {"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": base_url}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def mapped_fields(preview: dict) -> dict[str, str | None]:
    """Source column -> the field init gave it (``name`` for a joined part), None when it gave none."""
    out: dict[str, str | None] = {}
    for c in preview["columns"]:
        out[c["column"]] = c["field"] if c["role"] in ("field", "name part") else None
    return out


@pytest.mark.parametrize("export", EXPORTS, ids=[e.name for e in EXPORTS])
def test_init_then_fill_the_todos_then_validate_and_import_every_row(tmp_path: Path, sandbox, export: Export) -> None:
    source = export.write(tmp_path)
    config = tmp_path / "config.toml"
    result = hrimport("init", str(source), "-o", str(config), "--json")
    assert result.exit_code == 0, result.output
    preview = json.loads(result.output)
    assert preview["kind"] == "staff"

    got = mapped_fields(preview)
    wrong = {c: (got[c], want) for c, want in export.expected.items() if got[c] is not None and got[c] != want}
    assert not wrong, f"columns mapped to a wrong field (got, expected): {wrong}"
    mappable = [c for c, want in export.expected.items() if want is not None]
    right = [c for c in mappable if got[c] == export.expected[c]]
    assert len(right) >= 0.9 * len(mappable), f"missed: {sorted(set(mappable) - set(right))}"

    config.write_text(fill_todos(config.read_text(encoding="utf-8"), export.answers), encoding="utf-8")
    validated = hrimport("staff", "validate", str(config), str(source))
    assert validated.exit_code == 0, validated.output
    imported = hrimport("staff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports"),
                        base_url=sandbox.base_url)
    assert imported.exit_code == 0, imported.output
    assert f"Rows read: {ROWS} = {ROWS} added" in imported.output
    assert len(sandbox.staff(99)) == ROWS


def test_the_preview_shows_each_column_its_field_how_sure_and_values_as_sent(tmp_path: Path) -> None:
    source = EXPORTS[0].write(tmp_path)
    result = hrimport("init", str(source), "-o", str(tmp_path / "bamboo.toml"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Read bamboohr_employees.csv, header row 1: a staff export of 24 rows."
    hire = next(line for line in lines if line.startswith("Hire Date"))
    assert hire.split()[2:5] == ["job_start_date", "exact", "synonym"]
    assert "2010-01-01 | 2011-02-08 | 2012-03-15" in hire  # month-first US dates, sent as ISO
    assert any(line.startswith("Department") and "custom field? (commented out)" in line for line in lines)
    assert ("To fill in (marked TODO): [service] customer_id; [staff] customer_system_id_type; [staff.values.staff_type] 'Full-Time'; "
            "[staff.values.staff_type] 'Part-Time'") in result.output
    text = (tmp_path / "bamboo.toml").read_text()
    assert 'date_order = "month-first"' in text
    # the strict settings, shown where a company that wants them will look (by default: warnings)
    assert '# formula_text = "reject"' in text and '# email_check = "strict"' in text
    assert '# strict_checks = ["country-change-incomplete"]' in text
    assert '# "Department" = "Department"' in text
    assert '"Full-Time" = "TODO: System | Payroll | HRO | EOR"' in text


def test_an_existing_config_is_never_overwritten_without_force(tmp_path: Path) -> None:
    source = EXPORTS[0].write(tmp_path)
    config = tmp_path / "mine.toml"
    config.write_text("# my own work\n")
    result = hrimport("init", str(source), "-o", str(config))
    assert result.exit_code == 2
    assert result.output == (f"Error: {config} already exists; give another name with -o, or add --force "
                             "to replace it\n")
    assert config.read_text() == "# my own work\n"
    assert hrimport("init", str(source), "-o", str(config), "--force").exit_code == 0
    assert "expected_columns = [" in config.read_text()


def test_a_config_with_todo_lines_left_is_refused_naming_each(tmp_path: Path) -> None:
    source = EXPORTS[0].write(tmp_path)
    config = tmp_path / "staff.toml"
    hrimport("init", str(source), "-o", str(config))
    result = hrimport("staff", "validate", str(config), str(source))
    assert result.exit_code == 2
    assert result.output == ("Error: staff.toml [service]: fill in the value still marked TODO: customer_id; "
                             "the comment beside it says what to write\n")
    text = config.read_text().replace('customer_id = "TODO"', "customer_id = 99")
    config.write_text(text)
    result = hrimport("staff", "validate", str(config), str(source))
    assert result.exit_code == 2
    assert result.output == ("Error: staff.toml [staff]: fill in the value(s) still marked TODO: "
                             "customer_system_id_type, values.staff_type.'Full-Time', "
                             "values.staff_type.'Part-Time'; the comment beside each says what to write\n")


def test_values_that_contradict_the_header_leave_the_column_out_with_why(tmp_path: Path) -> None:
    source = tmp_path / "staff.csv"
    source.write_text("Employee ID,Email,Contact,Country,Hire Date\n"
                      + "".join(f"{i},Person {i},p{i}@acme.example,Narnia {i},2020-01-0{i}\n" for i in range(1, 6)))
    result = hrimport("init", str(source), "--json", "-o", str(tmp_path / "c.toml"))
    columns = {c["column"]: c for c in json.loads(result.output)["columns"]}
    assert columns["Email"]["role"] == "left out"
    assert columns["Email"]["note"] == ("headed like system_email, but its values are not e-mail addresses "
                                        "(e.g. 'Person 1')")
    assert (columns["Contact"]["field"], columns["Contact"]["how"]) == ("system_email", "values only")
    assert columns["Country"]["role"] == "left out"
    assert "its values are not countries (e.g. 'Narnia 1')" in columns["Country"]["note"]
    text = (tmp_path / "c.toml").read_text()
    assert '#   "Email": headed like system_email, but its values are not e-mail addresses' in text
    assert 'country = "TODO: a two-letter country code, such as SG"' in text


def test_a_manager_column_of_yes_no_words_is_never_taken_for_the_managers_name(tmp_path: Path) -> None:
    """German exports head both the manager's name and "is a manager" Führungskraft: the values say which. A
    column of ja/nein is no name, so "nein" is never sent as the reporting officer; one of names is."""
    source = tmp_path / "mitarbeiter.csv"
    source.write_bytes("Personalnummer;Name;Führungskraft;Land\r\n00123;Jürgen Müller;nein;DE\r\n"
                       "00124;Anna Schmidt;ja;DE\r\n00125;Zoë Dubois;Nein;FR\r\n".encode("utf-8-sig"))
    result = hrimport("init", str(source), "--json", "-o", str(tmp_path / "c.toml"))
    assert result.exit_code == 0, result.output
    columns = {c["column"]: c for c in json.loads(result.output)["columns"]}
    assert (columns["Führungskraft"]["role"], columns["Führungskraft"]["field"]) == ("left out", None)
    assert columns["Führungskraft"]["note"] == (
        "headed like reporting_officer, but its values are yes/no words (e.g. 'nein'): map it by hand to the "
        "yes/no field it means (is_manager, is_employee, is_intern)")
    assert '"Führungskraft" = ' not in (tmp_path / "c.toml").read_text(encoding="utf-8")  # mapped to no field

    source.write_bytes("Personalnummer;Name;Führungskraft;Land\r\n00123;Jürgen Müller;Anna Schmidt;DE\r\n"
                       "00124;Anna Schmidt;;DE\r\n".encode("utf-8-sig"))
    result = hrimport("init", str(source), "--json", "-o", str(tmp_path / "d.toml"))
    columns = {c["column"]: c for c in json.loads(result.output)["columns"]}
    assert (columns["Führungskraft"]["role"], columns["Führungskraft"]["field"]) == ("field", "reporting_officer")


def test_dates_that_read_either_way_make_the_date_order_a_todo_and_the_answer_decides_the_dates(
        tmp_path: Path, sandbox) -> None:
    """A German leave history whose every date has a day of 12 or less (04.03.2024 is 4 March or April 3):
    nothing in the file proves the order, so init asks for it, and no command reads the file until it is
    written; then the dates are read as the answer says."""
    source = tmp_path / "abwesenheiten.csv"
    source.write_bytes(("Personalnummer;Abwesenheitsart;Von;Bis;Tage;Land\r\n"
                        "000106;Annual Leave;04.03.2024;08.03.2024;5;SG\r\n"
                        "000106;Annual Leave;11.03.2024;11.03.2024;1;SG\r\n").encode("utf-8-sig"))
    config = tmp_path / "leave.toml"
    result = hrimport("init", str(source), "-o", str(config), "--json")
    assert result.exit_code == 0, result.output
    preview = json.loads(result.output)
    assert preview["date_order"] is None
    assert preview["todo"][:2] == ["[service] customer_id", "[source] date_order"]
    text = config.read_text(encoding="utf-8")
    assert ('date_order = "TODO: day-first | month-first" # no date shows the order (\'04.03.2024\' is 4 March '
            "or April 3, in 'Von'): write the order your HR system writes") in text
    text = text.replace('customer_id = "TODO"', "customer_id = 99")
    config.write_text(text, encoding="utf-8")
    result = hrimport("timeoff", "validate", str(config), str(source))
    assert (result.exit_code, result.output) == (2, ("Error: leave.toml [source]: fill in the value still marked "
                                                    "TODO: date_order; the comment beside it says what to write\n"))

    config.write_text(fill_todos(text, {"date_order": "day-first"}), encoding="utf-8")
    sandbox.http.post("/api/bulk_add_edit_staff", headers=sandbox.auth("demo-customer-99"), json={
        "customer_id": "99", "bulk_staff_data": [{
            "customer_system_id": "000106", "customer_system_id_type": "Personio", "name": "Person 106",
            "system_email": "p106@acme.example", "country": "SG", "job_title": "Analyst",
            "job_start_date": "2020-01-06", "staff_type": "Payroll"}]}).raise_for_status()
    result = hrimport("timeoff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)
    assert result.exit_code == 0, result.output
    assert sorted((r["start_date"], r["end_date"]) for r in sandbox.time_off(99)) == [
        ("2024-03-04", "2024-03-08"), ("2024-03-11", "2024-03-11")]


def test_two_email_columns_the_header_decides_and_the_other_is_its_sibling(tmp_path: Path) -> None:
    source = tmp_path / "staff.csv"
    source.write_text("Employee ID,Email Address,Work Email,Personal Email\n"
                      + "".join(f"{i},a{i}@x.example,b{i}@x.example,c{i}@y.example\n" for i in range(1, 4)))
    result = hrimport("init", str(source), "--json", "-o", str(tmp_path / "c.toml"))
    got = {c["column"]: c["field"] for c in json.loads(result.output)["columns"]}
    assert got == {"Employee ID": "customer_system_id", "Email Address": "system_email",
                   "Work Email": "work_email", "Personal Email": "personal_email"}


def test_a_time_off_export_is_recognised_and_its_config_validates(tmp_path: Path) -> None:
    config = tmp_path / "leave.toml"
    result = hrimport("init", str(SAMPLES / "leave_history.xlsx"), "-o", str(config), "--json")
    preview = json.loads(result.output)
    assert preview["kind"] == "timeoff"
    assert {c["column"]: c["field"] for c in preview["columns"] if c["role"] in ("field", "setting")} == {
        "Employee ID": "customer_system_id", "Leave Type": "leave_type", "From": "start_date", "To": "end_date",
        "Half Day": "half_day", "Days": "total_days", "Country": "country", "Reason": "notes",
        "Status": "decision"}
    answers = {"customer_id": "99", "AL": "Annual Leave", "Vacation": "Annual Leave", "MC": "Sick Leave", "Birthday Leave": "Annual Leave",
               "Approved": "Approve", "Pending": ""}
    config.write_text(fill_todos(config.read_text(), answers))
    validated = hrimport("timeoff", "validate", str(config), str(SAMPLES / "leave_history.xlsx"))
    assert validated.exit_code in (0, 1), validated.output
    assert "TODO" not in validated.output


def test_an_unreadable_export_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = hrimport("init", str(tmp_path / "missing.csv"))
    assert result.exit_code == 2
    assert result.output == f"Error: {tmp_path / 'missing.csv'}: file not found; check the path and the file name\n"


def _bamboo_with_config(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    export = EXPORTS[0]
    source = export.write(tmp_path)
    config = tmp_path / "staff.toml"
    hrimport("init", str(source), "-o", str(config))
    config.write_text(fill_todos(config.read_text(), export.answers))
    return source, config, source.read_text().splitlines()


def test_a_later_export_with_other_columns_is_named_in_the_summary(tmp_path: Path) -> None:
    source, config, lines = _bamboo_with_config(tmp_path)
    source.write_text("\n".join([lines[0].replace("Department", "Team") + ",Grade",
                                 *(line + ",G1" for line in lines[1:])]) + "\n")
    result = hrimport("staff", "validate", str(config), str(source))
    assert result.exit_code == 0, result.output
    assert ("The export changed since the config was written: it no longer has 'Department' and has new "
            "column(s) 'Team', 'Grade' (compared with [source] expected_columns); check the mapping and update "
            "expected_columns.") in result.output


def test_a_renamed_mapped_column_suggests_the_new_header(tmp_path: Path) -> None:
    source, config, lines = _bamboo_with_config(tmp_path)
    source.write_text("\n".join([lines[0].replace("Hire Date", "Hire Date (original)"), *lines[1:]]) + "\n")
    result = hrimport("staff", "validate", str(config), str(source))
    assert result.exit_code == 2
    assert result.output.startswith("Error: bamboohr_employees.csv: column(s) 'Hire Date' named in the config")
    assert result.output.endswith("; 'Hire Date' is missing and the file has 'Hire Date (original)': did the "
                                  "export change?\n")


def test_a_code_page_export_is_set_up_with_init_encoding_then_imported(tmp_path: Path, sandbox) -> None:
    # A French payroll export saved by Excel in Windows-1252 with a few accents: the README says such files
    # need the encoding named once, and init is where a new user starts, before any config exists.
    source = tmp_path / "export.csv"
    with open(source, "w", newline="", encoding="cp1252") as fh:
        csv.writer(fh, delimiter=";").writerows([
            ["Matricule", "Prénom", "Nom", "E-mail", "Pays", "Poste", "Date d'embauche"],
            ["100", "Hélène", "Dupré", "helene@acme.example", "France", "Comptable", "03/02/2020"],
            ["101", "Zoé", "Bréhaut", "zoe@acme.example", "France", "Analyste", "15/07/2019"],
        ])
    config = tmp_path / "staff.toml"

    refused = hrimport("init", str(source), "-o", str(config))
    assert refused.exit_code == 2 and refused.output.count("\n") == 1, refused.output
    assert refused.output.startswith(f"Error: {source}: cannot tell which encoding this text is in")
    assert refused.output.endswith("run hrimport init again with --encoding and the one the export was saved "
                                   "in (such as --encoding cp1252)\n")
    assert not config.exists()

    result = hrimport("init", str(source), "-o", str(config), "--encoding", "cp1252")
    assert result.exit_code == 0, result.output
    assert "Hélène | Zoé" in result.output
    text = config.read_text(encoding="utf-8")
    assert '\nencoding = "cp1252"' in text
    config.write_text(fill_todos(text, {"customer_system_id_type": "Sage", "staff_type": "Payroll"}),
                      encoding="utf-8")
    imported = hrimport("staff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports"),
                        base_url=sandbox.base_url)
    assert imported.exit_code == 0, imported.output
    assert {s["customer_system_id"]: s["name"] for s in sandbox.staff(99)} == {
        "100": "Hélène Dupré", "101": "Zoé Bréhaut"}


def test_the_preview_of_a_mac_excel_workbook_shows_its_serial_numbers_as_the_import_sends_them(tmp_path: Path) -> None:
    """A Mac Excel workbook (1904 date system) holds birth dates as serial numbers: the preview shows the dates
    the import will send (1993-05-18), not the ones the 1900 count makes of them (1989-05-17)."""
    source = workbook_of_1904(tmp_path / "staff.xlsx")
    result = hrimport("init", str(source), "-o", str(tmp_path / "mac.toml"), "--json")
    assert result.exit_code == 0, result.output
    [birth] = [c for c in json.loads(result.output)["columns"] if c["column"] == "Birth Date"]
    assert birth["examples"] == ["1993-05-18", "1984-02-11"]


def test_the_preview_of_chinese_headers_lines_its_columns_up_on_a_terminal(tmp_path: Path) -> None:
    """A Chinese header takes two terminal columns a character: the field column starts at the same place on
    every line, as a person reads the table."""
    from hrimport.listing import columns_taken

    source = tmp_path / "leave.csv"
    with open(source, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([["员工编号", "假期类型", "开始日期", "结束日期", "国家"],
                                  ["000101", "年假", "2025-04-07", "2025-04-09", "MY"]])
    result = hrimport("init", str(source), "-o", str(tmp_path / "leave.toml"))
    assert result.exit_code == 0, result.output
    table = result.output.split("\n\n")[1].splitlines()
    assert table[0].startswith("Column    Field ")
    starts = {columns_taken(re.match(r"\S+ +", line).group(0)) for line in table}  # type: ignore[union-attr]
    assert starts == {10}, table  # "员工编号" (8 columns) and two spaces, as "Column" padded to 8


def test_a_date_column_showing_both_orders_gets_a_date_order_to_fill_in_saying_so(tmp_path: Path) -> None:
    """A leave export whose typed dates were written both ways (15/04/2025 by one clerk, 04/22/2025 by another)
    stops an import without date_order: init asks for it (a TODO), saying that the column shows both orders with
    a value of each, where it wrote the setting commented out, saying that no date depends on the order."""
    source = tmp_path / "leave.csv"
    with open(source, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([["Employee ID", "Leave Type", "From", "To", "Country"],
                                  ["000101", "Annual Leave", "15/04/2025", "16/04/2025", "MY"],
                                  ["000102", "Annual Leave", "04/22/2025", "04/23/2025", "SG"]])
    result = hrimport("init", str(source), "-o", str(tmp_path / "leave.toml"))
    assert result.exit_code == 0, result.output
    text = (tmp_path / "leave.toml").read_text(encoding="utf-8")
    [line] = [line for line in text.splitlines() if "date_order" in line]
    assert line.startswith('date_order = "TODO: day-first | month-first"')
    assert line.endswith("# 'From' holds dates in both orders ('15/04/2025' reads only day-first, '04/22/2025' only "
                         "month-first): write the order your HR system writes; a date that order cannot read is held "
                         "back on its row")
    assert "[source] date_order" in result.output  # among the TODOs to fill in


def test_the_preview_of_an_address_column_with_line_breaks_keeps_each_column_on_its_line(tmp_path: Path) -> None:
    """A BambooHR CSV quotes an address written on several lines: the preview shows its line breaks as \\n, so
    the table keeps one line per column (the address's second line was printed at the start of the next)."""
    source = tmp_path / "staff.csv"
    source.write_bytes("\ufeffEmployee #,Full Name,Home Address,Country\r\n"
                       '101,Aisha Rahman,"12 Jalan Ampang\nKuala Lumpur",MY\r\n'
                       '102,Tan Wei Ming,"1 Raffles Place\r\n#20-01",SG\r\n'.encode())
    result = hrimport("init", str(source), "-o", str(tmp_path / "staff.toml"))
    assert result.exit_code == 0, result.output
    table = result.output.split("\n\n")[1].splitlines()
    assert len(table) == 5, table
    assert table[3].split("  ")[0] == "Home Address"
    assert table[3].endswith("12 Jalan Ampang\\nKuala Lumpur | 1 Raffles Place\\r\\n#20-01"), table[3]


def test_a_gender_the_platform_has_no_choice_for_may_be_left_unsent(tmp_path: Path, sandbox) -> None:
    """Personio writes 'divers'; the platform takes Female or Male. The value map's TODO offers leaving it empty,
    so that no one is sent as a gender they are not; filled so, the row is sent without a gender."""
    import openpyxl

    source = tmp_path / "personio.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Personalnummer", "Vorname", "Nachname", "E-Mail-Adresse", "Position", "Land", "Eintrittsdatum",
                  "Beschäftigungsart", "Geschlecht"])
    sheet.append([1001, "Jürgen", "Müller", "jm@firma.example", "Leiter", "DE", "2019-04-01", "Payroll", "männlich"])
    sheet.append([1003, "Luca", "Rossi", "lr@firma.example", "Entwickler", "AT", "2023-01-02", "Payroll", "divers"])
    book.save(source)
    config = tmp_path / "personio.toml"
    assert hrimport("init", str(source), "-o", str(config)).exit_code == 0
    text = config.read_text(encoding="utf-8")
    assert '"divers" = "TODO: Female | Male | empty to send none"' in text
    config.write_text(fill_todos(text, {"customer_system_id_type": "Personio", "divers": ""}), encoding="utf-8")
    result = hrimport("staff", "import", str(config), str(source), base_url=sandbox.base_url)
    assert result.exit_code == 0, result.output
    sent = {e["customer_system_id"]: e.get("gender") for b in sandbox.bodies for e in json.loads(b)["bulk_staff_data"]}
    assert sent == {"1001": "Male", "1003": None}


def test_a_personio_absence_export_maps_both_half_day_columns(tmp_path: Path) -> None:
    """Personio heads its half-day columns 'Halber Tag Start' and 'Halber Tag Ende': the end was read and the
    start left out ('no time-off field has this meaning'), so a leave starting at noon was counted whole."""
    source = tmp_path / "abwesenheiten.csv"
    with open(source, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([
            ["Personalnummer", "Abwesenheitsart", "Startdatum", "Enddatum", "Halber Tag Start", "Halber Tag Ende"],
            ["1003", "Urlaub", "2026-10-20", "2026-10-21", "ja", "nein"],
            ["1002", "Krankheit", "2026-10-12", "2026-10-13", "nein", "ja"]])
    preview = json.loads(hrimport("init", str(source), "-o", str(tmp_path / "leave.toml"), "--json").output)
    settings = {c["column"]: c["field"] for c in preview["columns"] if c["role"] == "setting"}
    assert settings == {"Halber Tag Start": "half_start", "Halber Tag Ende": "half_end"}


def test_a_country_column_no_pack_names_is_named_beside_the_country_to_fill_in(tmp_path: Path) -> None:
    """HiBob heads the work country 'Site country': no pack names it, so init asks for the one country every row
    is sent with; its comment names the column of countries, so that people of three countries are not all sent
    as the one written there."""
    source = tmp_path / "bob.csv"
    source.write_bytes(b"\xef\xbb\xbfEmail,Employee ID,Display name,Start date,Job title,Site country\r\n"
                       b"ann@acme.example,E1,Ann Lee,2021-01-05T00:00:00,Analyst,Singapore\r\n"
                       b"bob@acme.example,E2,Bob Tan,2022-03-07T00:00:00,Clerk,Malaysia\r\n"
                       b"chen@acme.example,E3,Chen Li,2023-05-09T00:00:00,Engineer,China\r\n")
    config = tmp_path / "bob.toml"
    assert hrimport("init", str(source), "-o", str(config)).exit_code == 0
    line = next(line for line in config.read_text(encoding="utf-8").splitlines() if line.startswith("country = "))
    assert line.endswith("# no column is headed as country, but 'Site country' holds countries (Singapore, "
                         "Malaysia, China): if it gives each person's country, map it under [staff.columns] and "
                         "delete this line; else the one value every row is sent with"), line


def test_totals_rows_are_no_evidence_nor_examples_of_a_column(tmp_path: Path) -> None:
    """A report with a 'Total' row under each department: init said the ids were '1 repeated' ('Total' twice)
    and showed 'Total' and '2' as an id and a name as sent; it now names the rows, which the import holds back."""
    source = tmp_path / "staff.csv"
    source.write_bytes(b"Employee ID,Name,Email,Country,Job Title,Hire Date,Staff Type,Department\r\n"
                       b"001,Ann Lee,ann@acme.example,SG,Analyst,2020-01-05,Payroll,Finance\r\n"
                       b"002,Bob Tan,bob@acme.example,SG,Clerk,2020-01-06,Payroll,Finance\r\n"
                       b"Total,2,,,,,,Finance\r\n"
                       b"003,Cai Lin,cai@acme.example,MY,Engineer,2021-01-05,Payroll,IT\r\n"
                       b"Total,1,,,,,,IT\r\n"
                       b"Grand Total,3,,,,,,\r\n")
    config = tmp_path / "staff.toml"
    result = hrimport("init", str(source), "-o", str(config))
    assert result.output.splitlines()[0] == ("Read staff.csv, header row 1: a staff export of 6 rows (3 of them "
                                             "totals rows or footer lines, never sent: rows 4, 6 and 7).")
    assert '"Employee ID" = "customer_system_id"        # exact synonym, unique, leading zeros kept' in (
        config.read_text(encoding="utf-8"))
    preview = json.loads(hrimport("init", str(source), "-o", str(config), "--json", "--force").output)
    assert preview["totals_or_footer_rows"] == [4, 6, 7]
    examples = {c["column"]: c["examples"] for c in preview["columns"]}
    assert examples["Employee ID"] == ["001", "002", "003"] and examples["Name"] == ["Ann Lee", "Bob Tan", "Cai Lin"]
