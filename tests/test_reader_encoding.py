"""Exports in every encoding HR systems use: read as the exact text, or refused in one line naming it.

Test files are real names in each language (CLDR's territory names, shipped by Babel) encoded with Python's
codecs at several sizes. A single-byte file may be legitimately ambiguous (cp1250 and cp1252 both decode
any Latin text); then the refusal must name the right encoding, and with ``encoding`` set it reads exactly.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from pathlib import Path

import pytest
from babel import Locale
from click.testing import CliRunner

from hrimport.cli import main
from hrimport.errors import InputFileError
from hrimport.reader import read_spreadsheet
from tests.staff_files import HEADER, person, write_config, write_csv

#: (CLDR locale, encoding its exports are saved in), one per encoding the issue lists.
LANGUAGES = [
    ("fr", "cp1252"), ("de", "cp1252"), ("es", "cp1252"), ("pl", "cp1250"), ("cs", "cp1250"),
    ("hu", "cp1250"), ("ru", "cp1251"), ("uk", "cp1251"), ("el", "cp1253"), ("tr", "cp1254"),
    ("he", "cp1255"), ("ar", "cp1256"), ("lt", "cp1257"), ("vi", "cp1258"), ("th", "cp874"),
    ("de", "iso-8859-1"), ("fr", "iso-8859-15"), ("pl", "iso-8859-2"), ("ru", "iso-8859-5"),
    ("ar", "iso-8859-6"), ("el", "iso-8859-7"), ("he", "iso-8859-8"), ("tr", "iso-8859-9"),
    ("lv", "iso-8859-13"), ("ro", "iso-8859-16"), ("ru", "koi8-r"), ("uk", "koi8-u"),
    ("ja", "shift_jis"), ("ja", "cp932"), ("ja", "euc-jp"), ("ko", "euc-kr"), ("ko", "cp949"),
    ("zh_Hant", "big5"), ("zh_Hant", "big5hkscs"), ("zh_Hans", "gb18030"), ("zh_Hans", "gbk"),
]
SIZES = (3, 20, 200)

#: Files with enough evidence that they must be read without a hint (not refused).
READ_WITHOUT_HINT = {
    ("ja", "shift_jis", 20), ("ja", "cp932", 200), ("ja", "euc-jp", 20), ("ja", "euc-jp", 200),
    ("ko", "euc-kr", 20), ("ko", "cp949", 200), ("zh_Hant", "big5", 3), ("zh_Hant", "big5hkscs", 200),
    ("zh_Hans", "gb18030", 20), ("zh_Hans", "gbk", 200), ("ru", "cp1251", 20), ("uk", "cp1251", 200),
    ("ru", "koi8-r", 200), ("ar", "cp1256", 200), ("th", "cp874", 3), ("th", "cp874", 200),
    ("ru", "iso-8859-5", 200),
}


def territory_names(locale: str, count: int) -> list[str]:
    """``count`` real place names in ``locale``'s language (repeating the list if it is shorter)."""
    names = [name for code, name in sorted(Locale.parse(locale).territories.items())
             if len(code) == 2 and code.isalpha()]
    return [names[i % len(names)] for i in range(count)]


def export(path: Path, locale: str, encoding: str, rows: int) -> list[dict[str, str]]:
    """A CSV of ``rows`` ids and names written in ``encoding``; the records it holds."""
    records = []
    for i, name in enumerate(territory_names(locale, rows * 2)):
        try:
            name.encode(encoding)
        except UnicodeEncodeError:
            continue  # a name this code page cannot hold is not in its exports either
        records.append({"ID": f"{len(records) + 1:05d}", "Name": name})
        if len(records) == rows:
            break
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=["ID", "Name"])
    writer.writeheader()
    writer.writerows(records)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return records


def named_encodings(message: str) -> set[str]:
    """The codecs a refusal names (by Python's canonical codec name)."""
    found = set()
    for word in re.findall(r"[\w-]+", message.split("cannot tell", 1)[1]):
        try:
            found.add(codecs.lookup(word).name)
        except LookupError:
            continue
    return found


