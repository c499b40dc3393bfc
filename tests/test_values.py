"""Values normalised only where certain: countries, yes/no and gender words in many languages, formulas.

HR exports from many countries write Austria as ``Áo`` or ``Österreich``, yes as ``Ya`` or ``Oui``, women
as ``Perempuan`` or ``weiblich``. Each is sent as the platform's value only when its meaning is certain;
a name of two countries is a problem on its row, and so is a text a spreadsheet would run as a formula when
the config's ``formula_text = "reject"`` says so (``tests/test_formula_text.py`` has the default, a warning).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
import xlsxwriter
from babel import Locale
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from hrimport.cli import main
from hrimport.config import load_config
from hrimport.errors import ConfigError
from hrimport.fields import by_name, staff_fields
from hrimport.imports.staff import prepare_staff
from hrimport.normalize.countries import (
    alpha2_codes,
    cldr_names_from_babel,
    country_candidates,
    country_code,
    country_names,
    read_cldr_file,
    read_country_file,
)
from hrimport.normalize.formulas import formula_like_positions, is_formula_like, strip_formula
from hrimport.normalize.values import fold
from hrimport.normalize.words import read_value_words
from hrimport.sandbox.validation import normalise_country
from tests.staff_files import HEADER, person, write_config, write_csv

TOKEN = "demo-customer-99"
STAFF = by_name(staff_fields())

pytestmark = pytest.mark.usefixtures("instant_retries")


# --- the data: schemas/value_words.toml and schemas/countries.toml ------------------------------------------


def test_no_yes_no_or_gender_word_is_claimed_twice_with_different_meanings() -> None:
    meanings: dict[tuple[str, str], set[str]] = defaultdict(set)
    claimed_by: dict[tuple[str, str], list[str]] = defaultdict(list)
    for language, kinds in read_value_words().items():
        for kind, values in kinds.items():
            for value, words in values.items():
                for word in words:
                    meanings[kind, fold(word)].add(value)
                    claimed_by[kind, fold(word)].append(f"{language}={value}")
    conflicts = {key: claimed_by[key] for key, values in meanings.items() if len(values) > 1}
    assert conflicts == {}


def test_every_word_means_a_value_the_platform_accepts() -> None:
    accepted = {"boolean": {"true", "false"}, "gender": set(STAFF["gender"].choices)}
    for language, kinds in read_value_words().items():
        assert set(kinds) <= set(accepted), language
        for kind, values in kinds.items():
            assert set(values) <= accepted[kind], (language, kind)
            assert all(word.strip() and word == word.strip() for words in values.values() for word in words)


def test_the_words_the_issue_names_are_listed() -> None:
    words = read_value_words()
    malay_and_indonesian = {w for lang in ("ms", "id") for ws in words[lang]["boolean"].values() for w in ws}
    assert {"ya", "tidak"} <= malay_and_indonesian
    assert words["ms"]["gender"]["Male"][0] == "lelaki" and "laki-laki" in words["id"]["gender"]["Male"]
    assert words["de"]["gender"] == {"Male": ["männlich", "mann", "m"], "Female": ["weiblich", "frau", "w"]}
    assert "m" not in {w for ws in words["es"]["gender"].values() for w in ws}  # M = Mujer in Spanish


def test_every_country_in_the_data_file_is_a_real_code_and_every_language_is_cldrs() -> None:
    data = read_country_file()
    for language in data["cldr"]["languages"]:
        assert Locale.parse(language).territories, language
    for language, names in data["names"].items():
        assert set(names) <= alpha2_codes(), language
    assert set(data["iso_names"]) <= alpha2_codes()


def test_every_name_in_the_data_file_means_its_country_for_certain() -> None:
    data = read_country_file()
    tables = {"iso_names": data["iso_names"], **data["names"]}
    wrong = {
        (table, name): country_code(name)
        for table, names in tables.items()
        for code, spellings in names.items()
        for name in spellings
        if country_code(name) != code
    }
    assert wrong == {}


def test_the_shipped_cldr_names_are_what_babel_gives() -> None:
    shipped, installed = read_cldr_file(), cldr_names_from_babel()
    if installed["cldr_version"] != shipped["cldr_version"]:
        pytest.skip(f"Babel {installed['babel_version']} brings CLDR {installed['cldr_version']}, the shipped "
                    f"names are CLDR {shipped['cldr_version']}: run `make cldr` and review the names that change")
    assert shipped["names"] == installed["names"]
    assert list(shipped["names"]) == read_country_file()["cldr"]["languages"]


def test_a_cldr_name_means_its_own_country_or_is_known_to_be_ambiguous() -> None:
    names = country_names()
    cldr = read_cldr_file()["names"]
    for language in read_country_file()["cldr"]["languages"]:
        assert len(cldr[language]) > 240, language  # every country, not a stub
        for code, name in cldr[language].items():
            assert code in alpha2_codes(), (language, code)
            assert country_code(name) in (code, None), (language, code, name)
            assert country_code(name) == code or fold(name) in names.ambiguous, (language, code, name)


def test_the_names_that_mean_two_countries_are_known() -> None:
    # A new language or a new CLDR release that adds one shows up here, to be reviewed by a person.
    assert sorted(country_names().ambiguous) == ["congo", "kongo", "korea", "nga", "도미니카"]
    assert country_candidates("Nga") == "Russia (RU) or Nigeria (NG, ISO code NGA)"
    assert country_candidates("도미니카") == "Dominica (DM) or Dominican Republic (DO)"
    # an export's "Korea" is named as both, not "a country we do not recognise"
    assert country_candidates("Korea") == "North Korea (KP) or South Korea (KR)"


@pytest.mark.parametrize("written", ["Congo", "congo", "  CONGO ", "Congo  ", "Ｃｏｎｇｏ", "Kongo"])
def test_congo_alone_is_either_congo_and_never_guessed(written: str) -> None:
    # ISO's short name and Spanish say the Republic (CG); an English export may mean the Democratic Republic
    assert country_code(written) is None
    assert country_candidates(written) == "Congo - Kinshasa (CD) or Congo - Brazzaville (CG)"
    assert normalise_country(written) is None  # the sandbox takes codes only: it never reads a name either


def test_every_name_listed_as_ambiguous_names_real_countries_and_stays_ambiguous() -> None:
    for name, codes in read_country_file()["ambiguous"].items():
        assert len(codes) >= 2 and set(codes) <= alpha2_codes(), name
        assert country_code(name) is None, name
        assert set(country_names().ambiguous[fold(name)]) == set(codes), name


def test_cldr_groupings_and_regions_are_not_countries() -> None:
    for not_a_country in ("European Union", "United Nations", "Eurozone", "world", "Latin America",
                          "Outlying Oceania", "Pseudo-Accents"):
        assert country_code(not_a_country) is None, not_a_country
    assert country_code("Kosovo") == "XK"


# --- formula-like text -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "formula_like"),
    [
        ("=SUM(A1)", True),
        ('=HYPERLINK("http://x","y")', True),
        ("@SUM(A1)", True),
        ("@jane", True),
        ("+cmd|' /C calc'!A0", True),
        ("-2+3+cmd|' /C calc'!A0", True),
        ("-ABC", True),
        ("- none", True),
        ("=", True),
        ("+65 8123 4567", False),
        ("+1 (555) 123-4567", False),
        ("+44 (0)20 7946 0958", False),
        ("+1-555-123-4567 ext. 12", False),
        ("-3.5", False),
        ("+3.5", False),
        ("-1,234.50", False),
        ("-1e-10", False),
        ("-12%", False),
        ("-", False),
        ("--", False),
        ("+", False),
        ("Ann Lim", False),
        ("a=b", False),
        ("", False),
    ],
)
def test_what_a_spreadsheet_would_run_as_a_formula(value: str, formula_like: bool) -> None:
    assert is_formula_like(value) is formula_like


@pytest.mark.parametrize(
    ("value", "sent"),
    [("=SUM(A1)", "SUM(A1)"), ("@SUM(A1)", "SUM(A1)"), ("=-2+3", "2+3"), ("+-=cmd", "cmd"), ("= x", "x")],
)
def test_stripping_removes_every_leading_formula_character(value: str, sent: str) -> None:
    assert strip_formula(value) == sent
    assert not is_formula_like(sent)


formula_ish = st.text(alphabet=st.sampled_from("=+-@ \t0123456789().,/%eExt|!A"), max_size=12)


@given(st.lists(st.one_of(formula_ish, st.text(max_size=8)), max_size=30))
def test_the_fast_column_check_finds_exactly_the_formula_like_values(values: list[str]) -> None:
    expected = [(i, v) for i, v in enumerate(values) if is_formula_like(v)]
    assert list(formula_like_positions(pd.Series(values, dtype="str"))) == expected
    half = len(values) // 2  # a column read in pieces (the CSV reader's chunks), one piece sliced
    pieces = [pd.Series(values[:half], dtype="str"), pd.Series(["x", *values[half:]], dtype="str").iloc[1:]]
    assert list(formula_like_positions(pd.concat(pieces, ignore_index=True))) == expected


@given(st.one_of(formula_ish, st.text()))
def test_a_stripped_value_never_looks_like_a_formula(value: str) -> None:
    assert not is_formula_like(strip_formula(value))


def test_formula_text_other_than_warn_reject_or_strip_is_a_config_error(tmp_path: Path) -> None:
    config = values_config(tmp_path, formula_text="escape")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert str(caught.value) == ('staff.toml [source] formula_text must be "warn", "reject" or "strip", '
                                 "not 'escape'")
    result = hrimport("staff", "validate", str(config), str(write_csv(tmp_path / "staff.csv", [person(1)])))
    assert result.exit_code == 2
    assert result.output == "Error: " + str(caught.value) + "\n"


# --- through the CLI -------------------------------------------------------------------------------------

VALUES_HEADER = [*HEADER, "Phone", "Nationality"]


def values_config(tmp_path: Path, *, formula_text: str | None = None) -> Path:
    """The staff test config, with Phone and Nationality mapped and ``formula_text`` set when given."""
    path = write_config(tmp_path / "staff.toml")
    text = path.read_text(encoding="utf-8").replace(
        '"Move Date" = "new_country_effective_date"\n',
        '"Move Date" = "new_country_effective_date"\n"Phone" = "phone"\n"Nationality" = "nationality"\n',
    )
    if formula_text is not None:
        text = text.replace("[source]\n", f'[source]\nformula_text = "{formula_text}"\n', 1)
    path.write_text(text, encoding="utf-8")
    return path


def write_xlsx(path: Path, rows: list[dict[str, str]]) -> Path:
    """An .xlsx written by xlsxwriter, every cell a string cell (as HR systems export text)."""
    workbook = xlsxwriter.Workbook(str(path))
    sheet = workbook.add_worksheet("Staff")
    for col, name in enumerate(VALUES_HEADER):
        sheet.write_string(0, col, name)
    for r, row in enumerate(rows, start=1):
        for col, name in enumerate(VALUES_HEADER):
            if row.get(name):
                sheet.write_string(r, col, row[name])
    workbook.close()
    return path


def hrimport(*args: str, base_url: str = "") -> Result:
    env = {"HRIMPORT_TOKEN": TOKEN, "HRIMPORT_BASE_URL": base_url}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def import_file(tmp_path: Path, sandbox, config: Path, data: Path) -> tuple[Result, dict]:
    result = hrimport("staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)
    summary = json.loads(max((tmp_path / "reports").glob("*/*/summary.json")).read_text())
    return result, summary


def stored(sandbox) -> dict[str, dict]:
    return {s["customer_system_id"]: s for s in sandbox.staff(99)}


def test_countries_yes_no_and_gender_in_many_languages_reach_the_platform_as_its_values(tmp_path: Path,
                                                                                         sandbox) -> None:
    rows = [
        person(1, Country="Áo", Gender="Perempuan", Phone="+65 8123 4567", **{"Is Manager": "Ya"}),
        person(2, Country="Bỉ", Gender="Lelaki", Nationality="Singapura", **{"Is Manager": "Tidak"}),
        person(3, Country="Österreich", Gender="weiblich", Nationality="Russland", **{"Is Manager": "Ja"}),
        person(4, Country="Mainland China", Gender="Homme", Phone="+1 (555) 123-4567",
               **{"Is Manager": "Non"}),
        person(5, Country="Türkiye", Gender="Mujer", Nationality="ロシア", **{"Is Manager": "Sí"}),
        person(6, Country="KSA", Gender="Wanita", Nationality="NGA", Phone="-", **{"Is Manager": "Oui"}),
    ]
    path = tmp_path / "staff.csv"
    write_csv(path, rows, header=VALUES_HEADER)
    result, summary = import_file(tmp_path, sandbox, values_config(tmp_path), path)
    assert result.exit_code == 0, result.output
    assert summary["counts"]["added"] == 6 and summary["warnings"] == {}
    got = {
        sid: (s["country"], s.get("gender"), s.get("is_manager"), s.get("nationality"), s.get("phone"))
        for sid, s in stored(sandbox).items()
    }
    assert got == {
        "000001": ("AT", "Female", True, None, "+65 8123 4567"),
        "000002": ("BE", "Male", False, "SG", None),
        "000003": ("AT", "Female", True, "RU", None),
        "000004": ("CN", "Male", False, None, "+1 (555) 123-4567"),
        "000005": ("TR", "Female", True, "RU", None),
        "000006": ("SA", "Female", True, "NG", "-"),
    }


def test_an_xlsx_export_in_asian_languages_imports_the_same_codes(tmp_path: Path, sandbox) -> None:
    rows = [
        person(1, Country="대한민국", Gender="女性", Nationality="马来西亚", **{"Is Manager": "是"}),
        person(2, Country="ไทย", Gender="남성", Nationality="Việt Nam", **{"Is Manager": "いいえ"}),
        person(3, Country="Ｓｉｎｇａｐｏｒｅ", Gender="Pria", Nationality="Hong Kong SAR", **{"Is Manager": "否"}),
    ]
    data = write_xlsx(tmp_path / "staff.xlsx", rows)
    result, _ = import_file(tmp_path, sandbox, values_config(tmp_path), data)
    assert result.exit_code == 0, result.output
    got = {sid: (s["country"], s.get("gender"), s.get("is_manager"), s.get("nationality"))
           for sid, s in stored(sandbox).items()}
    assert got == {
        "000001": ("KR", "Female", True, "MY"),
        "000002": ("TH", "Male", False, "VN"),
        "000003": ("SG", "Male", False, "HK"),
    }


def test_a_name_of_two_countries_and_with_reject_formula_like_text_are_flagged_on_their_rows(
    tmp_path: Path
) -> None:
    rows = [
        person(1),
        person(2, Country="Nga"),
        person(3, Name='=HYPERLINK("http://evil.example","Click")'),
        person(4, Country="NGA"),
        person(5, **{"Cost Centre": "@cc"}),
        person(6, **{"Shoe Size": "=1+1"}),  # a column nothing is sent from: no reason to hold the row
        person(7, Country="Malaysai"),
    ]
    config = values_config(tmp_path, formula_text="reject")
    data = write_csv(tmp_path / "staff.csv", rows, header=VALUES_HEADER)
    result = hrimport("staff", "validate", str(config), str(data))
    assert result.exit_code == 1, result.output
    formula_fix = ("so it is not sent (formula_text = \"reject\"); remove the leading character, or set "
                   "formula_text in the config's [source] to \"warn\" to send it as written or \"strip\" to "
                   "send it without.")
    assert result.output.splitlines()[:4] == [
        ("Row 3, column 'Country': 'Nga' could be Russia (RU) or Nigeria (NG, ISO code NGA); "
         "write the two-letter ISO code."),
        "Row 4, column 'Name': '=HYPERLINK(\"http://evil.example\",\"Click\")' looks like a spreadsheet "
        "formula, " + formula_fix,
        "Row 6, column 'Cost Centre': '@cc' looks like a spreadsheet formula, " + formula_fix,
        ("Row 8, column 'Country': 'Malaysai' is not a country we recognise (use an ISO code such as SG, MY "
         "or CN, or the country's name in English or another common language, spelt in full)."),
    ]
    assert "3 of 7 rows checked; 4 need attention." in result.output

    _, mapped, problems, _ = prepare_staff(load_config(config), data)
    found = {mapped.row_numbers[pos]: [(p.code, p.column, p.field) for p in row_problems]
             for pos, row_problems in problems.items()}
    assert found == {
        3: [("ambiguous-country", "Country", "country")],  # not also unknown-country
        4: [("formula-like-text", "Name", "name")],
        6: [("formula-like-text", "Cost Centre", None)],
        8: [("unknown-country", "Country", "country")],
    }


def test_a_bare_congo_is_flagged_and_a_value_map_or_a_full_name_settles_it(tmp_path: Path, sandbox) -> None:
    rows = [person(1, Country="Congo"), person(2, Country="DR Congo"), person(3, Country="Republic of the Congo"),
            person(4, Country="congo ")]
    data = write_csv(tmp_path / "staff.csv", rows, header=VALUES_HEADER)
    config = values_config(tmp_path)
    result = hrimport("staff", "validate", str(config), str(data))
    assert result.exit_code == 1, result.output
    congo = ("could be Congo - Kinshasa (CD) or Congo - Brazzaville (CG); write the two-letter ISO code.")
    assert result.output.splitlines()[:2] == [f"Row 2, column 'Country': 'Congo' {congo}",
                                              f"Row 5, column 'Country': 'congo' {congo}"]

    # the company knows which Congo its people are in: one value map for the file
    config.write_text(config.read_text(encoding="utf-8") + '\n[staff.values.country]\n"Congo" = "CD"\n',
                      encoding="utf-8")
    result, summary = import_file(tmp_path, sandbox, config, data)
    assert result.exit_code == 0, result.output
    assert {sid: s["country"] for sid, s in stored(sandbox).items()} == {
        "000001": "CD", "000002": "CD", "000003": "CG", "000004": "CD"}
    read = {entry["kind"]: [(e["row"], e["read"], e["sent"]) for e in entry["examples"]]
            for entry in summary["values_read"] if entry["field"] == "country"}
    assert read["value-map"] == [(2, "Congo", "CD"), (5, "congo", "CD")]  # the report says who decided
    assert read["country-name"] == [(3, "DR Congo", "CD"), (4, "Republic of the Congo", "CG")]


# ISO 3166-1's English short names, as a Workday or SAP export writes them: iso-codes' comma form (what
# pycountry holds), ISO's own "(the)" form (its Online Browsing Platform) and names ISO has since replaced.
ISO_SHORT_NAMES = {
    "Korea, Republic of": "KR", "Korea (the Republic of)": "KR", "Iran, Islamic Republic of": "IR",
    "Congo, The Democratic Republic of the": "CD", "Congo (the Democratic Republic of the)": "CD",
    "Congo (the)": "CG", "Tanzania, United Republic of": "TZ", "Moldova (the Republic of)": "MD",
    "Taiwan, Province of China": "TW", "Taiwan (Province of China)": "TW", "Virgin Islands, British": "VG",
    "Virgin Islands (U.S.)": "VI", "Palestine, State of": "PS", "Bolivia, Plurinational State of": "BO",
    "Venezuela (Bolivarian Republic of)": "VE", "Micronesia, Federated States of": "FM",
    "Korea, Democratic People's Republic of": "KP", "Netherlands (Kingdom of the)": "NL",
    "United States of America (the)": "US", "Macedonia, the former Yugoslav Republic of": "MK",
    "Libyan Arab Jamahiriya": "LY",
}


def test_iso_short_names_in_either_of_isos_forms_are_read_as_their_codes_and_the_report_says_so(
    tmp_path: Path, sandbox
) -> None:
    rows = [person(n, Country=name) for n, name in enumerate(ISO_SHORT_NAMES, start=1)]
    data = write_xlsx(tmp_path / "workday.xlsx", rows)
    result, summary = import_file(tmp_path, sandbox, values_config(tmp_path), data)
    assert result.exit_code == 0, result.output
    assert {sid: s["country"] for sid, s in stored(sandbox).items()} == {
        f"{n:06d}": code for n, code in enumerate(ISO_SHORT_NAMES.values(), start=1)}
    [names] = [entry for entry in summary["values_read"] if entry["kind"] == "country-name"]
    assert (names["column"], names["rows"]) == ("Country", len(ISO_SHORT_NAMES))
    assert [(e["row"], e["read"], e["sent"]) for e in names["examples"]] == [
        (2, "Korea, Republic of", "KR"), (3, "Korea (the Republic of)", "KR"), (4, "Iran, Islamic Republic of", "IR")]
    [html] = (tmp_path / "reports").glob("*/*/report.html")
    assert "Korea (the Republic of) → KR" in html.read_text(encoding="utf-8")


def test_strip_sends_formula_like_text_without_its_leading_character_with_a_warning(tmp_path: Path,
                                                                                     sandbox) -> None:
    rows = [person(1, Title="=SUM(A1)"), person(2, Phone="+65 8123 4567", **{"Cost Centre": "-CC-7"})]
    data = write_xlsx(tmp_path / "staff.xlsx", rows)
    result, summary = import_file(tmp_path, sandbox, values_config(tmp_path, formula_text="strip"), data)
    assert result.exit_code == 0, result.output
    assert summary["counts"]["added"] == 2
    assert summary["warnings"] == {"formula-like-text-stripped": 2}
    assert ("Warning: Row 2, column 'Title': '=SUM(A1)' looks like a spreadsheet formula; read as 'SUM(A1)' "
            "(formula_text = \"strip\").") in result.output
    people = stored(sandbox)
    assert people["000001"]["job_title"] == "SUM(A1)"
    assert people["000002"]["phone"] == "+65 8123 4567"
    assert people["000002"]["customer_data_type"] == [{"name": "Cost Center", "value": "CC-7"}]
