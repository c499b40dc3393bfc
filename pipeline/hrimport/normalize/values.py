"""What every normaliser shares: the folded key of synonym tables, and running a parser once per distinct value."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import numpy as np
import pandas as pd


def fold(value: str) -> str:
    """Case-folded, trimmed, inner spaces collapsed: the key of every synonym table.

    NFKC first, so full-width letters (``ＭＹ``) and decomposed accents match their usual form; accents are
    never dropped (``Áo``, Vietnamese for Austria, must not become ``AO``, Angola).
    """
    return " ".join(unicodedata.normalize("NFKC", value).split()).casefold()


def per_value(s: pd.Series, convert: Callable[[str], str | None]) -> pd.Series:
    """Apply ``convert`` once per distinct value; None (not recognised) keeps the value as it was."""
    s = s.fillna("")
    codes, uniques = pd.factorize(s)
    originals = [str(u) for u in uniques]
    converted = [convert(u) for u in originals]
    if all(new is None or new == old for new, old in zip(converted, originals)):
        return s.copy()
    table = np.array([old if new is None else new for new, old in zip(converted, originals)], dtype=object)
    return pd.Series(table[codes], index=s.index, name=s.name, dtype="str")
