"""What every normaliser shares: the folded key of synonym tables, and running a parser once per distinct value."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import pandas as pd
import pyarrow as pa

#: Python's ``\s`` (what ``str.strip()`` removes) as the inside of an RE2 character class: RE2's own ``\s``
#: is ASCII without the vertical tab, so pyarrow's regexes list the rest.
RE2_SPACES = r"\s\x{0B}\p{Z}\x{1C}-\x{1F}\x{85}"


def fold(value: str) -> str:
    """Case-folded, trimmed, inner spaces collapsed: the key of every synonym table.

    NFKC first, so full-width letters (``ＭＹ``) and decomposed accents match their usual form; accents are
    never dropped (``Áo``, Vietnamese for Austria, must not become ``AO``, Angola).
    """
    return " ".join(unicodedata.normalize("NFKC", value).split()).casefold()


#: Distinct values a ``ValueMemo`` keeps: every date of a century fits, and a column of free text costs a few
#: MB at most (its values past the limit are converted again in each chunk, as without a memo).
MEMO_VALUES = 40_000

#: ``convert``'s answer per distinct value, kept from one chunk of a file to the next (issue 17): the same
#: dates, countries and yes/no words come back in every chunk, and need converting once.
ValueMemo = dict[str, str | None]


def per_value(s: pd.Series, convert: Callable[[str], str | None], memo: ValueMemo | None = None) -> pd.Series:
    """Apply ``convert`` once per distinct value; None (not recognised) keeps the value as it was. ``memo``:
    the answers for values met before (``convert`` must answer a value the same way wherever it is)."""
    s = s.fillna("")
    codes, uniques = pd.factorize(s)
    originals = [str(u) for u in uniques.tolist()]
    if memo is None:
        converted = [convert(u) for u in originals]
    else:
        converted = [memo[u] if u in memo else _remembered(memo, u, convert) for u in originals]
    if all(new is None or new == old for new, old in zip(converted, originals)):
        return s.copy()
    table = pa.array([old if new is None else new for new, old in zip(converted, originals)], type=pa.string())
    return pd.Series(table.take(pa.array(codes)), index=s.index, name=s.name, dtype="str")


def _remembered(memo: ValueMemo, value: str, convert: Callable[[str], str | None]) -> str | None:
    answer = convert(value)
    if len(memo) < MEMO_VALUES:
        memo[value] = answer
    return answer
