"""The encoding of a text file: found for certain, or a one-line refusal naming the likely ones.

Order of evidence, most certain first:

1. a BOM (UTF-8, UTF-16, UTF-32);
2. UTF-32 or UTF-16 without a BOM (NUL bytes where that encoding puts them, and the guess decodes);
3. strict UTF-8 over the whole file (other encodings rarely decode as UTF-8 by accident);
4. UTF-8 with a few invalid sequences among many valid multi-byte ones (one row pasted from another
   program): read as UTF-8 with U+FFFD where the bad bytes were, which flags those rows ``bad-encoding``;
   never re-read whole as a legacy code page. Not when a valid sequence makes a word of two scripts no
   language writes together (Maltese 'Ġż' in ISO-8859-3 is the Armenian 'տ' in UTF-8: 'տejjer'): those
   are a legacy file's bytes forming UTF-8 by accident, and the file goes on to step 5;
5. otherwise charset-normalizer over the distinct words holding non-ASCII bytes, from the whole file,
   limited to the encodings of ``schemas/encodings.toml``. Single-byte code pages tie there (cp1250, cp1252,
   cp1254... decode most Latin text with no "chaos"), so every candidate close to the best, and every
   member of its family, is decoded over the whole file (every known encoding when the evidence is a few
   characters or the best reading is itself messy): when they all give the same text it is read, and
   when they differ the file is refused with one line showing how a word reads in each. A refusal costs
   the user one setting; a wrong guess sends mojibake to payroll.
"""

from __future__ import annotations

import codecs
import itertools
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import charset_normalizer
from charset_normalizer.md import is_suspiciously_successive_range
from charset_normalizer.utils import unicode_range

from hrimport.errors import InputFileError
from hrimport.resources import data_dir

#: Where UTF-16/32 without a BOM is looked for.
SAMPLE_HEAD = 16 * 1024
#: The words holding non-ASCII bytes of at most this many bytes of the file's cells are the sample.
SAMPLE_CELLS = 128 * 1024
#: How much more "chaos" than the best candidate's a candidate may have and still be considered (at least).
CHAOS_MARGIN = 0.06
#: How many suspicious characters a rival must show more than the best reading to be ruled out.
SUSPICIOUS_CHARACTERS = 3
#: charset-normalizer drops candidates above this chaos; kept loose: the comparison decides.
CHAOS_THRESHOLD = 0.4
#: How each refusal of an uncertain encoding ends; ``hrimport init``, which has no config yet, says its option.
ENCODING_HINT = 'set encoding = "..." in the config\'s [source] to the one the export was saved in'

_HIGH_BYTE_LINE = re.compile(rb"[^\n]*[\x80-\xff][^\n]*\n?")
# A cell is only looked for where one starts (the look-behind): tried at every byte, a pattern starting
# with [^,;...]* scanned each long run of ASCII once per byte of it, and a 1 MB cell took minutes.
_HIGH_BYTE_CELL = re.compile(rb"(?<![^,;\t\r\n])[^,;\t\r\n]*[\x80-\xff][^,;\t\r\n]*")
# A word of a cell holding a non-ASCII byte, found from its start only (the look-behind), as above. ASCII
# whitespace is never part of a multi-byte character (their trail bytes are 0x40 and up, or GB18030's
# digits), so splitting there cuts none.
_HIGH_BYTE_WORD = re.compile(rb"(?<![^\s,;])[^\s,;]*[\x80-\xff][^\s,;]*")
# C0 controls other than tab and line ends, and the C1 controls: no export holds them as text, so a
# decoding that produces them (ISO-8859-x reading a Windows code page's quotes) is the wrong one.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_TOKEN = re.compile(rb"[^\s,;|\"]+")
# A word holding a non-ASCII character, found from its start only (the look-behind), as _HIGH_BYTE_CELL.
_NON_ASCII_WORD = re.compile(r"(?<!\S)\S*[^\x00-\x7f]\S*")
# Ranges that sit beside any script's letters: the Ukrainian apostrophe (U+02BC), combining accents.
_BESIDE_ANY_SCRIPT = {"Spacing Modifier Letters", "Combining Diacritical Marks"}
# Shift_JIS's one-byte characters (bytes A1-DF): the lead and trail bytes of Big5, GBK and EUC-KR text
_HALF_WIDTH_KANA = re.compile("[\uff61-\uff9f]")


@dataclass(frozen=True)
class KnownEncoding:
    """One legacy encoding the detector may choose: its config name, what it is for, its family."""

    name: str
    description: str
    family: str
    multibyte: bool = False


