"""Leave imported before that an export no longer lists: cancelled, or moved, in the HR system.

A cumulative leave history (every leave, every month) or a month's leave lists each leave of the period it
covers. A leave cancelled in the HR system, or moved to days that overlap nothing imported before, is simply
not in the next export, while its record stays on the platform, whose interface can neither list nor remove
time off (spec: no such endpoint): payroll would count leave the person never took, and nothing would say so.
A moved leave whose new days overlap the old ones is named already, by the row's ``overlaps-imported`` warning.

So after a time-off import (and its dry run), the records the ledger holds as on the platform for the same
service and customer that the export does not list, although it covers them, are told: in a note, and one by
one in the report. A record is covered when

- its person has at least one row in the export (a leaver dropped from the export cancelled nothing), none
  of them held back before its leave could be read (that row may be the record's), and
- it starts between the earliest and the latest start of the export's leave, and ends between its earliest
  and latest end (a month's export does not cover last month's leave, even when it lists a long leave begun
  then: it would list such a record whether it lists the leave that starts, ends or is taken in its month).

A record is listed when a row of the export has its ledger key: the same person, leave type (its English
name: ``年假`` is ``Annual Leave``) and dates. Half days are not in the key: a leave whose half days changed is
listed (its row says ``changed-since-imported``), not gone. A to_fix file lists only the rows that needed
fixing, and an export of changes only (``[timeoff] export_holds = "changes"``) only what changed: neither is
compared. ``hrimport timeoff mark-cancelled`` marks the records HR cancelled on the platform, after which they
are no longer told (``Ledger.cancel``).

The comparison is one query over temporary tables of the ledger's connection (``ExportListing``): bounded
in time and memory by the ledger's records and the file's rows, never a query per record.
"""

from __future__ import annotations

from hrimport.outcomes import HELD_LISTED, GoneLeave
from hrimport.state.ledger import ExportListing
from hrimport.stores import SpooledList

__all__ = ["MARK_CANCELLED", "gone_leave", "gone_note"]

#: The command that marks records as cancelled on the platform, as the note names it.
MARK_CANCELLED = "hrimport timeoff mark-cancelled"


def gone_leave(listing: ExportListing) -> SpooledList[GoneLeave]:
    """The records of ``listing``'s ledger the export no longer lists although it covers them, by person and date
    (past the first few thousand, in a file)."""
    found: SpooledList[GoneLeave] = SpooledList(HELD_LISTED)
    for listed in listing.missing():
        e = listed.entry
        found.append(GoneLeave(e.key.external_id, listed.name, e.key.leave_type, e.key.start_date, e.key.end_date,
                               e.total_days, e.record_id, e.accepted_at, e.source_file, e.source_row))
    return found


def gone_note(count: int, config_name: str) -> str:
    """The run's note saying that ``count`` leave records imported before are no longer in the export."""
    records = "1 leave imported before is" if count == 1 else f"{count:,} leave records imported before are"
    them = "it" if count == 1 else "them"
    was = "it was" if count == 1 else "they were"
    covered = "its person and dates" if count == 1 else "their people and dates"
    return (f"{records} no longer in this export, which covers {covered}: cancel {them} on the platform if {was} "
            f"cancelled or moved in the HR system; {'it stays' if count == 1 else 'they stay'} there otherwise, and "
            f"payroll counts {them}. The report lists {'it' if count == 1 else 'each'} (No longer in the export); "
            f"once cancelled on the platform, run {MARK_CANCELLED} {config_name} RECORD_ID... so that {them} "
            f"{'is' if count == 1 else 'are'} no longer told.")
