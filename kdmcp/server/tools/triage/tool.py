"""``triage_dumps``: every dump under the paths opened, read with the fixed read set, closed, bucketed.

One call for a batch an agent could not hold call by call (1,000 dumps, three calls each). The
answer is the buckets (largest first, names capped, totals kept: a few KB for any run) and an
``output_id`` whose pages (``read_output``) are the per-dump records, one JSON line each. A
progress notification per dump, and before that one per dump hashed (``hashing k/N``: every dump
is hashed, the resume key, before any is triaged: minutes for a fleet of multi-GB dumps); a
cancel stops the debuggers and keeps what is done (the same ``out`` resumes). How many debuggers
run at once is the server's to say (``triage.jobs``, at most ``max_sessions`` by default), not
the model's: they are processes on this host. The surface budget (16 KB for every tool) leaves
the tool two arguments: a directory takes its ``*.dmp`` files, a pattern in ``paths``
(``/dumps/**/*.mdmp``) any others; the CLI has ``--glob`` and ``--limit``. Only dumps are opened,
and only the fixed read set runs on them (kdmcp/triage/one.py), so every policy allows it;
``dump_roots`` applies as for ``open_dump``.
"""

from __future__ import annotations

import os
from typing import Annotated

from pydantic import Field

from kdmcp.errors import InvalidArgument, SessionBusy
from kdmcp.server.call import Call
from kdmcp.server.models import Served
from kdmcp.server.registry import starts, tool
from kdmcp.server.text import Data
from kdmcp.server.tools.triage.running import DEFAULT_RUN, records_file, run_triage
from kdmcp.server.tools.triage.text import summary_text
from kdmcp.triage.buckets import TriageSummary
from kdmcp.triage.models import DumpRecord
from kdmcp.triage.record_files import RecordFiles

__all__ = ["TriageResult", "triage_dumps"]

MAX_PATHS = 256


class TriageResult(TriageSummary, Served):
    """A run's buckets and failures; ``output_id``: read_output pages its records (one JSON line per dump)."""

    output_id: str = Field(description="read_output pages the records (RUN:START-END)")

    @classmethod
    def render_text(cls, data: Data) -> str:
        return summary_text(TriageSummary.model_validate(data), data["output_id"])


@tool("session", starts("Triage many crash dumps"))
def triage_dumps(
    call: Call,
    paths: Annotated[list[Annotated[str, Field(min_length=1, max_length=4096)]],
                     Field(min_length=1, max_length=MAX_PATHS)],
    out: Annotated[str | None, Field(max_length=64)] = None,
) -> TriageResult:
    """Bucket crash dumps; the same out resumes."""
    path = records_file(call.app, call.owner, out or DEFAULT_RUN)
    if os.path.isdir(path):  # else the error would be the OS's "Is a directory", naming no argument
        raise InvalidArgument(f"out: {out or DEFAULT_RUN!r} names a directory in the records directory; name another")

    def progress(done: int, total: int, record: DumpRecord | None) -> None:
        if record is None:  # hashing, before any dump is triaged: below 1, where the dumps' count starts (MCP:
            call.count(done / (total + 1), None, f"hashing {done}/{total}")  # a progress only ever increases)
        else:
            call.count(done, total, f"{record.name}: {record.bucket_key}")

    try:
        summary = run_triage(call.app, call.owner, [os.path.abspath(p) for p in paths], out=path,
                             cancel=call.cancel, progress=progress)
    except SessionBusy as exc:
        if call.owner is None:
            raise
        # a listener client names its run; the server's paths are not its to know (its result says the same)
        raise SessionBusy(f"out: {os.path.basename(path)} is being written by another triage run; wait for it, "
                          "or name another") from exc
    size = os.path.getsize(path) if os.path.exists(path) else 0
    file_id = call.app.state_of(RecordFiles).add(path, call.owner)
    if call.owner is not None:  # a listener client reads the file by its output_id: the server's path is not its
        summary.records = os.path.basename(path)
    return TriageResult(**summary.model_dump(), output_id=f"{file_id}:0-{size}")
