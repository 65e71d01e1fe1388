"""A triage run's summary in words: the tool's text block, and the lines the CLI prints under its table.

Here, not beside the summary (kdmcp/triage/buckets.py), because it is what a model reads: it
counts in the server's words (``text.count``: "1 dump", "2 buckets"), and the CLI, a layer
above, shares it rather than saying the same facts another way.
"""

from __future__ import annotations

from kdmcp.server.text import count
from kdmcp.triage.buckets import Bucket, TriageSummary

__all__ = ["names_shown", "summary_notes", "summary_text", "summary_title"]


def summary_title(summary: TriageSummary) -> str:
    """``12 dumps: 10 in 3 buckets, 4 done before`` (the CLI's table title too)."""
    buckets = len(summary.buckets) + summary.more_buckets
    done = f", {summary.done_before} done before" if summary.done_before else ""
    return f"{count(summary.dumps, 'dump')}: {summary.bucketed} in {count(buckets, 'bucket')}{done}"


def summary_text(summary: TriageSummary, output_id: str | None = None) -> str:
    """The summary as a model reads it: one line per bucket, then the failures and the file
    (``output_id``: the ``read_output`` id that pages it)."""
    lines = [f"[{summary_title(summary)}]"]
    for b in summary.buckets:
        stacks = f" ({b.stacks} stacks)" if b.stacks > 1 else ""
        lines.append(f"{b.count} {b.key}{stacks}: {names_shown(b)}")
        detail = "; ".join(p for p in (b.stop, " < ".join(b.frames)) if p)
        if detail:
            lines.append(f"  {detail}")
    if summary.more_buckets:
        lines.append(f"+{count(summary.more_buckets, 'smaller bucket')} ({count(summary.more_dumps, 'dump')})")
    return "\n".join(lines + summary_notes(summary, output_id))


def names_shown(bucket: Bucket) -> str:
    """``a.dmp, b.dmp, c.dmp +6``: the names listed and how many more the bucket holds."""
    more = f" +{bucket.count - len(bucket.names)}" if bucket.count > len(bucket.names) else ""
    return ", ".join(bucket.names) + more


def summary_notes(summary: TriageSummary, output_id: str | None = None) -> list[str]:
    """The lines after the buckets (the text block's and the CLI's): failures, what is left, the file."""
    lines = []
    if summary.failed:
        lines.append("failed: " + ", ".join(f"{n} {category}" for category, n in summary.failed.items()))
    if summary.not_done:
        lines.append(f"{count(summary.not_done, 'dump')} not done (cancelled): the same records file resumes")
    if summary.same_content:
        repeats = "repeats" if summary.same_content == 1 else "repeat"
        lines.append(f"{count(summary.same_content, 'file')} {repeats} another's content (one record a content)")
    lines.append(f"records: {summary.records}" + (f" (read_output output_id={output_id})" if output_id else ""))
    return lines