@cache
def known_encodings() -> tuple[KnownEncoding, ...]:
    """The legacy encodings of ``schemas/encodings.toml``, in the order they are preferred and named."""
    with open(data_dir("schemas") / "encodings.toml", "rb") as fh:
        return tuple(KnownEncoding(**entry) for entry in tomllib.load(fh)["encoding"])


@cache
def _by_codec() -> dict[str, KnownEncoding]:
    """Known encodings by Python codec name (charset-normalizer names them ``iso8859_2``, ``euc_kr``...)."""
    return {codecs.lookup(known.name).name: known for known in known_encodings()}


#: Byte-order marks: the mark, the name to write in a config (its codec reads the mark and drops it), and
#: the codec of the text after the mark. UTF-32 first: the UTF-32-LE mark starts with the UTF-16-LE one.
UNICODE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32", "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32", "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig", "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16", "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16", "utf-16-be"),
)


def unicode_bom(data: bytes) -> tuple[bytes, str, str] | None:
    """The entry of ``UNICODE_BOMS`` whose mark ``data`` starts with, if any."""
    return next((entry for entry in UNICODE_BOMS if data.startswith(entry[0])), None)


def decode_text(path: Path, data: bytes) -> tuple[str, str]:
    """The encoding of ``data`` (the name to write in a config) and its text; ``InputFileError`` if unsure."""
    if (bom := unicode_bom(data)) is not None:
        name = bom[1]
        return name, data.decode(name, errors="replace")
    wide = unicode_without_bom(data[:SAMPLE_HEAD])
    if wide is not None:
        return wide, data.decode(wide, errors="replace")
    try:
        return "utf-8", data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    text = _mostly_utf8(data)
    if text is not None:
        return "utf-8", text
    return _detect_legacy(path, data)


