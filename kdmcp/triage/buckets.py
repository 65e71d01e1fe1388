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
from collections.abc import Iterable, Sequence

from kdmcp import parse as parsing

__all__ = ["MACHINERY", "bucket_key", "frame_text", "normalised", "stack_hash"]

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
    for frame in frames:
        short = normalised(frame)
        if not MACHINERY.match(short):
            return short
    return None


def bucket_key(failure_bucket: str | None, stop_class: str | None, culprit_frame: str | None) -> str:
    """The key of a dump that was read (see the module's rule)."""
    if failure_bucket:
        return failure_bucket
    if culprit_frame or stop_class:
        return " ".join(part for part in (stop_class, culprit_frame) if part)
    return "unknown"
