"""Read after write: an HR person learns which values the platform stored otherwise than they were sent.

The platform answers every staff upsert with the record it stored. A platform that cuts long text or does
not keep a field accepts the row all the same; the import warns (``platform-altered``) and the row stays
imported. The sandbox's alterations (``/_admin/alterations``) make it store values the way such platforms
do, over real HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hrimport.cli import main
from hrimport.fields import staff_fields
from hrimport.sandbox.alterations import Alterations, droppable_fields
from hrimport.service.client import open_client
from hrimport.service.readback import altered_fields
from tests.report_samples import sheet_lines
from tests.staff_files import HEADER, person, write_config, write_csv
from tests.test_staff_import import SAMPLES, latest_run, outcomes_of, run_import, shipped_config

pytestmark = pytest.mark.usefixtures("instant_retries")

LONG_TITLE = "Senior Payroll and Benefits Specialist, Asia Pacific"


def config_with(tmp_path: Path, **columns: str) -> Path:
    """The staff tests' config, with more source columns mapped (column -> field)."""
    config = write_config(tmp_path / "staff.toml")
    more = "".join(f'"{column}" = "{name}"\n' for column, name in columns.items())
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[staff.custom_fields]\n", f"{more}\n[staff.custom_fields]\n"), encoding="utf-8")
    return config


