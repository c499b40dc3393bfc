"""Locate the project's data folders (schemas, templates, samples) installed or in a checkout.

A wheel carries them inside the package as ``hrimport/_data/<name>`` (see pyproject's force-include);
a source checkout or an editable install finds them at the repository's top level, beside the
``pipeline/`` folder that holds the package.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Return the folder ``schemas``, ``templates`` or ``samples``, wherever this copy keeps it."""
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"hrimport's {name!r} folder is missing from this installation")
