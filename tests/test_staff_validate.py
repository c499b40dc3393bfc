"""HR checks an export before sending it: `hrimport staff validate` finds every problem of every row."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hrimport.cli import main
from hrimport.config import load_config
from hrimport.imports.staff import prepare_staff
from tests.staff_files import person, write_config, write_csv


def problems_for(tmp_path: Path, rows: list[dict[str, str]], **config: str) -> dict[int, list[str]]:
    """Excel row number -> problem codes, for a CSV of ``rows``."""
    cfg = load_config(write_config(tmp_path / "staff.toml", **config))  # type: ignore[arg-type]
    _, mapped, problems, _ = prepare_staff(cfg, write_csv(tmp_path / "staff.csv", rows))
    return {mapped.row_numbers[pos]: [p.code for p in found] for pos, found in problems.items()}


@pytest.mark.parametrize(
    ("changes", "codes"),
    [
        ({}, []),
        ({"Name": ""}, ["missing-value"]),
        ({"Country": "Singapure"}, ["unknown-country"]),  # misspelt ("Singapur" is German for Singapore)
        ({"Country": "ZZ"}, ["unknown-country"]),
        ({"Hire Date": "2021-02-30"}, ["not-a-date"]),
        ({"Hire Date": "30/02/2021"}, ["not-a-date"]),
        ({"Hire Date": "next monday"}, ["not-a-date"]),
        ({"Staff Type": "Temp"}, ["not-an-allowed-value"]),
        ({"Gender": "X"}, ["not-an-allowed-value"]),
        ({"Is Manager": "maybe"}, ["not-a-boolean"]),
        ({"Is Intern": "yes", "Is Manager": "yes"}, ["intern-with-other-role"]),
        ({"Is Intern": "yes", "Is Employee": "Y"}, ["intern-with-other-role"]),
        ({"Is Intern": "yes", "Is Employee": "no"}, []),
        ({"Old Country": "SG"}, ["country-change-incomplete"]),  # MY, moved from SG: the date is needed
        ({"Old Country": "MY"}, []),  # no change the file shows: a warning (tests/test_country_change.py)
        ({"Move Date": "2024-05-01"}, []),  # whether the country changes, the platform knows: a warning
        ({"Old Country": "SG", "Move Date": "2024-05-01"}, []),
        ({"Name": "", "Gender": "X", "Hire Date": "2020-13-01"}, ["missing-value", "not-an-allowed-value", "not-a-date"]),
    ],
)
def test_each_rule_flags_its_row(tmp_path: Path, changes: dict[str, str], codes: list[str]) -> None:
    found = problems_for(tmp_path, [person(1), person(2, **changes), person(3)])
    assert sorted(found.get(3, [])) == sorted(codes)
    assert 2 not in found and 4 not in found  # the rows around it are untouched


@pytest.mark.parametrize(
    ("email", "flaw"),
    [
        ("aisha.acme.example", "no @"),
        ("aisha@acme", "no dot after the @"),
        ("ann@intranet", "no dot after the @"),
        ("jane.doe@", "nothing after the @"),
        ("jane@@acme.example", "more than one @"),
        ("jane doe@acme.example", "a space in it"),
        ("jane@acme.example.", "a dot at the end"),
    ],
)
def test_an_email_not_shaped_like_name_at_example_com_is_a_warning_unless_the_config_is_strict(
    tmp_path: Path, email: str, flaw: str
) -> None:
    """The platform types e-mail fields as plain strings: our pattern may doubt a row, never hold it back,
    unless the config asks for it with ``[staff] email_check = "strict"``."""
    rows = [person(1), person(2, Email=email), person(3)]
    data = write_csv(tmp_path / "staff.csv", rows)
    where = f"Row 3, column 'Email': '{email}'"

    _, mapped, problems, _ = prepare_staff(load_config(write_config(tmp_path / "staff.toml")), data)
    assert problems == {}  # every row valid: sent
    (warning,) = mapped.warnings[1]
    assert (warning.code, warning.severity, warning.row, warning.column, warning.field, warning.value) == (
        "not-an-email", "warning", 3, "Email", "system_email", email)
    assert warning.message == f"{where} does not look like an e-mail address ({flaw}); kept as written."

    strict = load_config(write_config(tmp_path / "strict.toml", email_check="strict"))
    _, mapped, problems, _ = prepare_staff(strict, data)
    (error,) = problems[1]
    assert list(problems) == [1] and mapped.warnings == {}
    assert (error.code, error.severity, error.column, error.value) == ("not-an-email", "error", "Email", email)
    assert error.message == (f"{where} is not an e-mail address ({flaw}; expected name@example.com); "
                             'not sent (email_check = "strict").')


def test_the_same_external_id_twice_flags_every_occurrence(tmp_path: Path) -> None:
    rows = [person(1), person(2), person(1, Name="Someone Else"), person(3), person(1)]
    found = problems_for(tmp_path, rows)
    assert found == {2: ["duplicate-id"], 4: ["duplicate-id"], 6: ["duplicate-id"]}


def test_messages_name_the_row_the_column_the_value_and_what_is_expected(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path / "staff.toml"))
    rows = [person(n) for n in range(1, 13)] + [person(13, **{"Hire Date": "2021-02-30"})]
    _, _, problems, _ = prepare_staff(cfg, write_csv(tmp_path / "staff.csv", rows))
    (problem,) = problems[12]
    assert problem.message.startswith("Row 14, column 'Hire Date': '2021-02-30' is not a real date")
    assert (problem.row, problem.column, problem.field, problem.value) == (14, "Hire Date", "job_start_date",
                                                                         "2021-02-30")


def test_validate_command_prints_every_problem_and_warning_and_exits_1(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    data = write_csv(tmp_path / "staff.csv", [person(1), person(2, Email="bad"), person(3, Country="Atlantis")])
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.exit_code == 1, result.output
    assert "Row 4, column 'Country': 'Atlantis' is not a country we recognise" in result.output
    assert "Warning: Row 3, column 'Email': 'bad' does not look like an e-mail address (no @)" in result.output
    assert "2 of 3 rows checked (1 with warnings); 1 needs attention." in result.output
    assert "Rows read: 3 = 2 valid + 1 invalid" in result.output


@pytest.mark.parametrize(
    ("email_check", "exit_code", "verdict"),
    [(None, 0, "2 of 2 rows checked (1 with warnings)."), ("warn", 0, "2 of 2 rows checked (1 with warnings)."),
     ("strict", 1, "1 of 2 rows checked; 1 needs attention.")],
)
def test_an_email_warning_alone_exits_0_and_the_strict_check_makes_it_a_row_needing_attention(
    tmp_path: Path, email_check: str | None, exit_code: int, verdict: str
) -> None:
    config = write_config(tmp_path / "staff.toml", email_check=email_check)
    data = write_csv(tmp_path / "staff.csv", [person(1), person(2, Email="ann@intranet")])
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.exit_code == exit_code, result.output
    assert f"{verdict}\n" in result.output
    said = "Warning: Row 3, column 'Email': 'ann@intranet' does not look like" if exit_code == 0 else (
        "Row 3, column 'Email': 'ann@intranet' is not an e-mail address")
    assert said in result.output


def test_validate_command_exits_0_when_every_row_is_valid(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    data = write_csv(tmp_path / "staff.csv", [person(1), person(2)])
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.exit_code == 0, result.output
    assert "2 of 2 rows checked." in result.output


def test_a_mapped_column_missing_from_the_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    header = [h for h in person(1) if h != "Hire Date"]
    data = write_csv(tmp_path / "staff.csv", [person(1)], header=header)
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.exit_code == 2
    assert result.output.startswith("Error: staff.csv: column(s) 'Hire Date' named in the config are not in the file")
    assert result.output.count("\n") == 1


def test_an_email_is_checked_as_the_documented_pattern_reads_it_spaces_of_every_script_included() -> None:
    """The e-mail check runs in pyarrow's RE2 for speed; it must say what Python's reading of
    ``EMAIL_PATTERN`` says, for the spaces RE2's own ``\\s`` misses (a vertical tab, a no-break space, an
    ideographic space), for the invisible characters it leaves out (a zero-width space, a soft hyphen) and for
    letters of any script."""
    import re

    import pandas as pd

    from hrimport.validate import EMAIL_PATTERN, _is_email

    values = ["jane@acme.example", "jane@acme", "jane.acme.example", "jane@@acme.example", "jane doe@acme.example",
              "jane\x0bdoe@acme.example", "jane\u00a0doe@acme.example", "jane\u3000doe@acme.example",
              "jane@acme.example\n", "zoë@société.fr", "李@例子.中国", "jane@acme.example.", "@acme.example",
              "jane@acme.e\u2028x", "\u200bjane@acme.example", "jane@acme\u00ad.example", "jane@acme.example\ufeff",
              "\u202ajane@acme.example\u202c"]
    expected = [re.fullmatch(EMAIL_PATTERN, v) is not None for v in values]
    assert _is_email(pd.Series(values, dtype="str")).tolist() == expected
    assert expected == [True, False, False, False, False, False, False, False, False, True, True, False, False,
                        False, False, False, False, False]
