"""Yes/no and gender words rewritten as the platform's values; anything else left as written.

The words are data (``schemas/value_words.toml``, one table per language), read once. A word is listed in
several languages only with one meaning, so matching needs no language: ``Ya``, ``Oui``, ``是`` -> "true";
``Perempuan``, ``weiblich``, ``女`` -> "Female".
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

import pandas as pd

from hrimport.normalize.values import ValueMemo, fold, per_value
from hrimport.resources import data_dir

WORDS_FILE = "value_words.toml"


@dataclass(frozen=True)
class ValueWords:
    """Every listed word, folded, -> the value it means, for each kind of value."""

    boolean: dict[str, str]  # word -> "true" | "false"
    gender: dict[str, str]  # word -> "Male" | "Female"


def read_value_words() -> dict[str, dict[str, dict[str, list[str]]]]:
    """The tables as written: language -> kind (boolean, gender) -> value -> words."""
    with open(data_dir("schemas") / WORDS_FILE, "rb") as fh:
        return tomllib.load(fh)


@cache
def value_words() -> ValueWords:
    """The words of every language merged per kind (tests/test_values.py checks they never disagree)."""
    merged: dict[str, dict[str, str]] = {"boolean": {}, "gender": {}}
    for kinds in read_value_words().values():
        for kind, values in kinds.items():
            for value, words in values.items():
                for word in words:
                    merged[kind].setdefault(fold(word), value)
    return ValueWords(boolean=merged["boolean"], gender=merged["gender"])


def normalize_boolean(s: pd.Series, memo: ValueMemo | None = None) -> pd.Series:
    """ "true"/"false" from the yes/no words of every listed language (yes/no, 1/0, 是/否, Ya/Tidak, Ja/Nein,
    Oui/Non, Sí/No...), in any case."""
    words = value_words().boolean
    return per_value(s, lambda value: words.get(fold(value)), memo)


def normalize_gender(s: pd.Series, h_and_m: bool | None = None) -> pd.Series:
    """ "Male"/"Female" from the gender words of every listed language (M/F, 男/女, Lelaki/Perempuan,
    männlich/weiblich, Homme/Femme, Hombre/Mujer...), in any case.

    Spanish forms write Hombre/Mujer as H/M, so in a column holding both "H" and "M" the "M" may be Mujer:
    both letters are then left as written (the validator reports them, and a value map in the config
    settles them), which also keeps a second pass from reading the "M" differently. ``h_and_m``: whether
    the whole column holds both, when ``s`` is only part of it (a chunk); by default ``s`` decides.
    """
    words = value_words().gender
    if h_and_m is None:
        h_and_m = gender_letters(s) == H_AND_M
    uncertain = H_AND_M if h_and_m else frozenset()

    def convert(value: str) -> str | None:
        key = fold(value)
        return None if key in uncertain else words.get(key)

    return per_value(s, convert)


#: The two letters a Spanish form writes for Hombre and Mujer, folded: "M" is Male anywhere else.
H_AND_M = frozenset({"h", "m"})


def gender_letters(s: pd.Series) -> frozenset[str]:
    """Which of the letters H and M (any case, any spaces) the values hold."""
    return H_AND_M & {fold(str(v)) for v in s.dropna().unique()}
