"""The mapper turns an export's columns into the platform's fields, the way the config says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hrimport.cli import main
from hrimport.config import load_config
from hrimport.imports.staff import prepare_staff
from hrimport.service.staff import build_payloads
from tests.staff_files import HEADER, person, write_config, write_csv


def payloads(tmp_path: Path, rows: list[dict[str, str]], header: list[str] | None = None, **config: str):
    cfg = load_config(write_config(tmp_path / "staff.toml", **config))  # type: ignore[arg-type]
    _, mapped, problems, _ = prepare_staff(cfg, write_csv(tmp_path / "staff.csv", rows, header=header))
    assert problems == {}, problems
    return mapped, build_payloads(mapped, list(range(len(mapped))))


def test_a_row_becomes_the_services_body_with_empty_cells_left_out(tmp_path: Path) -> None:
    _, (body,) = payloads(tmp_path, [person(123)])
    assert body == {
        "customer_system_id": "000123",
        "customer_system_id_type": "TestHRIS",
        "name": "Person 123",
        "system_email": "person123@acme.example",
        "country": "MY",
        "job_title": "Analyst",
        "job_start_date": "2020-01-31",
        "staff_type": "Payroll",
        "gender": "Female",
        "customer_data_type": [{"name": "Cost Center", "value": "CC-1"}],
    }


def test_values_are_normalised_to_what_the_service_expects(tmp_path: Path) -> None:
    rows = [
        person(1, Email="  Jane.DOE@Acme.Example ", Country="Malaysia", Gender="F", **{
            "Staff Type": "payroll", "Is Manager": "Yes", "Is Employee": "1", "Hire Date": "31/01/2020"}),
        person(2, Country="SGP", Gender="男", **{"Staff Type": "eor", "Is Manager": "否", "Hire Date": "2020年1月31日"}),
        person(3, Country="中国", Gender="male", **{"Is Manager": "n", "Hire Date": "31.01.2020"}),
        person(4, Country="united states", **{"Hire Date": "2020/1/31"}),
    ]
    _, bodies = payloads(tmp_path, rows)
    first, second, third, fourth = bodies
    assert first["system_email"] == "jane.doe@acme.example"
    assert (first["country"], second["country"], third["country"], fourth["country"]) == ("MY", "SG", "CN", "US")
    assert (first["gender"], second["gender"], third["gender"]) == ("Female", "Male", "Male")
    assert (first["staff_type"], second["staff_type"]) == ("Payroll", "EOR")
    assert first["is_manager"] is True and first["is_employee"] is True
    assert second["is_manager"] is False and third["is_manager"] is False
    assert {b["job_start_date"] for b in bodies} == {"2020-01-31"}


def test_the_date_order_decides_ambiguous_dates_only(tmp_path: Path) -> None:
    rows = [person(1, **{"Hire Date": "02/03/2020"}), person(2, **{"Hire Date": "13/03/2020"})]
    _, day_first = payloads(tmp_path, rows, date_order="day-first")
    assert [b["job_start_date"] for b in day_first] == ["2020-03-02", "2020-03-13"]
    rows = [person(1, **{"Hire Date": "02/03/2020"}), person(2, **{"Hire Date": "03/13/2020"})]
    _, month_first = payloads(tmp_path, rows, date_order="month-first")
    assert [b["job_start_date"] for b in month_first] == ["2020-02-03", "2020-03-13"]


def test_value_maps_joins_constants_and_defaults(tmp_path: Path) -> None:
    extra = """
[staff.values.staff_type]
"Full Time" = "Payroll"
"Contractor" = "EOR"

