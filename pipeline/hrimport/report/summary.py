"""``summary.json``: the run in numbers, for monitoring scripts (issue 4)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hrimport.outcomes import RunResult
from hrimport.private_files import written_whole
from hrimport.provenance import without_masked
from hrimport.report.digest import RowsDigest, digest_rows
from hrimport.report.view import shown_host
from hrimport.service.urls import EMBEDDED_SANDBOX, describe_target

SUMMARY_VERSION = 1


def summary_data(
    result: RunResult, *, files: dict[str, str] | None = None, digest: RowsDigest | None = None
) -> dict[str, Any]:
    """The summary as a JSON-ready dict: counts, exit status, verdict, file facts, timings."""
    info, src = result.info, result.info.source
    digest = digest or digest_rows(result)
    return {
        "summary_version": SUMMARY_VERSION,
        "job": info.job,
        "kind": info.kind,
        "dry_run": info.dry_run,
        "verdict": digest.verdict,
        "exit_code": result.exit_code,
        "rows_read": digest.total,
        "imported": digest.imported,
        "skipped": digest.skipped,
        "need_attention": digest.attention,
        "counts": digest.counts,
        "problems": dict(digest.problem_counts.most_common()),
        "warnings": dict(digest.warning_counts.most_common()),
        "source": {
            "name": src.name,
            "path": src.path,
            "format": src.format,
            "sheet": src.sheet,
            "size": src.size,
            "sha256": src.sha256,
            "encoding": src.encoding,
            "delimiter": src.delimiter,
            "header_row": src.header_row,
            "header_rows": src.header_rows,
            "rows_read": src.rows_read,
        },
        # where the rows went: "embedded-sandbox", "sandbox at URL" or "service at URL" (issue 13)
        "target": describe_target(info.service_url) or None,
        "service_host": EMBEDDED_SANDBOX if info.service_url == EMBEDDED_SANDBOX else shown_host(info.service_url),
        "customer_id": info.customer_id,
        "started_at": info.started_at,
        "finished_at": info.finished_at,
        "duration_s": info.duration_s,
        "timings": info.timings,
        "tool_version": info.tool_version,
        "ignored_columns": info.ignored_columns,
        "notes": info.notes,
        # time off: leave imported before that this export no longer lists (each in report.html and report.xlsx)
        "no_longer_in_export": info.no_longer_in_export,
        # the runs stopped before their report whose rows this run tells as they were added or updated (each its
        # journal, start and counts), where they would read unchanged (staff) or already imported (time off); a
        # dry run's would be told
        "stopped_runs": info.stopped_runs,
        "plan": _plan_figures(info.plan),
        # how the values were read: per column, each kind of change with its rule, rows and examples
        "values_read": [asdict(c) for c in without_masked(info.values_read, info.mask_fields)],
        "files": files or {},
    }


def _plan_figures(plan: dict[str, Any] | None) -> dict[str, Any] | None:
    """The plan's figures for monitoring: counts, people per changed field, each highlight's count; not its
    examples, which name people and their changes (the report and ``hrimport staff plan`` show those)."""
    if plan is None:
        return None
    return {
        "first_run": plan["first_run"],
        "partial": plan["partial"],
        "accepted_before": plan["accepted_before"],
        "unchanged_sent": plan["unchanged_sent"],
        "counts": plan["counts"],
        "fields": plan["fields"],
        "highlights": {key: entry["count"] for key, entry in plan["highlights"].items()},
        "missing": plan["missing"]["count"],
    }


def summary_json(result: RunResult, *, files: dict[str, str] | None = None, digest: RowsDigest | None = None) -> str:
    """``summary.json``'s text: what ``--json`` prints, for a validate too, which writes no file."""
    return json.dumps(summary_data(result, files=files, digest=digest), ensure_ascii=False, indent=2) + "\n"


def write_summary(
    result: RunResult, path: Path, *, files: dict[str, str] | None = None, digest: RowsDigest | None = None
) -> Path:
    """Write ``summary.json`` (mode 0600, whole or not at all: ``written_whole``) and return its path."""
    with written_whole(path) as fh:
        fh.write(summary_json(result, files=files, digest=digest))
    return path