def warnings_of(folder: Path) -> list[tuple[int, str, str]]:
    """(row, field, message) of every warning in the run's outcomes.jsonl."""
    lines = (folder / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    return [(p["row"], p["field"], p["message"]) for row in map(json.loads, lines) for p in row["problems"]
            if p["severity"] == "warning"]


def test_values_the_platform_cut_or_did_not_keep_are_warnings_and_the_rows_are_still_imported(
    tmp_path: Path, sandbox: Any
) -> None:
    sandbox.set_alterations(truncate_text=20, drop_fields=["highest_education"])
    config = config_with(tmp_path, Education="highest_education")
    rows = [person(1, Title=LONG_TITLE, Education="MSc Accounting"), person(2, Education=""), person(3)]
    data = write_csv(tmp_path / "staff.csv", rows, header=[*HEADER, "Education"])

    result, summary = run_import(tmp_path, sandbox, data, config=config)

    assert result.exit_code == 0, result.output
    assert "3 of 3 rows imported (1 with warnings)." in result.output
    assert summary["counts"]["added"] == 3 and summary["warnings"] == {"platform-altered": 2}
    folder = latest_run(tmp_path).parent
    assert outcomes_of(latest_run(tmp_path)) == {"000001": "added", "000002": "added", "000003": "added"}
    assert warnings_of(folder) == [
        (2, "highest_education", ("Row 2, column 'Education': the platform altered highest_education (not "
                                 "stored): sent 'MSc Accounting', stored nothing")),
        (2, "job_title", (f"Row 2, column 'Title': the platform altered job_title (cut to 20 characters): sent "
                         f"{LONG_TITLE!r}, stored 'Senior Payroll and B'")),
    ]
    assert "Warning: Row 2, column 'Title': the platform altered job_title" in result.output
    # what the warnings say is what the platform holds
    stored = {s["customer_system_id"]: s for s in sandbox.staff(99)}
    assert stored["000001"]["job_title"] == "Senior Payroll and B" and "highest_education" not in stored["000001"]

    # the report groups them under one explanation; report.xlsx lists each with its column and sent value
    html = (folder / "report.html").read_text(encoding="utf-8")
    warnings = html.split('<section id="warnings">')[1].split("</section>")[0]
    assert "Stored differently by the platform" in warnings and warnings.count('data-row="2"') == 2
    header, *lines = sheet_lines(folder / "report.xlsx", "Problems")
    found = {tuple(line[header.index(k)] for k in ("Row", "Column", "Value", "Code")) for line in lines}
    assert found == {(2, "Education", "MSc Accounting", "platform-altered"),
                     (2, "Title", LONG_TITLE, "platform-altered")}
    assert not (folder / "to_fix.csv").exists()  # nothing to fix in the file: every row was imported


def test_a_masked_field_the_platform_cut_is_named_without_its_value(tmp_path: Path, sandbox: Any) -> None:
    sandbox.set_alterations(truncate_text=5)  # passport_number is masked in reports by default
    config = config_with(tmp_path, Passport="passport_number")
    rows = [person(1, Name="Ann", Title="CFO", Passport="A12345678")]
    data = write_csv(tmp_path / "staff.csv", rows, header=[*HEADER, "Passport"])

    result, _summary = run_import(tmp_path, sandbox, data, config=config)

    assert result.exit_code == 0, result.output
    assert sandbox.staff(99)[0]["passport_number"] == "A1234"
    folder = latest_run(tmp_path).parent
    assert warnings_of(folder) == [
        (2, "passport_number", ("Row 2, column 'Passport': the platform altered passport_number (cut to 5 "
                               "characters): sent '•••••5678', stored '•••••'")),
    ]
    for text in (result.output, (folder / "report.html").read_text(encoding="utf-8"),
                 (folder / "summary.json").read_text(encoding="utf-8")):
        assert "A1234" not in text
    assert not any("A1234" in str(cell) for line in sheet_lines(folder / "report.xlsx", "Problems") for cell in line)


# Every field the output record echoes, filled the way exports write them: codes and enumerated values in
# any case, a variant spelling, dates, numbers with leading zeros, flags, e-mails in capitals; and a person
# with only the required fields, whose optional ones the platform answers as "" or null.
EVERY_FIELD = {
    "customer_system_id": "000777", "name": "Zoë Ångström-Nguyễn", "system_email": "Zoe.A@ACME.example",
    "country": "my", "job_title": "Payroll Lead", "job_start_date": "2020-01-31", "staff_type": "payroll",
    "is_manager": "Yes", "is_employee": "yes", "is_intern": "", "birthdate": "1990-03-14", "gender": "female",
    "highest_education": "MSc", "nationality": "Malaysia", "personal_email": "zoe@mail.example",
    "phone": "0123456789", "phone_country": "MY", "emergency_name": "Mei Ång", "emergency_email": "MEI@mail.example",
    "emergency_phone": "+60 12 000 1111", "emergency_phone_country": "my", "emergency_relationship": "Sister",
    "passport_number": "A12345678", "passport_issue_date": "2019-05-01", "passport_issuing_country": "MY",
    "passport_expiry_date": "2029-04-30", "reporting_officer": "Tan Wei Ming", "ec_type": "fixed term",
    "ec_entity_id": "0042", "ec_entity_system_id_type": "platform", "ec_start_date": "2020-01-31",
    "ec_end_date": "2026-01-30", "probation_end_date": "2020-07-31", "last_working_day": "2026-01-30",
    "offboarding_reason": "voluntary", "location": "Kuala Lumpur", "work_email": "zoe.work@acme.example",
}
REQUIRED_ONLY = {"customer_system_id": "000778", "name": "Bo", "system_email": "bo@acme.example",
                 "country": "SG", "job_title": "Clerk", "job_start_date": "2024-02-29", "staff_type": "EOR"}


def field_named_columns(tmp_path: Path, names: list[str]) -> Path:
    """The staff tests' config with each field read from a column of its own name."""
    config = write_config(tmp_path / "staff.toml")
    head = config.read_text(encoding="utf-8").split("[staff.columns]")[0]
    config.write_text(head + "[staff.columns]\n" + "".join(f'"{n}" = "{n}"\n' for n in names), encoding="utf-8")
    return config


def test_a_platform_that_stores_what_was_sent_never_warns_whatever_the_field(tmp_path: Path, sandbox: Any) -> None:
    names = [f.name for f in staff_fields() if f.name in EVERY_FIELD]
    data = write_csv(tmp_path / "staff.csv", [EVERY_FIELD, REQUIRED_ONLY], header=names)
    result, summary = run_import(tmp_path, sandbox, data, config=field_named_columns(tmp_path, names))
    assert result.exit_code == 0, result.output
    assert summary["counts"]["added"] == 2 and summary["warnings"] == {}
    stored = {s["customer_system_id"]: s for s in sandbox.staff(99)}
    assert stored["000777"]["ec_type"] == "Fixed-term" and stored["000777"]["phone"] == "0123456789"

    # an update (a move to Singapore, with the country change's fields) is compared the same way
    names += ["old_country", "new_country_effective_date"]
    moved = {**EVERY_FIELD, "country": "SG", "job_title": "Payroll Director", "old_country": "MY",
             "new_country_effective_date": "2025-01-01"}
    data = write_csv(tmp_path / "staff.csv", [moved, REQUIRED_ONLY], header=names)
    result, summary = run_import(tmp_path, sandbox, data, config=field_named_columns(tmp_path, names))
    assert result.exit_code == 0, result.output
    assert summary["counts"]["updated"] == 2 and summary["warnings"] == {}


def test_the_shipped_samples_import_without_a_false_alarm(tmp_path: Path, sandbox: Any) -> None:
    for config, data in (("bamboohr_staff.toml", "bamboohr_staff.csv"), ("workday_staff.toml", "workday_staff.xlsx")):
        _result, summary = run_import(tmp_path, sandbox, SAMPLES / data, config=shipped_config(tmp_path, config))
        assert summary["counts"]["added"] >= 5, summary["counts"]
        assert "platform-altered" not in summary["warnings"], data


def test_the_single_endpoint_s_answer_is_read_with_its_sample_spelling(sandbox: Any) -> None:
    # the single endpoint answers `passpost_issue_date` (the spec's published sample); the client reads it
    record = {**REQUIRED_ONLY, "customer_id": 99, "customer_system_id_type": "TestHRIS",
              "passport_issue_date": "2019-05-01"}
    with open_client(sandbox.base_url, "demo-customer-99") as client:
        answer = client.add_edit_staff(record)
        assert answer["message"] == "add successfully"
        assert altered_fields(record, answer["user"]) == []

        sandbox.set_alterations(drop_fields=["passport_issue_date"])
        user = client.add_edit_staff(record)["user"]
    assert [(a.field, a.sent, a.how) for a in altered_fields(record, user)] == [
        ("passport_issue_date", "2019-05-01", "dropped")]


@pytest.mark.parametrize(
    ("field", "sent", "stored", "how"),
    [
        # what the spec allows the platform to answer for the same value
        ("staff_type", "Payroll", "payroll", None),  # the single-endpoint reference writes enums in lower case
        ("ec_type", "Fixed-term", "Fixed Term", None),  # api-notes: the option set's spelling
        ("country", "MY", "my", None),
        ("job_start_date", "2020-01-31", "2020/01/31", None),  # api-notes: an example writes dates so
        ("customer_system_id", "000101", "000101", None),
        # what a platform does to a value it stores otherwise
        ("job_title", LONG_TITLE, LONG_TITLE[:40], "truncated"),
        ("system_email", "tan.weiming@acme.example", "Tan.WeiMing@acme.example", "case-changed"),
        ("highest_education", "MSc", "", "dropped"),
        ("last_working_day", "2026-01-30", None, "dropped"),
        ("phone", "0123456789", 123456789, "type-changed"),
        ("staff_type", "Payroll", "EOR", "changed"),
        ("job_start_date", "2020-01-31", "2020-01-30", "changed"),
        ("job_start_date", "2020-01-31", "20200131", "changed"),  # not a form the spec writes dates in
        ("gender", "Female", "Fem", "truncated"),
    ],
)
def test_what_counts_as_the_same_value(field: str, sent: str, stored: Any, how: str | None) -> None:
    found = altered_fields({field: sent}, {field: stored})
    assert [a.how for a in found] == ([how] if how else [])


def test_a_field_missing_from_the_answer_is_dropped_and_ec_entity_id_is_read_as_ec_entity() -> None:
    sent = {"ec_entity_id": "0042", "location": "Penang", "is_manager": True, "phone_country": "MY"}
    found = altered_fields(sent, {"ec_entity": "0042"})
    # the flags and phone_country have no key in the record: nothing to compare them with
    assert [(a.field, a.how) for a in found] == [("location", "dropped")]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("typical", {"truncate_text": 40, "drop_fields": ["highest_education"]}),
        ("truncate_text=20, drop-fields=location/phone", {"truncate_text": 20, "drop_fields": ["location", "phone"]}),
        ('{"drop_fields": ["work_email"]}', {"drop_fields": ["work_email"]}),
    ],
)
def test_alteration_spec_of_the_command_line(spec: str, expected: dict[str, Any]) -> None:
    assert Alterations.from_spec(spec).model_dump(exclude_defaults=True) == expected