@pytest.mark.parametrize("rows", SIZES)
@pytest.mark.parametrize(("locale", "encoding"), LANGUAGES)
def test_every_encoding_is_read_exactly_or_refused_naming_it(
    tmp_path: Path, locale: str, encoding: str, rows: int
) -> None:
    path = tmp_path / "export.csv"
    records = export(path, locale, encoding, rows)
    try:
        table = read_spreadsheet(path)
    except InputFileError as err:
        assert (locale, encoding, rows) not in READ_WITHOUT_HINT, str(err)
        message = str(err)
        assert "\n" not in message and message.startswith(f"{path}: cannot tell which encoding")
        assert 'set encoding = "..." in the config\'s [source]' in message
        assert codecs.lookup(encoding).name in named_encodings(message), message
        table = read_spreadsheet(path, encoding=encoding)
        assert table.info.encoding == encoding
    else:
        # the name reported decodes the file to exactly the text written: it is the one to put in a config
        assert path.read_bytes().decode(table.info.encoding or "") == path.read_bytes().decode(encoding)
    assert table.frame.to_dict("records") == records


@pytest.mark.parametrize(
    ("locale", "encoding", "reported"),
    [("ja", "cp932", "cp932"), ("ja", "euc-jp", "euc-jp"), ("ko", "euc-kr", "cp949"), ("zh_Hans", "gbk", "gb18030")],
)
def test_japanese_and_korean_are_not_read_as_chinese(
    tmp_path: Path, locale: str, encoding: str, reported: str
) -> None:
    path = tmp_path / "export.csv"
    records = export(path, locale, encoding, 200)
    table = read_spreadsheet(path)
    assert table.info.encoding == reported
    assert table.frame.to_dict("records") == records


def test_a_few_chinese_names_in_big5_are_never_read_as_japanese_katakana(tmp_path: Path) -> None:
    # Found by the property test: each Big5 character's two bytes are two half-width katakana in cp932,
    # a reading the detector scores cleaner than Big5's own.
    path = tmp_path / "export.csv"
    path.write_bytes("ID,Name\r\n1,不丹 丹麥\r\n2,大洋洲 尼泊爾\r\n3,聖皮埃與密克隆群島\r\n".encode("big5hkscs"))
    with pytest.raises(InputFileError) as err:
        read_spreadsheet(path)
    message = str(err.value)
    assert "'不丹' in big5" in message and "'､｣､ｦ' in cp932" in message, message
    assert read_spreadsheet(path, encoding="big5hkscs").frame["Name"].tolist() == [
        "不丹 丹麥", "大洋洲 尼泊爾", "聖皮埃與密克隆群島"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32",
                                      "utf-32-le", "utf-32-be"])
