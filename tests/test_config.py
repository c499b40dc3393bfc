"""An HR operations person writes an import config; mistakes are caught when it loads, with the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrimport.config import load_config
from hrimport.errors import ConfigError

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

TEMPLATE = """{top}
[staff]
customer_system_id_type = "BambooHR"
{staff}
[staff.columns]
"Employee #" = "customer_system_id"
"Name" = "name"
"Email" = "system_email"
"Country" = "country"
"Title" = "job_title"
"Hire Date" = "job_start_date"
{columns}
[staff.constants]
staff_type = "Payroll"
{tables}
"""
MINIMAL = TEMPLATE.format(top="", staff="", columns="", tables="")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "import.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("sample", sorted(SAMPLES.glob("*_staff.toml")), ids=lambda p: p.name)
def test_the_shipped_sample_configs_load(sample: Path) -> None:
    config = load_config(sample)
    assert config.staff is not None
    assert config.staff.constants["customer_system_id_type"]


def test_a_minimal_config_gets_sensible_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    assert config.service.token_env == "HRIMPORT_TOKEN"
    assert config.service.base_url is None
    assert config.source.date_order is None  # each date column decides; day-first when none can
    assert config.batch_size == 100
    assert config.report.job == "import"
    assert config.report.mask == ("passport_number",)
    assert config.staff is not None and config.staff.constants["staff_type"] == "Payroll"
    assert config.staff.email_check == "warn"  # our e-mail pattern doubts a row, never holds it back
    assert config.staff.strict_checks == frozenset()  # nor do our other doubts, unless the config says so


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ({"top": '[service]\ntoken = "abc"'}, "never put the token in a file"),
        ({"top": 'token = "abc"'}, "never put the token in a file"),
        ({"top": '[source]\ndate_order = "backwards"'}, 'date_order must be "day-first" or "month-first"'),
        ({"top": "[source]\nheader_row = 0"}, "header_row must be a row number"),
        ({"top": "[source]\nheader_row = true"}, "header_row must be a row number"),
        ({"top": "[source]\nsheet = true"}, "[source] sheet must be a sheet name or a 0-based position"),
        ({"top": '[service]\ncustomer_id = "ninety"'}, "customer_id must be a number"),
        ({"top": '[service]\nbase_ulr = "http://x"'}, "unknown key 'base_ulr' (did you mean base_url?)"),
        ({"columns": '"Dept" = "departmnet"'}, "'departmnet' is not a staff field"),
        ({"tables": '[staff.values.gendr]\n"M" = "Male"'}, "'gendr' is not a staff field (did you mean gender?)"),
        ({"staff": "batch_size = 0"}, "batch_size must be a whole number of at least 1"),
        ({"staff": 'join = { name = "First Name" }'}, "join.name: give a list of columns"),
        ({"tables": '[staff.join]\nname = { columns = ["Last", "First"], sep = ", " }'},
         "[staff] join.name: unknown key 'sep'; allowed: columns, separator"),
        ({"staff": "concurrency = 9"},
         "[staff] concurrency must be at most 4 (the connections the client keeps open), not 9"),
        ({"staff": "concurrency = 0"}, "concurrency must be a whole number of at least 1"),
        ({"staff": 'email_check = "off"'}, '[staff] email_check must be "warn" or "strict", not \'off\''),
        ({"top": '[timeoff]\nemail_check = "strict"'}, "unknown key 'email_check'"),
        ({"staff": 'strict_checks = "country-change-incomplete"'},
         ('[staff] strict_checks must be a list of problem codes, such as ["country-change-incomplete", '
          '"columns-disagree", "scientific-notation", "hidden-row", "hidden-column", "invisible-character"]')),
        ({"staff": 'strict_checks = ["missing-value"]'},
         ("[staff] strict_checks: 'missing-value' is not a check that can be made strict (one of "
          '"country-change-incomplete", "columns-disagree", "scientific-notation", "hidden-row", "hidden-column", "invisible-character")')),
        ({"staff": 'strict_checks = ["not-an-email"]'},
         '[staff] strict_checks: not-an-email has its own setting: email_check = "strict"'),
        ({"top": '[service]\ntimeout = "30s"'}, "[service] timeout must be the seconds one request may take"),
        ({"top": "[service]\ntimeout = 0"}, "a number above 0 and at most 600 (default 30), not 0"),
        ({"top": "[report]\nhtml_problem_limit = -1"}, "[report] html_problem_limit must be a whole number"),
        ({"top": "[report]\nhtml_problem_limit = true"}, "[report] html_problem_limit must be a whole number"),
        ({"top": '[report]\nhtml_row_limit = "all"'}, "[report] html_row_limit must be a whole number"),
    ],
)
def test_config_mistakes_are_one_clear_line(tmp_path: Path, parts: dict[str, str], message: str) -> None:
    text = TEMPLATE.format(**{"top": "", "staff": "", "columns": "", "tables": "", **parts})
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text))
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_required_field_without_a_source_is_named(tmp_path: Path) -> None:
    text = MINIMAL.replace('"Hire Date" = "job_start_date"\n', "")
    with pytest.raises(ConfigError, match="required field.*job_start_date.*no column"):
        load_config(write(tmp_path, text))


def test_missing_and_broken_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "[staff\n"))
    with pytest.raises(ConfigError, match=r"needs a \[staff\] or a \[timeoff\] section"):
        load_config(write(tmp_path, "[service]\ncustomer_id = 1\n"))


def test_report_folder_in_the_config_is_relative_to_the_config_file(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, '[report]\nfolder = "out"\n' + MINIMAL))
    assert config.report.folder == tmp_path / "out"
    assert config.state_dir == tmp_path / ".hrimport"