def unicode_without_bom(sample: bytes) -> str | None:
    """``utf-32-le/be`` or ``utf-16-le/be`` for text with NUL bytes where that encoding puts them.

    UTF-32 has a byte that is always NUL (code points stop at U+10FFFF); UTF-16 has NULs beside every
    ASCII character (digits, delimiters, line ends: plenty in any CSV), mostly in one lane of the two.
    The guess must also decode: a stray NUL in a UTF-8 file is not UTF-16.
    """
    if len(sample) < 4 or b"\x00" not in sample:
        return None
    for name, lane in (("utf-32-le", 3), ("utf-32-be", 0)):
        end = len(sample) - len(sample) % 4
        if sample[lane:end:4].count(0) == end // 4 and _decodes(sample[:end], name):
            return name
    end = len(sample) - len(sample) % 2
    odd, even = sample[1:end:2].count(0), sample[0:end:2].count(0)
    name = "utf-16-le" if odd > even else "utf-16-be"
    most, least = max(odd, even), min(odd, even)
    if most >= max(2, end // 40) and most >= 3 * least and _decodes(sample[:end], name):
        return name
    return None


def _decodes(sample: bytes, name: str) -> bool:
    """Whether ``sample`` (perhaps cut mid-character at its end) is text in ``name``."""
    try:
        codecs.getincrementaldecoder(name)().decode(sample, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _mostly_utf8(data: bytes) -> str | None:
    """The text when ``data`` is UTF-8 apart from a few bad sequences, else None.

    Legacy encodings form a valid multi-byte UTF-8 sequence only by accident and rarely, while nearly
    every non-ASCII line of theirs holds an invalid one. So: valid multi-byte characters at least twice
    the invalid sequences, and at least as many lines with only valid ones as lines with bad ones.
    """
    text = data.decode("utf-8", errors="replace")
    replaced = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")  # some U+FFFD may be in the file itself
    non_ascii = len(text) - (len(data) - len(data.translate(None, bytes(range(128)))))
    valid = non_ascii - text.count("\ufffd")
    if replaced < 1 or valid < 2 * replaced:
        return None
    # each line counted from its start (^): unanchored, the rest of a long line was scanned once per character
    bad_lines = len(re.findall("(?m)^[^\n]*\ufffd", text))
    clean_lines = len(re.findall("(?m)^[^\n]*[^\x00-\x7f]", text)) - bad_lines
    if clean_lines < bad_lines or _accidental_utf8(text):
        return None
    return text


def _accidental_utf8(text: str) -> bool:
    """Whether a word of ``text`` mixes two scripts no language writes in one word ('տejjer'): the valid
    UTF-8 then is a legacy file's bytes forming it by accident. The words of CLDR's names (places, languages,
    days, months) in every language pass, but for 31 in Abkhaz, Central Atlas Tamazight, Chuvash and
    Karakalpak (a Greek ε in a Latin word): a file of theirs with a bad row goes to the legacy detector."""
    seen: set[str] = set()
    examined = 0
    for match in _NON_ASCII_WORD.finditer(text):
        word = match.group()
        if word in seen or "\ufffd" in word:
            continue
        seen.add(word)
        if any(_scripts_clash(a, b) for a, b in itertools.pairwise(word)):
            return True
        examined += len(word)
        if examined >= SAMPLE_CELLS:
            break
    return False


def _scripts_clash(a: str, b: str) -> bool:
    """Whether letters ``a`` then ``b`` (not both ASCII) are of scripts never written together in a word."""
    if (a.isascii() and b.isascii()) or not (_is_letter(a) and _is_letter(b)):
        return False
    range_a, range_b = unicode_range(a), unicode_range(b)
    if range_a in _BESIDE_ANY_SCRIPT or range_b in _BESIDE_ANY_SCRIPT:
        return False
    return bool(is_suspiciously_successive_range(range_a, range_b))


def _is_letter(char: str) -> bool:
    return unicodedata.category(char)[0] in "LM"


def _sample(data: bytes) -> bytes:
    """The distinct words holding non-ASCII bytes of the cells that hold some, one per line.

    Cells are taken from anywhere in the file, up to a cap. ASCII text (ids, e-mail addresses, dates, an
    ASCII word beside a name) reads the same in every candidate encoding, so it says nothing about which
    is right, yet it moved the detector's measure of "chaos": the word 'AAA^' beside Hebrew names counted
    as a weird word in the Hebrew reading only (the Thai reading of the same bytes, its letters mostly
    Thai digits and marks, had too few words for the detector to count weird ones), and the file was read
    as Thai. Repeats are dropped as in ``_evidence``: a word on every row is one piece of evidence. Cells
    are cut at line ends, commas, semicolons and tabs, never at ``|``, which can be the second byte of a
    Big5 or Shift_JIS character.
    """
    words: dict[bytes, None] = {}
    scanned = 0
    for match in _HIGH_BYTE_CELL.finditer(data):
        cell = match.group()
        words.update(dict.fromkeys(_HIGH_BYTE_WORD.findall(cell)))
        scanned += len(cell) + 1
        if scanned >= SAMPLE_CELLS:
            break
    return b"\n".join(words)


@dataclass
class _Reading:
    """The encodings that decode the whole file to one same text."""

    names: list[str]
    text: str | None  # kept for the first reading only, to compare the others with (memory)


def _detect_legacy(path: Path, data: bytes) -> tuple[str, str]:
    """Detect a legacy encoding with charset-normalizer, checked against its close rivals."""
    sample = _sample(data)
    matches = charset_normalizer.from_bytes(
        sample,
        steps=max(5, len(sample) // 512),  # every chunk of the sample, not 5 spread chunks
        chunk_size=512,
        threshold=CHAOS_THRESHOLD,
        cp_isolation=list(_by_codec()),
    )
    by_codec = _by_codec()
    ranked = [m for m in matches if codecs.lookup(m.encoding).name in by_codec]
    if not ranked:
        raise InputFileError(
            f"{path}: cannot tell which encoding this text is in (not UTF-8, nor a code page hrimport "
            f"recognises); save it as UTF-8 CSV, or {ENCODING_HINT}"
        )
    leader = min(ranked, key=lambda m: m.chaos)
    best = leader.chaos
    # Chaos is a share of suspicious characters: over a few characters one more or less moves it a lot,
    # and when the best reading is itself messy the ranking says little. Then more rivals are compared.
    # The evidence is the fewest characters any ranked reading makes of the sample: a reading that splits
    # each two-byte character in two (Big5 Chinese as half-width Japanese katakana) must not look like
    # twice the evidence.
    evidence = min(_evidence(sample, m.encoding) for m in ranked)
    margin = max(CHAOS_MARGIN, SUSPICIOUS_CHARACTERS / max(evidence, 1), best)
    if best + margin >= CHAOS_THRESHOLD:
        # the window reaches past what the detector reports: the right one may be among those it dropped
        close = list(by_codec.values())
    else:
        close = [by_codec[codecs.lookup(m.encoding).name] for m in ranked if m.chaos <= best + margin]
    families = {known.family for known in close}
    if not by_codec[codecs.lookup(leader.encoding).name].multibyte or _HALF_WIDTH_KANA.search(
        sample.decode(leader.encoding, errors="replace")
    ):
        # A single-byte code page reads any bytes, so its reading of dense CJK text can look clean to the
        # detector (Chinese GBK read as Thai); so can Shift_JIS's one-byte half-width katakana (Big5 Chinese
        # read as ｦｳﾁ). Then every multi-byte encoding is a rival too; one that does not decode the whole
        # file (text in another encoding rarely does) drops out in _readings.
        families |= {known.family for known in known_encodings() if known.multibyte}
    candidates = [known for known in known_encodings() if known.family in families]
    # The detector's order, then the table's (the superset first within a family) names the readings.
    candidates.sort(key=lambda k: (_first_rank(k, ranked), known_encodings().index(k)))
    readings = _readings(data, candidates)
    if len(readings) == 1:
        name = min(readings[0].names, key=_table_index)
        return name, data.decode(name)
    if not readings:
        names = ", ".join(k.name for k in candidates)
        raise InputFileError(
            f"{path}: cannot tell which encoding this text is in (it looks like {names}, but none of them "
            f"reads the whole file); save it as UTF-8 CSV, or {ENCODING_HINT}"
        )
    raise InputFileError(_ambiguity(path, sample, readings))


def _evidence(sample: bytes, encoding: str) -> int:
    """Non-ASCII characters (not bytes) of the distinct words of ``sample`` read in ``encoding``: a word
    repeated on every row is one piece of evidence, not hundreds (a column of the same Hebrew word read as
    Thai looked certain)."""
    words = set(sample.decode(encoding, errors="replace").split())
    return sum(len(w) - len(w.encode("ascii", errors="ignore")) for w in words)


def _first_rank(known: KnownEncoding, ranked: list[charset_normalizer.CharsetMatch]) -> int:
    """Position of ``known``'s family's best match in the detector's ranking."""
    by_codec = _by_codec()
    for rank, match in enumerate(ranked):
        if by_codec[codecs.lookup(match.encoding).name].family == known.family:
            return rank
    return len(ranked)


def _table_index(name: str) -> int:
    return next(i for i, known in enumerate(known_encodings()) if known.name == name)


def _readings(data: bytes, candidates: list[KnownEncoding]) -> list[_Reading]:
    """Candidates that decode the whole file as text, grouped by the text they give."""
    readings: list[_Reading] = []
    hashes: list[int] = []
    for known in candidates:
        try:
            text = data.decode(known.name)
        except UnicodeDecodeError:
            continue
        if _CONTROL.search(text):
            continue
        digest = hash(text)
        for reading, seen in zip(readings, hashes):
            if seen == digest and (reading.text is None or reading.text == text):
                reading.names.append(known.name)
                break
        else:
            readings.append(_Reading([known.name], text if not readings else None))
            hashes.append(digest)
    return readings


#: A refusal shows how the word reads in this many encodings at most, then names the others.
SHOWN_READINGS = 4


def _ambiguity(path: Path, sample: bytes, readings: list[_Reading]) -> str:
    """One line: how a word of the file reads in the likeliest encodings, and the setting that decides."""
    descriptions = {known.name: known.description for known in known_encodings()}
    word = _telling_word(sample, [r.names[0] for r in readings])
    shown = []
    for i, reading in enumerate(readings[:SHOWN_READINGS]):
        first, *others = reading.names
        named = f"{first} ({descriptions[first]})" + "".join(f"/{n}" for n in others)
        shown.append(f"'{word[i]}' in {named}" if word else named)
    how = "reads as " if word else "reads differently in "
    listed = how + ", ".join(shown[:-1]) + " or " + shown[-1]
    rest = [name for reading in readings[SHOWN_READINGS:] for name in reading.names]
    if rest:
        listed += f" (also possible: {', '.join(rest[:8])}{', ...' if len(rest) > 8 else ''})"
    return (
        f"{path}: cannot tell which encoding this text is in: it {listed}; {ENCODING_HINT}"
    )


def _telling_word(sample: bytes, names: list[str]) -> list[str] | None:
    """A word of the file that reads differently in these encodings: its reading in each."""
    for line in _HIGH_BYTE_LINE.finditer(sample):
        for token in _TOKEN.finditer(line.group()):
            raw = token.group()
            if raw.isascii():
                continue
            try:
                shown = [raw.decode(name) for name in names]
            except UnicodeDecodeError:
                continue
            if len(set(shown)) > 1:
                return [s if len(s) <= 30 else s[:29] + "…" for s in shown]
    return None
