"""Reading the TOML files people write (import configs, job files), with one-line errors that say the fix.

TOML is UTF-8, but Windows editors save "Unicode" as UTF-16 and often put a BOM before UTF-8: a file that
starts with a byte-order mark is read in the encoding the mark names, since the mark makes it certain. A
file without one must be UTF-8; anything else (UTF-16 without a mark, a Windows code page) is refused in
one line saying to save it as UTF-8, never guessed.
"""

from __future__ import annotations

import codecs
import difflib
import tomllib
from pathlib import Path
from typing import Any

from hrimport.errors import ConfigError


def read_toml(path: Path, kind: str) -> dict[str, Any]:
    """The parsed file; a missing, unreadable or invalid one is a ``ConfigError`` naming ``kind``."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_TOML_BYTES + 1)  # bounded: a path to /dev/zero must not fill the memory
    except FileNotFoundError:
        raise ConfigError(f"{kind} {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a folder; give the {kind} itself (a .toml file)") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {kind} {path}: {exc.strerror}") from None
    if len(data) > MAX_TOML_BYTES:
        raise ConfigError(f"{kind} {path} is over {MAX_TOML_BYTES // 1_000_000} MB: not a {kind}")
    try:
        return tomllib.loads(_decode(data, f"{kind} {path}"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{kind} {path} is not valid TOML: {exc}") from None


MAX_TOML_BYTES = 10_000_000

# longest first: the UTF-32 LE mark begins with the UTF-16 LE one
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)


def _decode(data: bytes, what: str) -> str:
    """The file's text: in its byte-order mark's encoding, else UTF-8; a ``ConfigError`` naming the fix."""
    for bom, encoding, name in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(encoding)
            except UnicodeDecodeError:
                raise ConfigError(f"{what} starts with a {name} byte-order mark but is not {name} text; save it "
                                  f"as UTF-8") from None
    if b"\x00" in data:
        raise ConfigError(f"{what} is not UTF-8 text (it holds NUL bytes: saved as UTF-16 without a byte-order "
                          f"mark?); save it as UTF-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); save it as "
                          f"UTF-8") from None


def reject_unknown_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    """A ``ConfigError`` for the first key not in ``allowed``, suggesting the closest allowed one."""
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(key, sorted(allowed), n=1)
            hint = f" (did you mean {close[0]}?)" if close else f"; allowed: {', '.join(sorted(allowed))}"
            raise ConfigError(f"{where}: unknown key {key!r}{hint}")
