"""The synonym packs (schemas/synonyms/*.toml) are data a speaker of the language reviews: these checks keep
them sound, so adding a language or an HR system's headers is a data change."""

from __future__ import annotations

import pytest

from hrimport.fields import by_name, staff_fields, timeoff_fields
from hrimport.init.match import match_header
from hrimport.init.synonyms import (
    FIRST_PART,
    KINDS,
    LAST_PART,
    SETTING,
    Kind,
    header_key,
    pack_entries,
    read_packs,
)

LANGUAGES = {"en", "zh_hans", "zh_hant", "ja", "ko", "ms_id", "de", "fr", "es", "pt", "vi", "th"}
SETTINGS = {"half_day", "half_start", "half_end"}


def test_every_language_the_issue_names_has_a_pack() -> None:
    packs = read_packs()
    assert LANGUAGES <= set(packs)
    for stem, pack in packs.items():
        assert isinstance(pack.get("language"), str), stem
        assert pack.get("staff") and pack.get("timeoff"), f"{stem}.toml needs [staff] and [timeoff]"


@pytest.mark.parametrize("kind", KINDS)
def test_every_pack_names_only_real_fields(kind: Kind) -> None:
    fields = by_name(staff_fields() if kind == "staff" else timeoff_fields())
    settable = {name for name, f in fields.items() if not f.envelope and f.kind != "custom_data"}
    allowed = settable | ({FIRST_PART, LAST_PART} if kind == "staff" else {SETTING + s for s in SETTINGS})
    for stem, pack in read_packs().items():
        for target, header in pack_entries(pack, kind):
            assert target in allowed, f"{stem}.toml [{kind}] {target!r} ({header!r}) is not a {kind} field"


@pytest.mark.parametrize("kind", KINDS)
def test_no_header_is_claimed_by_two_fields_across_all_packs(kind: Kind) -> None:
    claimed: dict[str, tuple[str, str, str]] = {}
    clashes = []
    for stem, pack in read_packs().items():
        for target, header in pack_entries(pack, kind):
            key = header_key(header)
            assert key, f"{stem}.toml: {header!r} has no letters or digits"
            first = claimed.setdefault(key, (target, stem, header))
            if first[0] != target:
                clashes.append(f"{header!r} ({stem}: {target}) vs {first[2]!r} ({first[1]}: {first[0]})")
    assert not clashes, "\n".join(clashes)


@pytest.mark.parametrize(("header", "kind", "field", "how"), [
    ("EMPLOYEE-ID", "staff", "customer_system_id", "exact synonym"),
    ("employee_id", "staff", "customer_system_id", "exact synonym"),
    ("Ｅｍｐｌｏｙｅｅ　ＩＤ", "staff", "customer_system_id", "exact synonym"),  # full-width forms
    ("工号", "staff", "customer_system_id", "exact synonym"),
    ("社員番号", "staff", "customer_system_id", "exact synonym"),
    ("Personalnummer", "staff", "customer_system_id", "exact synonym"),
    ("No. Pekerja", "staff", "customer_system_id", "exact synonym"),
    ("入职日期", "staff", "job_start_date", "exact synonym"),
    ("入社日", "staff", "job_start_date", "exact synonym"),
    ("Eintrittsdatum", "staff", "job_start_date", "exact synonym"),
    ("Tarikh Mula", "staff", "job_start_date", "exact synonym"),
    ("Tarikh Mula", "timeoff", "start_date", "exact synonym"),
    ("Hire date (original)", "staff", "job_start_date", "token match"),
    ("Date Birth", "staff", "birthdate", "token match"),
    ("Work Email Address", "staff", "system_email", "exact synonym"),
    ("Email address (work)", "staff", "system_email", "token match"),
])
def test_headers_match_by_text_then_by_words(header: str, kind: Kind, field: str, how: str) -> None:
    found = match_header(header, kind)
    assert (found.target, found.how) == (field, how)


@pytest.mark.parametrize("header", ["Employee", "Shoe Size", "Manager Email", "Department", "部门"])
def test_a_header_no_pack_lists_is_never_guessed(header: str) -> None:
    assert match_header(header, "staff").target is None
