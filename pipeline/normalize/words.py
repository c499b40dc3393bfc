"""Yes/no and gender words rewritten as the platform's values; anything else left as written."""

from __future__ import annotations

import pandas as pd

from pipeline.normalize.values import fold, per_value

_TRUE = frozenset({"true", "yes", "y", "1", "是"})
_FALSE = frozenset({"false", "no", "n", "0", "否"})
_GENDER = {
    "m": "Male",
    "male": "Male",
    "man": "Male",
    "男": "Male",
    "男性": "Male",
    "f": "Female",
    "female": "Female",
    "woman": "Female",
    "女": "Female",
    "女性": "Female",
}


def normalize_boolean(s: pd.Series) -> pd.Series:
    """ "true"/"false" from true/false, yes/no, y/n, 1/0 and 是/否, in any case."""

    def convert(value: str) -> str | None:
        folded = fold(value)
        if folded in _TRUE:
            return "true"
        if folded in _FALSE:
            return "false"
        return None

    return per_value(s, convert)


def normalize_gender(s: pd.Series) -> pd.Series:
    """ "Male"/"Female" from M/F, male/female, man/woman, 男/女 and 男性/女性, in any case."""
    return per_value(s, lambda value: _GENDER.get(fold(value)))