def test_unicode_with_and_without_bom(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes("ID,Name\n1,Zoë Ångström\n2,王芳\n3,山田太郎\n4,김민준\n".encode(encoding))
    table = read_spreadsheet(path)
    assert table.info.encoding == encoding
    assert table.frame["Name"].tolist() == ["Zoë Ångström", "王芳", "山田太郎", "김민준"]
    assert table.row_problems == {}


# --- Through the CLI --------------------------------------------------------------------------------------


def validate(config: Path, data: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    return result.exit_code, result.output


def with_encoding(config: Path, encoding: str) -> Path:
    config.write_text(config.read_text(encoding="utf-8").replace(
        "[source]\n", f'[source]\nencoding = "{encoding}"\n', 1), encoding="utf-8")
    return config


def test_a_row_pasted_from_another_program_is_flagged_and_the_rest_read_as_utf8(tmp_path: Path) -> None:
    names = territory_names("zh_Hans", 20)
    data = tmp_path / "staff.csv"
    write_csv(data, [person(n, Name=name) for n, name in enumerate(names, start=1)])
    # row 8 (person 7) was pasted from a Windows program: its name is Windows-1252 bytes in a UTF-8 file
    data.write_bytes(data.read_bytes().replace(names[6].encode("utf-8"), "Zoë Müller".encode("cp1252")))
    code, output = validate(write_config(tmp_path / "staff.toml"), data)
    assert code == 1, output
    assert output.splitlines()[:4] == [
        ("Row 8, column 'Name': holds bytes that are not utf-8 text (shown as \ufffd: 'Zo\ufffd M\ufffdller'); "
         "retype the value in the HR system or the file."),
        f"Read: {data.name}: CSV, encoding utf-8, comma-delimited, header on row 1",
        "19 of 20 rows checked; 1 needs attention.",
        "Rows read: 20 = 19 valid + 1 invalid",
    ]


def test_legacy_bytes_that_form_utf8_by_accident_are_not_read_as_utf8(tmp_path: Path) -> None:
    # A Maltese export in ISO-8859-3: 'Fiġi' is not UTF-8 (0xF5), but 'Ġż' (0xD5 0xBF) is, as the Armenian
    # 'տ'. Read as "UTF-8 with one bad row", the Commonwealth of the Northern Mariana Islands was sent as
    # 'տejjer Mariana tat-Tramuntana' in two rows while only row 2 was flagged.
    rows = [person(1, Name="Fiġi"), person(2, Name="Ġżejjer Mariana tat-Tramuntana"),
            person(3, Name="Ġżejjer Mariana tat-Tramuntana")]
    data = write_csv(tmp_path / "staff.csv", rows, encoding="iso-8859-3")
    config = write_config(tmp_path / "staff.toml")
    code, output = validate(config, data)
    assert code == 2
    assert output.startswith(f"Error: {data}: cannot tell which encoding this text is in: it reads as 'Fiõi' "
                             "in cp1252 (Western European)")
    assert "iso-8859-3" in output and output.count("\n") == 1 and "\u057f" not in output

    code, output = validate(with_encoding(config, "iso-8859-3"), data)
    assert code == 0, output
    assert read_spreadsheet(data, encoding="iso-8859-3").frame["Name"].tolist() == [
        "Fiġi", "Ġżejjer Mariana tat-Tramuntana", "Ġżejjer Mariana tat-Tramuntana"]


#: Short Hebrew exports the random round-trip test made, which were read as Thai (cp874) with no word said:
#: ASCII words beside the names ('AAA^', 'vmo`') counted as "weird" in the Hebrew reading only, so the
#: detector scored the Thai reading of the same bytes (Thai digits, vowels and tone marks) cleaner.
SHORT_HEBREW = {
    "iso-8859-8": [["0", "", "", "אוגנדה אוגנדה אזור לא ידוע"], ["0", "", "", "דו-כיווני חלקי סרי לנקה AAA^"]],
    "cp1255": [["775", "סומליה שווייץ", "", "סן מרטן K"],
               ["26", "xN9JM/$\\ סיירה לאון", "1899-12-30 08:00:00 תוניסיה vmo`", "בנגלדש"]],
}


@pytest.mark.parametrize(("encoding", "word", "readings"), [
    ("iso-8859-8", "אוגנדה", ("'аевргд' in cp1251 (Cyrillic), 'ЮЕБПЦД' in koi8-r (Russian)/koi8-u or "
                              "'ΰεβπγδ' in cp1253 (Greek)/iso-8859-7")),
    ("cp1255", "סומליה", ("'ЯЕНЛИД' in koi8-r (Russian)/koi8-u, 'ρεξμιδ' in cp1253 (Greek)/iso-8859-7 or "
                          "'сеомйд' in cp1251 (Cyrillic)")),
], ids=["iso-8859-8", "cp1255"])
def test_a_short_hebrew_export_that_also_reads_as_thai_is_refused_in_one_line(
    tmp_path: Path, encoding: str, word: str, readings: str
) -> None:
    rows = SHORT_HEBREW[encoding]
    data = tmp_path / "export.csv"
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerows([["ID", "Name", "Note", "Code"], *rows])
    data.write_bytes(buffer.getvalue().encode(encoding))
    code, output = validate(write_config(tmp_path / "staff.toml"), data)
    assert (code, output) == (2, (
        f"Error: {data}: cannot tell which encoding this text is in: it reads as '{word}' in cp1255 (Hebrew)/"
        f"iso-8859-8, {readings} (also possible: cp874, iso-8859-11); set encoding = \"...\" in the config's "
        "[source] to the one the export was saved in\n"))
    assert read_spreadsheet(data, encoding=encoding).frame.values.tolist() == rows


#: A Thai and a Hebrew HR export: people's names, the city they work in, their job title.
THAI_STAFF = {
    "names": ["สมชาย ใจดี", "สมหญิง รักไทย", "วิชัย ศรีสุข", "ประเสริฐ วงศ์ใหญ่", "นภา แสงทอง", "กมล บุญมา",
              "สุดา พรหมมา", "อนุชา ทองคำ", "พิมพ์ชนก สุขสวัสดิ์", "ธนพล เจริญผล", "ศิริพร มณีวงศ์",
              "ณัฐวุฒิ ชัยมงคล"],
    "cities": ["กรุงเทพมหานคร", "เชียงใหม่", "ขอนแก่น", "ภูเก็ต", "นครราชสีมา", "หาดใหญ่", "ชลบุรี", "อุดรธานี"],
    "titles": ["ผู้จัดการฝ่ายบุคคล", "พนักงานบัญชี", "วิศวกรซอฟต์แวร์", "พนักงานขาย", "เจ้าหน้าที่ธุรการ",
               "นักวิเคราะห์การเงิน"],
}
HEBREW_STAFF = {
    "names": ["דוד כהן", "שרה לוי", "יוסף מזרחי", "רחל פרץ", "משה ביטון", "נועה אברהם", "אבי פרידמן",
              "מיכל שפירא", "יעקב דהן", "תמר אזולאי", "איתי גולדברג", "הילה כץ"],
    "cities": ["תל אביב-יפו", "ירושלים", "חיפה", "באר שבע", "נתניה", "ראשון לציון", "פתח תקווה", "אשדוד"],
    "titles": ["מנהלת משאבי אנוש", "רואה חשבון", "מהנדס תוכנה", "נציג מכירות", "מזכירה", "אנליסט פיננסי"],
}


def staff_export(path: Path, staff: dict[str, list[str]], rows: int, encoding: str) -> list[dict[str, str]]:
    """A staff CSV of ``rows`` people from ``staff``'s names, cities and titles, saved in ``encoding``."""
    people = [person(n, Name=staff["names"][n % 12], Title=staff["titles"][n % 6], City=staff["cities"][n % 8])
              for n in range(1, rows + 1)]
    write_csv(path, people, header=[*HEADER, "City"], encoding=encoding)
    return people


def imported(tmp_path: Path, sandbox, config: Path, data: Path) -> tuple[int, str, dict[str, tuple[str, str]]]:
    """``hrimport staff import`` into the sandbox: exit code, output, and each person's name and title stored."""
    result = CliRunner().invoke(
        main, ["staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports")],
        env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url},
    )
    stored = {s["customer_system_id"]: (s["name"], s["job_title"]) for s in sandbox.staff(99)}
    return result.exit_code, result.output, stored


