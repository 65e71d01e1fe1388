"""The bucket rule: which dumps are the same crash, and the compact summary of a run.

A bucket key is, in order of trust (docs/triage.md, "The bucket rule"):

1. ``!analyze -v``'s ``FAILURE_BUCKET_ID`` when it prints one: Microsoft's own bucketing (the
   problem class, the code, the culprit ``image!function``), what WER and Watson group by, so a
   kd-mcp bucket matches the one a Windows engineer already knows.
2. Else the faulting frame, normalised, after the stop's class: ``0xc0000005 crashme!Parse``,
   ``0xd1 myfault+0x1981``. A symbolised frame drops its offset (the same function faulting a few
   instructions apart is one bug, and the offset changes with every build); a frame with no
   symbol keeps it, since the offset into the module is all that names the code. Frames of the
   crash machinery (``nt!KeBugCheckEx``, ``nt!KiPageFault``, ``KERNELBASE!RaiseException``…) are
   skipped: every bugcheck has them on top.
3. ``unknown``, when a dump gave neither (no stop recorded, no stack).

A failed dump's key is ``failed:<category>``. The stack hash (16 hex digits of a SHA-256 over
the top frames, normalised as in 2.) tells apart dumps of one bucket whose stacks differ.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from kdmcp import parse as parsing
from kdmcp.triage.models import FAILURE_CATEGORIES, DumpRecord

__all__ = [
    "MACHINERY",
    "Bucket",
    "TriageSummary",
    "bucket_key",
    "culprit",
    "frame_text",
    "normalised",
    "past_machinery",
    "stack_hash",
    "stop_text",
    "summarise",
]

# Frames every crash of a kind has on top: kd's bugcheck path and the user-mode exception
# dispatch (``k`` in a kernel dump starts "nt!KeBugCheckEx / nt!KiBugCheckDispatch /
# nt!KiPageFault"; a fast-fail or raise starts in KERNELBASE/ntdll).
MACHINERY = re.compile(
    r"(?i)^(nt!(KeBugCheck\w*|KiBugCheck\w*|KiPageFault|KiTrap\w*|KiExceptionDispatch|KiGeneralProtectionFault|"
    r"KiDoubleFault\w*|KiSystemServiceHandler|RtlDispatchException|KiDispatchException)|"
    r"(ntdll|kernelbase|kernel32)!(RaiseException|RtlRaiseException|KiUserExceptionDispatch\w*|"
    r"RtlDispatchException|RaiseFailFastException|UnhandledExceptionFilter|WerpReportFault\w*))$"
)


def frame_text(frame: parsing.Frame) -> str | None:
    """A frame as ``module!function+0xoff`` (``module+0xoff`` without a symbol), or None when it names nothing."""
    if frame.module and frame.function:
        return f"{frame.module}!{frame.function}" + (f"+{frame.offset}" if frame.offset else "")
    if frame.module:
        return frame.module + (f"+{frame.offset}" if frame.offset else "")
    return frame.address or (frame.call_site.strip() or None)


def normalised(text: str) -> str:
    """``module!function`` without its offset; a frame with no symbol keeps its offset (all that names it)."""
    if "!" in text:
        return text.split("+", 1)[0]
    return text


def stack_hash(frames: Sequence[str]) -> str:
    """16 hex digits over the normalised frames, in order: equal for stacks that differ only in offsets."""
    joined = "\n".join(normalised(frame).lower() for frame in frames)
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


def culprit(frames: Iterable[str]) -> str | None:
    """The first frame that is not the crash machinery, normalised."""
    rest = past_machinery(list(frames))
    short = normalised(rest[0]) if rest else None
    return None if short is None or MACHINERY.match(short) else short


def past_machinery(frames: Sequence[str]) -> list[str]:
    """The frames from the first that is not crash machinery (all of them if every one is)."""
    for n, frame in enumerate(frames):
        if not MACHINERY.match(normalised(frame)):
            return list(frames[n:])
    return list(frames)


def bucket_key(failure_bucket: str | None, stop_class: str | None, culprit_frame: str | None) -> str:
    """The key of a dump that was read (see the module's rule)."""
    if failure_bucket:
        return failure_bucket
    if culprit_frame or stop_class:
        return " ".join(part for part in (stop_class, culprit_frame) if part)
    return "unknown"


# ------------------------------------------------------------------ the summary of a run

SUMMARY_BYTES = 3_500  # the buckets' share: the text block and structuredContent together stay under 8 KB
NAMES_SHOWN = 3  # dump names per bucket; the count says how many there are
FRAMES_SHOWN = 3  # the representative's top frames
_TEXT_CAP = 96  # a key, a name or a frame longer than this is cut (a path-like name, a C++ symbol)


class Bucket(BaseModel):
    """One bucket as the summary shows it: its key, how many dumps, a few names, one representative."""

    key: str
    count: int
    names: list[str] = Field(description="the first few dumps' names; count says how many")
    stop: str | None = Field(default=None, description="the representative's bugcheck or exception")
    frames: list[str] = Field(default_factory=list, description="the representative's top frames")
    stacks: int = Field(default=1, description="distinct stack hashes in the bucket")


class TriageSummary(BaseModel):
    """A run's result: buckets largest first, failures by category, where every record is."""

    dumps: int = Field(description="dumps of this request, each a record in the JSONL (bucketed or failed)")
    bucketed: int
    failed: dict[str, int] = Field(default_factory=dict, description="failed dumps by category")
    buckets: list[Bucket]
    more_buckets: int = Field(default=0, description="buckets left out (smallest), holding more_dumps")
    more_dumps: int = 0
    done_before: int = Field(default=0, description="dumps already in the JSONL (a resumed run): not run again")
    same_content: int = Field(default=0, description="files whose content another file of the run has: one record")
    not_done: int = Field(default=0, description="dumps not triaged (the run was cancelled): a rerun does them")
    records: str = Field(description="the JSONL file, one record per dump")


def _cut(text: str) -> str:
    return text if len(text) <= _TEXT_CAP else text[: _TEXT_CAP - 1] + "…"


def stop_text(record: DumpRecord) -> str | None:
    """``0xd1 DRIVER_IRQL_NOT_LESS_OR_EQUAL`` / ``0xc0000005 Access violation``: the stop in a few words."""
    if record.bugcheck is not None:
        return " ".join(p for p in (record.bugcheck.code, record.bugcheck.name) if p)
    if record.exception is not None:
        return " ".join(p for p in (record.exception.code, record.exception.description) if p)
    return None


def summarise(records: Iterable[DumpRecord], records_path: str, *, done_before: int = 0, same_content: int = 0,
              budget: int = SUMMARY_BYTES) -> TriageSummary:
    """Bucket ``records`` (largest first, then by key) into a summary whose buckets take at most
    ``budget`` bytes of JSON: buckets past it are counted, not listed (their dumps are in the JSONL)."""
    groups: dict[str, list[DumpRecord]] = {}
    failed: Counter[str] = Counter()
    total = 0
    for record in records:
        total += 1
        if record.status == "failed":
            failed[record.category or "debugger_error"] += 1
            continue
        groups.setdefault(record.bucket_key, []).append(record)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    shown: list[Bucket] = []
    used = 0
    for key, members in ordered:
        first = members[0]
        bucket = Bucket(key=_cut(key), count=len(members), names=[_cut(m.name) for m in members[:NAMES_SHOWN]],
                        stop=stop_text(first), frames=[_cut(f) for f in past_machinery(first.frames)[:FRAMES_SHOWN]],
                        stacks=len({m.stack_hash for m in members}))
        size = len(bucket.model_dump_json(exclude_defaults=True)) + 1
        if used + size > budget:
            break
        shown.append(bucket)
        used += size
    left = ordered[len(shown):]
    return TriageSummary(
        dumps=total, bucketed=total - sum(failed.values()),
        failed={category: failed[category] for category in FAILURE_CATEGORIES if failed[category]},
        buckets=shown, more_buckets=len(left), more_dumps=sum(len(members) for _, members in left),
        done_before=done_before, same_content=same_content, records=records_path,
    )