@pytest.mark.parametrize(("spec", "message"), [
    ("truncate_text=0", "truncate_text: Input should be greater than or equal to 1"),
    ("drop_fields=name", "name: only optional staff fields of the output record may be dropped"),
    ("drop_fields=is_manager", "is_manager: only optional staff fields"),
    ("lowercase=1", "lowercase: Extra inputs are not permitted"),
    ("truncate_text", "alteration setting 'truncate_text' is not key=value"),
])
def test_a_bad_alteration_spec_says_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        Alterations.from_spec(spec)
    assert message in str(caught.value)


def test_alterations_survive_a_restart_and_are_cleared_over_http(sandbox: Any) -> None:
    sandbox.set_alterations(truncate_text=3)
    sandbox.restart()
    body = {"customer_id": 99, **REQUIRED_ONLY, "customer_system_id_type": "TestHRIS"}
    assert sandbox.http.post("/api/add_edit_staff", json=body, headers=sandbox.auth()).json()["user"]["name"] == "Bo"
    body["job_title"] = "Clerk II"
    assert sandbox.http.post("/api/add_edit_staff", json=body,
                             headers=sandbox.auth()).json()["user"]["job_title"] == "Cle"
    sandbox.clear_alterations()
    assert sandbox.http.post("/api/add_edit_staff", json=body,
                             headers=sandbox.auth()).json()["user"]["job_title"] == "Clerk II"
    assert sandbox.http.post(sandbox.root_url + "/_admin/alterations", json={"truncate_text": 0}).status_code == 422


def test_a_bad_alter_option_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["sandbox", "serve", "--db", str(tmp_path / "x.db"), "--alter", "drop_fields=name"])
    assert result.exit_code == 2
    assert result.output == ("Error: --alter 'drop_fields=name': drop_fields: name: only optional staff "
                             f"fields of the output record may be dropped ({', '.join(sorted(droppable_fields()))})\n")