@pytest.mark.parametrize("encoding", ["cp874", "iso-8859-11"])
@pytest.mark.parametrize("setting", [None, "cp874"])
def test_a_thai_export_of_20_rows_imports_its_exact_names_with_or_without_the_setting(
    tmp_path: Path, sandbox, encoding: str, setting: str | None
) -> None:
    data = tmp_path / "staff.csv"
    people = staff_export(data, THAI_STAFF, 24, encoding)
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    if setting:
        with_encoding(config, setting)
    code, output, stored = imported(tmp_path, sandbox, config, data)
    assert code == 0, output
    assert f"Read: {data.name}: CSV, encoding cp874, comma-delimited" in output
    assert stored == {p["Employee ID"]: (p["Name"], p["Title"]) for p in people}
    read = read_spreadsheet(data, encoding=setting)
    assert read.frame["City"].tolist() == [p["City"] for p in people]


@pytest.mark.parametrize("encoding", ["cp1255", "iso-8859-8"])
def test_a_hebrew_export_of_20_rows_asks_for_the_setting_once_then_imports_its_exact_names(
    tmp_path: Path, sandbox, encoding: str
) -> None:
    data = tmp_path / "staff.csv"
    people = staff_export(data, HEBREW_STAFF, 24, encoding)
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    code, output = validate(config, data)
    assert code == 2
    assert output.startswith(f"Error: {data}: cannot tell which encoding this text is in: it reads as 'שרה' in "
                             "cp1255 (Hebrew)/iso-8859-8, "), output
    assert "cp874" in output and output.count("\n") == 1, output

    code, output, stored = imported(tmp_path, sandbox, with_encoding(config, encoding), data)
    assert code == 0, output
    assert f"Read: {data.name}: CSV, encoding {encoding}, comma-delimited" in output
    assert stored == {p["Employee ID"]: (p["Name"], p["Title"]) for p in people}
    read = read_spreadsheet(data, encoding=encoding)
    assert read.frame["City"].tolist() == [p["City"] for p in people]


