"""Reading the TOML files people write (import configs, job files), with one-line errors that say the fix."""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any

from hrimport.errors import ConfigError


def read_toml(path: Path, kind: str) -> dict[str, Any]:
    """The parsed file; a missing, unreadable or invalid one is a ``ConfigError`` naming ``kind``."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{kind} {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a folder; give the {kind} itself (a .toml file)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{kind} {path} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {kind} {path}: {exc.strerror}") from None


def reject_unknown_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    """A ``ConfigError`` for the first key not in ``allowed``, suggesting the closest allowed one."""
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(key, sorted(allowed), n=1)
            hint = f" (did you mean {close[0]}?)" if close else f"; allowed: {', '.join(sorted(allowed))}"
            raise ConfigError(f"{where}: unknown key {key!r}{hint}")
