"""``kd-mcp triage PATH…``: the triage_dumps tool's run, for a person (a progress bar, a bucket table)
or a script (``--json``).

The run is the tool's (``kdmcp.server.tools.triage.running.run_triage``): the same debuggers,
config, ``dump_roots`` and store; only the records file is the caller's to name (``--out``,
default ``triage.jsonl`` here, so running the same command again resumes it). The progress bar
and every message go to stderr, the table or the JSON to stdout; whatever fails ends, as every
``kd-mcp`` command does, in one error line (``kdmcp/cli.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from kdmcp.server import ServerOptions
    from kdmcp.triage.buckets import TriageSummary
    from kdmcp.triage.models import DumpRecord

__all__ = ["DEFAULT_OUT", "add_arguments", "describe", "run"]

DEFAULT_OUT = "triage.jsonl"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="dump files, directories (their *.dmp), patterns")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="debuggers at once (default: triage.jobs, else the cores, at most max_sessions)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on a Dask cluster, e.g. tcp://host:8786 (default: triage.scheduler; "
                        "docs/triage-cluster.md)")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="FILE",
                        help=f"the JSONL of per-dump records; an existing one is resumed (default: {DEFAULT_OUT})")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON (for scripts)")
    parser.add_argument("--limit", type=int, metavar="N", help="at most N dumps")
    parser.add_argument("--glob", metavar="G", help="the files a directory contributes (default: *.dmp)")


def run(parsed: argparse.Namespace, options: ServerOptions) -> int:
    """Triage, show the progress, print the buckets; 0 when the run finished (failed dumps are records)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from kdmcp.errors import InvalidArgument
    from kdmcp.server import KdMcpApp
    from kdmcp.server.tools.triage.running import MAX_JOBS, run_triage
    from kdmcp.triage.finding import MAX_DUMPS

    for flag, most in (("jobs", MAX_JOBS), ("limit", MAX_DUMPS)):
        value = getattr(parsed, flag)
        if value is not None and not 1 <= value <= most:
            raise InvalidArgument(f"--{flag}: from 1 to {most}")
    if os.path.isdir(parsed.out):  # else the error would be the OS's "Is a directory", naming no option
        raise InvalidArgument(f"--out: {parsed.out} is a directory; name a file (the records are one JSONL)")
    app = KdMcpApp(options)
    errors = Console(stderr=True)
    cancel = threading.Event()
    with Progress(TextColumn("triage"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  TextColumn("{task.description}"), console=errors, transient=True) as bar:
        task = bar.add_task("finding dumps", total=None)

        def progress(done: int, total: int, record: DumpRecord | None) -> None:
            bar.update(task, completed=done, total=total, description=describe(done, total, record))

        try:
            summary = run_triage(app, None, parsed.paths, out=parsed.out, glob=parsed.glob, limit=parsed.limit,
                                 jobs=parsed.jobs, scheduler=parsed.scheduler, cancel=cancel, progress=progress)
        except KeyboardInterrupt:
            cancel.set()
            raise
    if parsed.json:
        sys.stdout.write(summary.model_dump_json() + "\n")
    else:
        _table(Console(), summary)
    return 0


def describe(done: int, total: int, record: DumpRecord | None) -> str:
    """The progress bar's text: ``hashing k/N`` while the dumps are hashed (before any is triaged:
    minutes for a fleet of multi-GB dumps, which would show nothing), then each dump's bucket."""
    if record is None:
        return f"hashing {done}/{total}"
    what = record.bucket_key if record.status == "ok" else record.category or "failed"
    return f"{record.name}: {what}"[:60]


def _table(console: Console, summary: TriageSummary) -> None:
    """The buckets as a table, then the failures and where the records are."""
    from rich.markup import escape
    from rich.table import Table

    from kdmcp.server.text import count
    from kdmcp.server.tools.triage.text import names_shown, summary_notes, summary_title

    table = Table(title=escape(summary_title(summary)))
    table.add_column("dumps", justify="right")
    table.add_column("bucket")
    table.add_column("stop")
    table.add_column("top frames")
    table.add_column("examples")
    for bucket in summary.buckets:
        table.add_row(str(bucket.count), escape(bucket.key), escape(bucket.stop or ""),
                      escape("\n".join(bucket.frames)), escape(names_shown(bucket)))
    if summary.more_buckets:
        table.add_row(str(summary.more_dumps), f"({count(summary.more_buckets, 'smaller bucket')})", "", "", "")
    console.print(table)
    for line in summary_notes(summary):
        console.print(escape(line))