def test_an_ambiguous_code_page_is_refused_in_one_line_and_read_with_the_setting(tmp_path: Path, sandbox) -> None:
    rows = [person(1, Name="Hélène Dupont"), person(2, Name="François Müller"), person(3)]
    data = write_csv(tmp_path / "staff.csv", rows, encoding="cp1252")
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    code, output = validate(config, data)
    assert code == 2
    assert output == (
        f"Error: {data}: cannot tell which encoding this text is in: it reads as 'Hélène' in cp1252 (Western "
        "European)/cp1254/cp1258/iso-8859-1/iso-8859-15/iso-8859-9/iso-8859-16/iso-8859-3/iso-8859-14/cp1256, "
        "'Hélčne' in cp1250 (Central European)/iso-8859-2, 'Hélčne' in cp1257 (Baltic)/iso-8859-13 or "
        "'Hélčne' in iso-8859-4 (North European, Latin-4)/iso-8859-10 (also possible: cp1251, koi8-r, koi8-u, "
        "iso-8859-5, cp1253, iso-8859-7, gb18030, gbk); set encoding = \"...\" in the "
        "config's [source] to the one the export was saved in\n"
    )

    with_encoding(config, "cp1252")
    result = CliRunner().invoke(
        main, ["staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports")],
        env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url},
    )
    assert result.exit_code == 0, result.output
    assert {s["customer_system_id"]: s["name"] for s in sandbox.staff(99)} == {
        "000001": "Hélène Dupont", "000002": "François Müller", "000003": "Person 3"}
    summary = json.loads(next((tmp_path / "reports").glob("*/*/summary.json")).read_text(encoding="utf-8"))
    assert summary["source"]["encoding"] == "cp1252"


@pytest.mark.parametrize(("locale", "encoding", "reported"), [
    ("ja", "cp932", "cp932"), ("ko", "euc-kr", "cp949"), ("zh_Hans", "gb18030", "gb18030"),
    ("zh_Hant", "big5", "big5hkscs"), ("ru", "cp1251", "cp1251"),
])
def test_legacy_exports_import_the_exact_names(tmp_path: Path, sandbox, locale: str, encoding: str,
                                               reported: str) -> None:
    names = territory_names(locale, 40)
    names = [n for n in names if _encodable(n, encoding)][:20]
    data = write_csv(tmp_path / "staff.csv", [person(n, Name=name) for n, name in enumerate(names, start=1)],
                     encoding=encoding)
    result = CliRunner().invoke(
        main, ["staff", "import", str(write_config(tmp_path / "staff.toml")), str(data),
               "--report-dir", str(tmp_path / "reports")],
        env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url},
    )
    assert result.exit_code == 0, result.output
    assert reported in result.output.split("Read: ", 1)[1].splitlines()[0]
    stored = {s["customer_system_id"]: s["name"] for s in sandbox.staff(99)}
    assert stored == {f"{n:06d}": name for n, name in enumerate(names, start=1)}


def _encodable(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True
