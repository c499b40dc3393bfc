"""Whether the file a step takes is a new export: what to say when it is the one imported last time
(``no_new_export``), the refusal of an export this step imported before its last import (``older_export``),
and that of a file older than the step's ``max_source_age_days`` (``too_old``).

A glob takes the newest matching file, so a month whose export never arrived takes last month's file:
either the one this step imported before (the same SHA-256) or one it never imported (such as a file that
failed to import). The age of a file this step imported is the time since that import, whatever its
modification time says: the import is the surer sign, since a copy or a sync that touches last month's file
again gives it a new modification time but cannot move the day it was imported. Any other file's age is
the time since it was last modified.

An export this step imported before its last one is refused whatever its age or modification time: a sync
that touches May's file after June's was imported makes it the newest again, and sending it would put May's
values back over June's for everyone changed in June, a change the drift guard only sees when it is large.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from hrimport.jobs.jobfile import JobStep
from hrimport.state.store import ImportedFile, Superseded

__all__ = ["describe_source", "no_new_export", "older_export", "too_old"]

_DAY_SECONDS = 86400


def describe_source(step: JobStep, source: Path) -> str:
    """``the newest file matching exports/staff_*.csv (staff_2024-05.csv)``, or the path of a step whose
    source is one file (``exports/staff.csv``), as the job file writes them."""
    if step.is_glob:
        return f"the newest file matching {step.source} ({source.name})"
    return step.source


def no_new_export(step: JobStep, source: Path, imported: ImportedFile) -> str:
    """What the step found when ``source`` holds the bytes it ``imported`` last time: ``the newest file
    matching exports/staff_*.csv (staff_2024-05.csv) is the one imported on 2024-06-01 06:15``."""
    what = describe_source(step, source)
    if imported.name == source.name:  # by name: the job's folder may have moved since
        return f"{what} is the one imported on {imported.shown_at}"
    # the same bytes under another name: a new file perhaps, but nothing in it that was not imported
    return f"{what} has the same content as {imported.name}, imported on {imported.shown_at}"


def older_export(step: JobStep, source: Path, superseded: Superseded) -> str:
    """The one line refusing ``source``, which holds an export this step imported before its last import:
    ``the newest file matching exports/staff_*.csv (staff_2024-05.csv) holds the export imported on 2024-05-01
    06:15, older than the last one imported (staff_2024-06.csv, on 2024-06-01 06:15); ...``."""
    imported, last = superseded.imported, superseded.last
    what = describe_source(step, source)
    named = f" as {imported.name}" if imported.name != source.name else ""
    # time off: the ledger never adds a record twice, but what the newer export corrected or left out of it
    harm = ("sending it would put its values back over the newer ones" if step.kind == "staff" else
            "sending it could add records that the newer one corrected or left out")
    return (f"{what} holds the export imported on {imported.shown_at}{named}, older than the last one imported "
            f"({last.name}, on {last.shown_at}); {harm}, so nothing was sent: {_take_it_away(step)} (if its "
            f"values are meant to go back, import it by hand first with hrimport {step.kind} import)")


def too_old(step: JobStep, source: Path, imported: ImportedFile | None, job_file: Path) -> str | None:
    """The one line refusing ``source`` when it is older than the step's ``max_source_age_days``, else None.

    ``imported`` is this step's last import when it was of these very bytes (else None): the file's age is
    then the time since that import, whatever its modification time says."""
    limit = step.max_source_age_days
    if limit is None:
        return None
    now = datetime.now().astimezone()
    imported_at = imported.when if imported is not None else None
    since = imported_at or datetime.fromtimestamp(source.stat().st_mtime).astimezone()
    days = (now - since).total_seconds() / _DAY_SECONDS
    if days <= limit:
        return None
    ago = f"{int(days):,} day{'s' if int(days) != 1 else ''} ago"
    what = describe_source(step, source)
    if imported_at is not None:
        found = f"{what} is the one imported on {_shown(since)}, {ago}"
        right_one = ""  # imported already: there is nothing to do with it
    else:
        found = f"{what} was modified on {_shown(since)}, {ago}"
        right_one = ", or raise max_source_age_days if this file is the right one"
    return (f"no new export: {found}, more than max_source_age_days = {limit} ({job_file.name}); nothing sent: "
            f"{_put_new_export(step)}{right_one}")


def _take_it_away(step: JobStep) -> str:
    """``remove it from exports/``: how the step stops taking a file it must not send (a step whose source is
    one file needs a new export there)."""
    if not step.is_glob:
        return _put_new_export(step)
    folder = Path(step.source).parent.as_posix()
    return f"remove it from {folder}/" if folder != "." else "remove it from the job file's folder"


def _put_new_export(step: JobStep) -> str:
    """``put the new export in exports/``: where the step's next file goes."""
    folder = Path(step.source).parent.as_posix()
    where = f"in {folder}/" if folder != "." else "beside the job file"
    if not step.is_glob:
        where = f"at {step.source}"
    return f"put the new export {where}"


def _shown(when: datetime) -> str:
    """``2024-06-01 06:15``: to the minute."""
    return when.strftime("%Y-%m-%d %H:%M")
