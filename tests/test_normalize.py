"""Normalisers: each recognised value rewritten in canonical form, anything else left as written."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pandas as pd
import pycountry
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrimport.fields import Field, by_name, staff_fields, timeoff_fields
from hrimport.normalize import (
    normalize_boolean,
    normalize_country,
    normalize_date,
    normalize_email,
    normalize_enum,
    normalize_for_field,
    normalize_gender,
    normalize_number,
    trim,
)

STAFF = by_name(staff_fields())
TIMEOFF = by_name(timeoff_fields())


def one(normalizer: Callable[..., pd.Series], value: str, *args: object, **kwargs: object) -> str:
    """Normalise a single value."""
    return normalizer(pd.Series([value], dtype="str"), *args, **kwargs).iloc[0]


def test_trim_removes_surrounding_space_and_fills_missing() -> None:
    result = trim(pd.Series(["  Ann ", None, "\tBo\n"], dtype="str"))
    assert result.tolist() == ["Ann", "", "Bo"]
    assert str(result.dtype) == "str"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("payroll", "Payroll"),
        ("EOR", "EOR"),
        ("eor", "EOR"),
        ("  hro ", "HRO"),
        ("Full Time", "Full Time"),  # not a choice: a value map in the config is the way
        ("", ""),
    ],
)
def test_enum_in_canonical_case(value: str, expected: str) -> None:
    assert one(normalize_enum, value, STAFF["staff_type"]) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("fixed term", "Fixed-term"), ("FIXED_TERM", "Fixed-term"), ("indefinite", "Indefinite"), ("x", "x")],
)
def test_enum_variants(value: str, expected: str) -> None:
    assert one(normalize_enum, value, STAFF["ec_type"]) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", "true"),
        ("TRUE", "true"),
        ("Yes", "true"),
        ("y", "true"),
        ("1", "true"),
        ("是", "true"),
        ("false", "false"),
        ("FALSE", "false"),
        ("No", "false"),
        ("N", "false"),
        ("0", "false"),
        ("否", "false"),
        ("Ya", "true"),  # Malay / Indonesian
        ("Tidak", "false"),
        ("Ja", "true"),  # German
        ("Nein", "false"),
        ("Oui", "true"),  # French
        ("Non", "false"),
        ("Sí", "true"),  # Spanish, with and without the accent people often leave out
        ("Si", "true"),
        ("はい", "true"),
        ("ＹＥＳ", "true"),  # full-width letters
        (" yes ", "true"),
        ("maybe", "maybe"),
        ("2", "2"),
        ("", ""),
    ],
)
def test_boolean(value: str, expected: str) -> None:
    assert one(normalize_boolean, value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("M", "Male"),
        ("m", "Male"),
        ("male", "Male"),
        ("MALE", "Male"),
        ("男", "Male"),
        ("男性", "Male"),
        ("F", "Female"),
        ("female", "Female"),
        ("女", "Female"),
        ("女性", "Female"),
        ("Lelaki", "Male"),  # Malay
        ("Perempuan", "Female"),
        ("Laki-laki", "Male"),  # Indonesian
        ("Pria", "Male"),
        ("Wanita", "Female"),
        ("männlich", "Male"),  # German
        ("weiblich", "Female"),
        ("W", "Female"),
        ("Homme", "Male"),  # French
        ("Femme", "Female"),
        ("masculin", "Male"),
        ("féminin", "Female"),
        ("Hombre", "Male"),  # Spanish
        ("Mujer", "Female"),
        ("masculino", "Male"),
        ("femenino", "Female"),
        ("Other", "Other"),
        ("", ""),
    ],
)
def test_gender_synonyms(value: str, expected: str) -> None:
    assert one(normalize_gender, value) == expected
    assert one(normalize_for_field, value, STAFF["gender"], day_first=True) == expected


def test_h_and_m_in_one_column_may_be_spanish_hombre_mujer_so_neither_is_guessed() -> None:
    spanish = pd.Series(["H", "M", "Hombre", "Mujer"], dtype="str")
    assert normalize_gender(spanish).tolist() == ["H", "M", "Male", "Female"]
    assert normalize_gender(pd.Series(["H", "F"], dtype="str")).tolist() == ["Male", "Female"]
    assert normalize_gender(pd.Series(["M", "F"], dtype="str")).tolist() == ["Male", "Female"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("MY", "MY"),
        ("my", "MY"),
        ("MYS", "MY"),
        ("Malaysia", "MY"),
        ("malaysia", "MY"),
        ("马来西亚", "MY"),
        ("馬來西亞", "MY"),
        ("Singapore", "SG"),
        ("新加坡", "SG"),
        ("中国", "CN"),
        ("中國", "CN"),
        ("China", "CN"),
        ("People's Republic of China", "CN"),
        ("香港", "HK"),
        ("Hong Kong", "HK"),
        ("台湾", "TW"),
        ("臺灣", "TW"),
        ("Taiwan", "TW"),
        ("澳门", "MO"),
        ("美国", "US"),
        ("United States", "US"),
        ("United States of America", "US"),
        ("USA", "US"),
        ("英国", "GB"),
        ("United Kingdom", "GB"),
        ("UK", "GB"),
        ("日本", "JP"),
        ("韩国", "KR"),
        ("South Korea", "KR"),
        ("澳大利亚", "AU"),
        ("印度", "IN"),
        ("印度尼西亚", "ID"),
        ("泰国", "TH"),
        ("越南", "VN"),
        ("Vietnam", "VN"),
        ("Viet Nam", "VN"),
        ("菲律宾", "PH"),
        ("德国", "DE"),
        ("法国", "FR"),
        ("加拿大", "CA"),
        ("Türkiye", "TR"),
        ("Turkiye", "TR"),
        ("Czech Republic", "CZ"),
        ("NA", "NA"),  # Namibia, never "missing"
        ("Namibia", "NA"),
        ("Malasia", "MY"),  # Spanish
        ("Malaysai", "Malaysai"),  # misspelt: left for the validator to report, never guessed
        ("Mars", "Mars"),
        ("Áo", "AT"),  # Vietnamese for Austria: accents matter, never AO (Angola)
        ("A\u0301o", "AT"),  # the same written with a combining accent
        ("Bỉ", "BE"),  # Vietnamese for Belgium, never BI (Burundi)
        ("Ao", "AO"),  # Angola's code, in any case
        ("Nga", "Nga"),  # Vietnamese Russia or alpha-3 NGA (Nigeria): not certain, flagged by the mapper
        ("NGA", "NG"),  # written as an upper-case ISO code: that code
        ("Österreich", "AT"),
        ("Autriche", "AT"),
        ("Россия", "RU"),
        ("ロシア", "RU"),
        ("러시아", "RU"),
        ("รัสเซีย", "RU"),
        ("Rusia", "RU"),
        ("Rússia", "RU"),
        ("Ｍａｌａｙｓｉａ", "MY"),  # full-width letters
        ("Singapura", "SG"),
        ("Tiongkok", "CN"),  # Indonesian
        ("PRC", "CN"),
        ("Mainland China", "CN"),
        ("Hong Kong SAR", "HK"),
        ("Macao SAR", "MO"),
        ("KSA", "SA"),
        ("UAE", "AE"),
        ("Great Britain", "GB"),
        ("Republic of Korea", "KR"),
        ("대한민국", "KR"),
        ("Kosovo", "XK"),
        ("XK", "XK"),
        ("xk", "XK"),
        ("Côte d’Ivoire", "CI"),
        ("Côte d'Ivoire", "CI"),
        ("", ""),
    ],
)
def test_country_to_alpha_2(value: str, expected: str) -> None:
    assert one(normalize_country, value) == expected


@pytest.mark.parametrize(
    ("value", "day_first", "expected"),
    [
        ("2020-01-31", True, "2020-01-31"),
        ("2020-1-5", True, "2020-01-05"),
        ("2020-01-31 00:00:00", True, "2020-01-31"),
        ("2020-01-31T09:30:00", True, "2020-01-31"),
        ("2020-01-31T09:30:00+08:00", True, "2020-01-31"),
        ("2020-01-31 17:45", False, "2020-01-31"),
        ("31/01/2020", True, "2020-01-31"),
        ("01/31/2020", False, "2020-01-31"),
        ("02/01/2020", True, "2020-01-02"),
        ("02/01/2020", False, "2020-02-01"),
        ("13/01/2020", False, "13/01/2020"),  # not month-first: never swapped cell by cell
        ("01/13/2020", True, "01/13/2020"),
        ("31.01.2020", True, "2020-01-31"),
        ("31-01-2020", True, "2020-01-31"),
        ("2020/1/31", True, "2020-01-31"),
        ("2020.01.31", False, "2020-01-31"),
        ("2020年1月31日", True, "2020-01-31"),
        ("2020 年 01 月 31 日", True, "2020-01-31"),
        ("43861", True, "2020-01-31"),
        ("43861.5", True, "2020-01-31"),
        ("31 Jan 2020", True, "2020-01-31"),
        ("31-Jan-2020", True, "2020-01-31"),
        ("31 January 2020", False, "2020-01-31"),
        ("Jan 31, 2020", True, "2020-01-31"),
        ("January 31 2020", True, "2020-01-31"),
        ("Sept 1, 2020", True, "2020-09-01"),
        ("2021-02-30", True, "2021-02-30"),  # not a real date: left for the validator
        ("31/02/2021", True, "31/02/2021"),
        ("13/13/2020", True, "13/13/2020"),
        ("31 Foo 2020", True, "31 Foo 2020"),
        ("2020", True, "2020"),  # a year, not an Excel serial
        ("123", True, "123"),
        ("99999", True, "99999"),  # beyond 2099: not a plausible serial
        ("31/01/20", True, "31/01/20"),  # two-digit years are not guessed
        ("soon", True, "soon"),
        ("", True, ""),
    ],
)
def test_date(value: str, day_first: bool, expected: str) -> None:
    assert one(normalize_date, value, day_first) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(" Ann.Lim@Example.COM ", "ann.lim@example.com"), ("not-an-email", "not-an-email"), ("", "")],
)
def test_email(value: str, expected: str) -> None:
    assert one(normalize_email, value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3.50", "3.5"),
        ("2.0", "2"),
        ("2", "2"),
        ("0.5", "0.5"),
        (".5", "0.5"),
        ("007", "7"),
        ("100", "100"),
        ("-1.50", "-1.5"),
        ("0.0", "0"),
        ("1,5", "1.5"),  # a comma before one or two digits has no other reading (thousands come in threes)
        ("-0,25", "-0.25"),
        ("2,50", "2.5"),
        ("1,500", "1,500"),  # 1.5 or 1500: not guessed
        ("1,5,0", "1,5,0"),
        ("1.234,5", "1.234,5"),
        ("1e3", "1e3"),
        ("two", "two"),
        ("", ""),
    ],
)
def test_number(value: str, expected: str) -> None:
    assert one(normalize_number, value) == expected


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        (STAFF["name"], "  Ann  Lim ", "Ann  Lim"),
        (STAFF["job_start_date"], " 31/01/2020 ", "2020-01-31"),
        (STAFF["country"], " malaysia ", "MY"),
        (STAFF["system_email"], " A@B.COM ", "a@b.com"),
        (STAFF["is_manager"], " Y ", "true"),
        (STAFF["staff_type"], "payroll ", "Payroll"),
        (STAFF["gender"], " 女 ", "Female"),
        (STAFF["gender"], "female", "Female"),
        (TIMEOFF["total_days"], "3.50", "3.5"),
        (TIMEOFF["lang"], "zh", "ZH"),
        (TIMEOFF["leave_type"], " 年假 ", "年假"),
    ],
    ids=lambda v: getattr(v, "name", None),
)
def test_normalize_for_field_dispatches_on_kind(field: Field, value: str, expected: str) -> None:
    assert one(normalize_for_field, value, field, day_first=True) == expected


def test_the_result_is_a_new_text_series_with_the_same_index() -> None:
    s = pd.Series(["malaysia", "MY", None], index=[10, 11, 12], dtype="str", name="Country")
    result = normalize_country(s)
    assert result.tolist() == ["MY", "MY", ""]
    assert list(result.index) == [10, 11, 12]
    assert result.name == "Country"
    assert str(result.dtype) == "str"
    assert s.tolist()[:2] == ["malaysia", "MY"]  # the input is untouched


def test_a_large_column_is_normalised_per_distinct_value() -> None:
    s = pd.Series(["Malaysia", "中国", "SG", "Mars"] * 25_000, dtype="str")
    result = normalize_country(s)
    assert result.value_counts().to_dict() == {"MY": 25_000, "CN": 25_000, "SG": 25_000, "Mars": 25_000}


# --- properties -----------------------------------------------------------------------------------------

text_values = st.lists(st.text(max_size=12), max_size=20)
ALPHA_2 = sorted(c.alpha_2 for c in pycountry.countries)


@given(text_values, st.booleans())
def test_normalisers_are_idempotent(values: list[str], day_first: bool) -> None:
    s = pd.Series(values, dtype="str")
    for normalize in (
        trim,
        normalize_boolean,
        normalize_gender,
        normalize_country,
        normalize_email,
        normalize_number,
        lambda x: normalize_date(x, day_first),
        lambda x: normalize_enum(x, STAFF["staff_type"]),
    ):
        once = normalize(s)
        assert normalize(once).tolist() == once.tolist()


@given(st.lists(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2199, 12, 31)), max_size=20))
def test_iso_dates_pass_through_unchanged(dates: list[dt.date]) -> None:
    iso = [d.isoformat() for d in dates]
    assert normalize_date(pd.Series(iso, dtype="str"), day_first=True).tolist() == iso
    assert normalize_date(pd.Series(iso, dtype="str"), day_first=False).tolist() == iso


@given(st.dates(min_value=dt.date(1000, 1, 1), max_value=dt.date(9999, 12, 31)), st.booleans())
def test_every_numeric_form_of_a_date_reads_back(date: dt.date, day_first: bool) -> None:
    first, second = (date.day, date.month) if day_first else (date.month, date.day)
    forms = [f"{first:02d}/{second:02d}/{date.year}", f"{date.year}/{date.month}/{date.day}"]
    forms.append(f"{date.year}年{date.month}月{date.day}日")
    assert normalize_date(pd.Series(forms, dtype="str"), day_first).tolist() == [date.isoformat()] * 3


@given(st.lists(st.sampled_from(ALPHA_2), max_size=20))
def test_alpha_2_codes_pass_through_unchanged(codes: list[str]) -> None:
    assert normalize_country(pd.Series(codes, dtype="str")).tolist() == codes


@given(st.lists(st.sampled_from(["true", "false"]), max_size=10))
def test_canonical_booleans_pass_through_unchanged(values: list[str]) -> None:
    assert normalize_boolean(pd.Series(values, dtype="str")).tolist() == values