[staff.defaults]
location = "Head Office"
"""
    rows = [person(1, **{"Staff Type": "full  time"}), person(2, **{"Staff Type": "CONTRACTOR"})]
    _, bodies = payloads(tmp_path, rows, extra=extra)
    assert [b["staff_type"] for b in bodies] == ["Payroll", "EOR"]
    assert {b["location"] for b in bodies} == {"Head Office"}


def test_unmapped_columns_are_reported_as_ignored_or_packed_when_asked(tmp_path: Path) -> None:
    mapped, (body,) = payloads(tmp_path, [person(1)])
    assert mapped.ignored_columns == ["Shoe Size"]
    assert body["customer_data_type"] == [{"name": "Cost Center", "value": "CC-1"}]

    packed_cfg = tmp_path / "packed"
    packed_cfg.mkdir()
    text = (tmp_path / "staff.toml").read_text().replace(
        'customer_system_id_type = "TestHRIS"', 'customer_system_id_type = "TestHRIS"\npack_unmapped = true')
    (packed_cfg / "staff.toml").write_text(text)
    cfg = load_config(packed_cfg / "staff.toml")
    _, mapped, _, _ = prepare_staff(cfg, write_csv(packed_cfg / "staff.csv", [person(1)]))
    (body,) = build_payloads(mapped, [0])
    assert mapped.ignored_columns == []
    assert body["customer_data_type"] == [{"name": "Cost Center", "value": "CC-1"}, {"name": "Shoe Size", "value": "38"}]


def test_the_problem_column_of_a_fix_file_is_ignored_on_reimport(tmp_path: Path) -> None:
    header = [*HEADER, "Problem"]
    rows = [person(1, Problem="Row 2, column 'Email': 'x' is not an e-mail address")]
    mapped, (body,) = payloads(tmp_path, rows, header=header)
    assert mapped.ignored_columns == ["Shoe Size"]
    assert "Problem" not in str(body)


def test_an_intern_without_an_employee_flag_is_sent_as_not_an_employee(tmp_path: Path) -> None:
    _, (body,) = payloads(tmp_path, [person(1, **{"Is Intern": "yes"})])
    assert body["is_intern"] is True and body["is_employee"] is False


def test_leading_zeros_and_long_ids_survive(tmp_path: Path) -> None:
    _, bodies = payloads(tmp_path, [person(1, **{"Employee ID": "000042"}), person(2, **{"Employee ID": "12345678901234"})])
    assert [b["customer_system_id"] for b in bodies] == ["000042", "12345678901234"]


# ------------------------------------------------------------------------------- two columns, one field


def two_email_columns(tmp_path: Path) -> Path:
    """The staff config with a second column, 'Work Email', mapped to the e-mail after 'Email'."""
    config = write_config(tmp_path / "staff.toml")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('"Email" = "system_email"', '"Email" = "system_email"\n"Work Email" = "system_email"'),
                      encoding="utf-8")
    return config


def test_a_field_two_columns_fill_sends_the_first_and_warns_where_the_other_differs(
        tmp_path: Path, sandbox: Any) -> None:
    rows = [
        person(1, **{"Work Email": " PERSON1@Acme.Example"}),  # the same address once normalised: nothing to say
        person(2, **{"Work Email": "p.two@acme-group.example"}),  # another address: sent the first, and told
        person(3, Email="", **{"Work Email": "p.three@acme-group.example"}),  # only the second: sent, nothing to say
        person(4),
    ]
    data = write_csv(tmp_path / "staff.csv", rows, header=[*HEADER, "Work Email"])
    result = CliRunner().invoke(main, ["staff", "import", str(two_email_columns(tmp_path)), str(data),
                                       "--report-dir", str(tmp_path / "reports")],
                                env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url},
                                catch_exceptions=False)

    assert result.exit_code == 0, result.output  # a warning: every row imported
    assert "4 of 4 rows imported (1 with warnings)." in result.output
    stored = {s["customer_system_id"]: s["system_email"] for s in sandbox.staff(99)}
    assert stored == {"000001": "person1@acme.example", "000002": "person2@acme.example",
                      "000003": "p.three@acme-group.example", "000004": "person4@acme.example"}
    folder = max((tmp_path / "reports").glob("*/*/outcomes.jsonl")).parent
    lines = [json.loads(line) for line in (folder / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    assert [(r["row"], r["outcome"], [(p["code"], p["severity"], p["row"]) for p in r["problems"]])
            for r in lines] == [(2, "added", []), (3, "added", [("columns-disagree", "warning", 3)]),
                                (4, "added", []), (5, "added", [])]
    (warning,) = lines[1]["problems"]
    assert warning["message"] == (
        "Row 3: columns 'Email' and 'Work Email' both give system_email, with different values: "
        "'person2@acme.example' (from 'Email', the first in the config's order with a value) is the one used, "
        "'p.two@acme-group.example' (from 'Work Email') is not.")
    assert (warning["column"], warning["field"], warning["value"]) == ("Work Email", "system_email",
                                                                       "p.two@acme-group.example")
    assert f"Warning: {warning['message']}" in result.output
    assert "Columns disagree" in (folder / "report.html").read_text(encoding="utf-8")


def test_strict_checks_hold_back_a_row_whose_two_columns_for_one_field_disagree(tmp_path: Path,
                                                                                sandbox: Any) -> None:
    """A company that wants no row sent with a value chosen between two lists columns-disagree in [staff]
    strict_checks: that row is held back, saying both values and what to do; the others are sent as usual."""
    config = two_email_columns(tmp_path)
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[staff]\n", '[staff]\nstrict_checks = ["columns-disagree"]\n', 1), encoding="utf-8")
    rows = [person(1, **{"Work Email": " PERSON1@Acme.Example"}), person(2, **{"Work Email": "p.two@acme-group.example"})]
    data = write_csv(tmp_path / "staff.csv", rows, header=[*HEADER, "Work Email"])

    result = CliRunner().invoke(main, ["staff", "import", str(config), str(data), "--report-dir",
                                       str(tmp_path / "reports")],
                                env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url},
                                catch_exceptions=False)

    assert result.exit_code == 1, result.output
    assert [s["customer_system_id"] for s in sandbox.staff(99)] == ["000001"]
    assert ("Row 3: columns 'Email' and 'Work Email' both give system_email, with different values: "
            "'person2@acme.example' (from 'Email', the first in the config's order with a value) and "
            "'p.two@acme-group.example' (from 'Work Email'); not sent (strict_checks lists columns-disagree): make "
            "the two columns agree, or take columns-disagree out of strict_checks to send the first.") in result.output
    assert "Rows read: 2 = 1 added + 1 invalid" in result.output


def test_values_of_two_columns_are_compared_as_they_would_be_sent(tmp_path: Path) -> None:
    """Dates read in the column's order, countries made codes, the config's value map: equal once sent."""
    config = write_config(tmp_path / "staff.toml", extra='\n[staff.values.country]\n"Home" = "MY"\n')
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('"Country" = "country"', '"Country" = "country"\n"Nation" = "country"').replace(
        '"Hire Date" = "job_start_date"', '"Hire Date" = "job_start_date"\n"Start" = "job_start_date"'),
        encoding="utf-8")
    rows = [person(1, Country="Malaysia", Nation="home", Start="31/01/2020"),  # all the same once sent
            person(2, Nation="SG", Start="2020-02-01")]  # both differ
    _, mapped, problems, _ = prepare_staff(load_config(config),
                                           write_csv(tmp_path / "staff.csv", rows, header=[*HEADER, "Nation", "Start"]))
    assert problems == {}
    assert {pos: [(p.code, p.column, p.value) for p in found] for pos, found in mapped.warnings.items()} == {
        1: [("columns-disagree", "Nation", "SG"), ("columns-disagree", "Start", "2020-02-01")]}
    assert list(mapped.frame["country"]) == ["MY", "MY"]
    assert list(mapped.frame["job_start_date"]) == ["2020-01-31", "2020-01-31"]
