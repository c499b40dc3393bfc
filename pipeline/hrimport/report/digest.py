"""``RowsDigest``: what the report files need to know of all of a run's rows before writing any, gathered in one
walk of ``RunResult.rows``.

A report file lists rows in order, but some of what it shows first depends on every row: the detail columns
of the row lists, the counts per outcome and per problem, the source columns a masked field hides in, where
each row needing attention lands in ``to_fix``. ``write_report`` digests the rows once and hands the digest
to every writer, so each of them walks the rows once more, for its own lines only; rows may come from a
file rather than memory, where each walk is a read of the whole file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from hrimport.outcomes import SETTLED_OUTCOMES, SUCCESS_OUTCOMES, Outcome, RunResult


@dataclass
class RowsDigest:
    """What every report file needs of all the rows, before its first line (see ``digest_rows``)."""

    total: int  # rows read
    counts: dict[str, int]  # rows per outcome, every outcome listed, in ``Outcome`` order (``RunResult.counts``)
    imported: int  # rows imported, or found valid by a dry run
    skipped: int  # rows skipped as no record, as the config says (a totals row, a footer line): nothing to do
    verdict: str  # ``RunResult.verdict()``
    detail_keys: list[str]  # every detail key any row uses, in first-seen order
    # the row numbers of the rows needing attention, in their order: the rows ``to_fix`` holds
    attention_rows: list[int] = field(default_factory=list)
    # the (field, column) of every problem naming a column: where a masked field's values may hide
    problem_places: set[tuple[str | None, str]] = field(default_factory=set)
    # rows needing attention per problem code, warnings included (report.xlsx's Summary)
    attention_codes: dict[str, int] = field(default_factory=dict)
    # problems (warnings left out) of the rows needing attention, per code, and warnings of every row, per
    # code, each code in first-seen order (summary.json)
    problem_counts: Counter[str] = field(default_factory=Counter)
    warning_counts: Counter[str] = field(default_factory=Counter)

    @property
    def attention(self) -> int:
        """Rows needing attention: neither imported (or found valid) nor skipped as the config says."""
        return self.total - self.imported - self.skipped


def digest_rows(result: RunResult) -> RowsDigest:
    """Walk ``result.rows`` once and keep what the report files need of all of them."""
    counts: dict[Outcome, int] = {}
    keys: dict[str, None] = {}
    attention_rows: list[int] = []
    places: set[tuple[str | None, str]] = set()
    attention_codes: dict[str, int] = {}
    problem_counts: Counter[str] = Counter()
    warning_counts: Counter[str] = Counter()
    total = 0
    # this loop runs once per source row: plain dicts, no property look-ups, a key set copied only when it grows
    for row in result.rows:
        total += 1
        outcome = row.outcome
        counts[outcome] = counts.get(outcome, 0) + 1
        details = row.details
        if details and not details.keys() <= keys.keys():
            keys.update(dict.fromkeys(details))
        success = outcome in SETTLED_OUTCOMES  # nothing to do: imported, or skipped as the config says
        if not success:
            attention_rows.append(row.row)
        if row.problems:
            for p in row.problems:
                if p.column:
                    places.add((p.field, p.column))
                if p.is_warning:
                    warning_counts[p.code] += 1
                elif not success:
                    problem_counts[p.code] += 1
            if not success:
                for code in row.problem_codes:
                    attention_codes[code] = attention_codes.get(code, 0) + 1
    return RowsDigest(
        total=total,
        counts={o.value: counts.get(o, 0) for o in Outcome},
        imported=sum(n for o, n in counts.items() if o in SUCCESS_OUTCOMES),
        skipped=counts.get(Outcome.SKIPPED, 0),
        verdict=result.verdict(),
        detail_keys=list(keys),
        attention_rows=attention_rows,
        problem_places=places,
        attention_codes=attention_codes,
        problem_counts=problem_counts,
        warning_counts=warning_counts,
    )
