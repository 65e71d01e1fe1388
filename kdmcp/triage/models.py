"""The records of a triage run: what to run (``TriageSpec``) and what one dump yielded (``DumpRecord``).

Both cross process boundaries: a local pool's workers and Dask's ship them pickled, the
result store writes one ``DumpRecord`` per JSONL line. So they are plain pydantic models with
JSON-able fields and no references to live objects (docs/triage.md lists the fields).
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, Field

__all__ = ["FAILURE_CATEGORIES", "RETRIED_CATEGORIES", "BugcheckStop", "DumpRecord", "ExceptionStop",
           "FailureCategory", "Flavor", "TriageSpec"]

Flavor = Literal["kd", "cdb"]

# Why a dump yielded no triage (docs/triage.md): the one list; the summary, the CLI's table and
# the docs are built from it, in this order.
FailureCategory = Literal[
    "unreadable",  # the file vanished or could not be read (permissions, a hung mount)
    "not_a_dump",  # no dump signature: kd and cdb would refuse it
    "truncated",  # a dump shorter than its header says (a partial copy)
    "debugger_timeout",  # the debugger did not finish the read set within the spec's timeout
    "debugger_error",  # the debugger would not start, refused the dump, or died
    "worker_lost",  # on Dask: every worker that ran it died (KilledWorker), or its task raised past its retries
]
FAILURE_CATEGORIES: tuple[FailureCategory, ...] = get_args(FailureCategory)
# The failures a rerun with the same records file tries again: they say something about the
# machine at the time (a hung mount, a busy host, a missing debugger, a lost worker), which a
# rerun may find fixed. The others are the bytes' own, and the content hash names the bytes: the
# same file is not a dump, or is cut short, every time.
RETRIED_CATEGORIES: frozenset[FailureCategory] = frozenset(
    {"unreadable", "debugger_timeout", "debugger_error", "worker_lost"})


class TriageSpec(BaseModel, frozen=True):
    """How every dump of a run is opened: the same for the local pool and a Dask worker."""

    debuggers: dict[Flavor, list[str]]  # argv prefix per flavor (simulator or real path)
    symbol_path: str | None = None
    extra_args: list[str] = Field(default_factory=list)  # launch flags, e.g. -noshell
    timeout_s: float = Field(default=300.0, gt=0)  # per dump, the whole read set; a hung debugger is killed
    analyze: bool = True  # run !analyze -v
    frames: int = Field(default=8, ge=1, le=64)  # top frames kept per dump


class BugcheckStop(BaseModel):
    """A kernel dump's stop: ``.bugcheck``'s code and its four arguments (``!analyze``'s name)."""

    code: str  # lower case, 0x and no leading zeros: "0xd1" (kd prints "Bugcheck code 000000D1")
    name: str | None = None  # "DRIVER_IRQL_NOT_LESS_OR_EQUAL"
    args: list[str] = Field(default_factory=list)


class ExceptionStop(BaseModel):
    """A user dump's stop: the stored exception (``.exr -1``)."""

    code: str  # "c0000005"
    address: str | None = None
    description: str | None = None  # "Access violation"


class DumpRecord(BaseModel):
    """What one dump yielded, or why it yielded nothing (``status`` failed, a ``category``)."""

    name: str  # file name as listed (relative to the root it was found under)
    path: str  # absolute path as opened
    sha256: str  # content hash: the resume key and the dedupe key
    size: int
    status: Literal["ok", "failed"]
    category: FailureCategory | None = None  # when failed
    error: str | None = None  # one line
    kind: Literal["kernel", "user"] | None = None
    bugcheck: BugcheckStop | None = None
    exception: ExceptionStop | None = None
    module: str | None = None  # the faulting frame
    function: str | None = None
    offset: str | None = None
    frames: list[str] = Field(default_factory=list)  # top frames, normalised (module!function+0xoff)
    process: str | None = None
    thread: str | None = None
    failure_bucket: str | None = None  # !analyze -v FAILURE_BUCKET_ID when given
    bucket_key: str  # the bucket rule (buckets.py)
    stack_hash: str  # hash of the normalised top frames
    seconds: float
    worker: str | None = None  # who did it (host/pid or Dask worker address)
