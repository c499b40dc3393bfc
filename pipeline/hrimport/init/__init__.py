"""``hrimport init``: a working, commented import config written from the export itself.

The file is read by the import's own reader (encoding, delimiter, header row below titles, sheet); each
header is matched against the synonym packs (``schemas/synonyms/*.toml``, ``match``), confirmed or
contradicted by its values (``evidence``), and the whole is decided (``plan``) and written as TOML
(``write``). ``init_config`` is the one call the command makes.

Example::

    result = init_config(Path("staff_2026-11.csv"), output=Path("staff.toml"))
    for column in result.plan.columns:
        print(column.column, column.target, column.how, column.examples)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hrimport.errors import InputFileError, UsageError
from hrimport.init.plan import ConfigPlan, guess_kind, plan_config
from hrimport.init.synonyms import Kind
from hrimport.init.write import write_config_text
from hrimport.outcomes import SourceInfo
from hrimport.private_files import replace_durably
from hrimport.reader import read_spreadsheet
from hrimport.reader.encoding import ENCODING_HINT
from hrimport.reader.grid import SHEET_HINT

__all__ = ["InitResult", "default_output", "init_config"]

INIT_ENCODING_HINT = ("run hrimport init again with --encoding and the one the export was saved in (such as "
                      "--encoding cp1252)")
INIT_SHEET_HINT = "run hrimport init again with --sheet and the name of the one to read"


@dataclass(frozen=True)
class InitResult:
    """What ``init`` read, decided and wrote."""

    source: SourceInfo
    plan: ConfigPlan
    text: str  # the config
    output: Path | None  # where it was written (None: not written)

    def as_json(self) -> dict[str, Any]:
        """The preview as JSON (``hrimport init --json``)."""
        return {
            "file": self.source.path,
            "kind": self.plan.kind,
            "config": str(self.output) if self.output else None,
            "sheet": self.source.sheet,
            "header_row": self.source.header_row,
            "header_rows": self.source.header_rows,
            "date_order": self.plan.date_order,
            "columns": [
                {"column": c.column, "role": c.role, "field": c.target, "how": c.how, "note": c.note,
                 "examples": list(c.examples), "hidden": c.hidden}
                for c in self.plan.columns
            ],
            "joins": {k: list(cols) for k, (cols, _) in self.plan.joins.items()},
            "todo": self.plan.todos,
            "missing": self.plan.missing,
            "totals_or_footer_rows": self.plan.summary_rows,
            # the rows the workbook hides (by a filter or Hide): sent with a hidden-row warning each
            "hidden_rows": self.plan.hidden_rows,
            # the other visible sheets holding the same table: the config names the sheet read (``sheet``)
            "same_table_sheets": self.source.same_table_sheets,
        }


def default_output(path: Path) -> Path:
    """Where the config goes without ``-o``: beside the export, same name, ``.toml``."""
    return path.with_suffix(".toml")


def init_config(
    path: str | Path,
    *,
    kind: Kind | None = None,
    sheet: str | None = None,
    encoding: str | None = None,
    output: Path | None = None,
    force: bool = False,
) -> InitResult:
    """Read ``path`` and write its import config to ``output`` (default: beside it, ``.toml``).

    ``kind`` staff or timeoff (default: time off when the headers name a leave type and a period).
    An existing ``output`` is never replaced without ``force``: ``UsageError`` (exit 2) says so before
    the export is read.
    """
    path = Path(path)
    output = output or default_output(path)
    if output.exists() and not force:
        raise UsageError(f"{output} already exists; give another name with -o, or add --force to replace it")
    if output.resolve() == path.resolve():
        raise UsageError(f"{output} is the export itself; give the config another name with -o")
    try:
        table = read_spreadsheet(path, sheet=sheet, encoding=encoding, other_sheets="tell")
    except InputFileError as exc:  # no config yet to set the encoding in: the option that does
        raise InputFileError(str(exc).replace(ENCODING_HINT, INIT_ENCODING_HINT)
                             .replace(SHEET_HINT, INIT_SHEET_HINT)) from None
    chosen: Kind = kind or guess_kind(table.info.headers)
    plan = plan_config(table, chosen, table.info.hidden_columns)
    # other sheets hold the same table: the sheet read is written, live, so that the config imports it and no
    # other without the refusal, and the choice shows (``same_table_setting`` names the others)
    written_sheet = table.info.sheet if table.info.same_table_sheets and sheet is None else sheet
    text = write_config_text(plan, table.info, sheet=written_sheet, encoding=encoding, job=output.stem)
    _write(output, text)
    return InitResult(table.info, plan, text, output)


def _write(output: Path, text: str) -> None:
    """Write the config whole or not at all (a temporary file, flushed to the disk and renamed over the target:
    ``replace_durably``). Not private: a config is the user's file, shared as they choose."""
    temporary = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        replace_durably(temporary, output)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UsageError(f"cannot write {output}: {exc.strerror}; choose another place with -o") from None
