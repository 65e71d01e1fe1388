"""One dump, triaged: open it with the right debugger, run the fixed read set, close it, one record.

The function is top-level and takes only picklable values so a Dask worker can run it as a task
(kdmcp/triage/cluster.py) exactly as the local pool does. It never raises for the dump's own
sake: a file that is not a dump, a truncated copy, a debugger that will not start or does not
answer within the spec's timeout, each is a failed ``DumpRecord`` with its category.

The read set is fixed, and read-only: nothing here takes a command from a caller.

- kernel dump (``kd -z``): ``.bugcheck`` (the code and four arguments kd read from the header),
  ``!analyze -v`` (the failure bucket, the culprit), ``k`` (the stack of the crashing thread);
- user dump (``cdb -z``): ``.exr -1`` (the stored exception: "This dump file has an exception
  of interest stored in it"), ``!analyze -v``, ``.ecxr`` (the exception's context: "The stored
  exception information can be accessed via .ecxr") and ``k`` in it.

The debugger is always stopped, on every path (``DebuggerSession.stop`` quits, then terminates,
then kills), so a hung one costs the timeout and no more.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time

from kdmcp import parse as parsing
from kdmcp.dump_header import DumpFileError, dump_kind, truncation
from kdmcp.engine import DebuggerSession, DumpTarget, SessionConfig, SessionState, build_plan
from kdmcp.errors import CommandTimeout, DebuggerExited, KdMcpError
from kdmcp.triage import buckets
from kdmcp.triage.models import BugcheckStop, DumpRecord, ExceptionStop, FailureCategory, Flavor, TriageSpec

__all__ = ["Cancelled", "Debuggers", "failed_record", "file_sha256", "triage_dump", "unreadable_key"]

_CHUNK = 1 << 20
_STOP_S = 10.0  # the stop's own bound (quit, then terminate, then kill), beyond the dump's timeout


class Cancelled(Exception):
    """The run was cancelled while this dump was open: no record (a rerun does it)."""


class Debuggers:
    """The debuggers a run has open, so a cancel stops them mid-command (not only between dumps)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[DebuggerSession] = set()
        self.cancelled = threading.Event()

    def enter(self, session: DebuggerSession) -> None:
        with self._lock:
            if self.cancelled.is_set():
                raise Cancelled
            self._open.add(session)

    def leave(self, session: DebuggerSession) -> None:
        with self._lock:
            self._open.discard(session)

    def cancel(self) -> None:
        """Stop every open debugger now (killed if it does not quit): their dumps end as ``Cancelled``."""
        with self._lock:
            self.cancelled.set()
            sessions = list(self._open)
        for session in sessions:
            session.stop(resume=False, timeout=2.0)


def file_sha256(path: str) -> str:
    """The content hash of the file at ``path`` (the resume and dedupe key)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def unreadable_key(path: str) -> str:
    """The key of a file that cannot be read, so it has a record (and a rerun skips it): its path's hash."""
    return "unreadable:" + hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:32]


def _worker() -> str:
    return f"{socket.gethostname()}/{os.getpid()}"


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def failed_record(fields: dict[str, object], category: FailureCategory, error: str, seconds: float) -> DumpRecord:
    """A dump's failed record: ``fields`` (name, path, sha256, size, and what else was read), the
    category's bucket, the error on one line. The one shape of a failure, here and on the cluster."""
    return DumpRecord.model_validate({**fields, "status": "failed", "category": category, "error": _one_line(error),
                                      "bucket_key": f"failed:{category}", "stack_hash": "", "seconds": seconds})


def triage_dump(path: str, spec: TriageSpec, name: str | None = None, *, sha256: str | None = None,
                debuggers: Debuggers | None = None) -> DumpRecord:
    """Triage the dump at ``path`` (``name``: how the run lists it; ``sha256``: when the caller
    hashed it already). Never raises for a per-dump failure; raises ``Cancelled`` only when
    ``debuggers`` is cancelled while this dump is open."""
    t0 = time.monotonic()
    path = os.path.abspath(path)
    base: dict[str, object] = {"name": name or os.path.basename(path), "path": path, "worker": _worker(),
                               "sha256": sha256 or "", "size": 0}

    def failed(category: FailureCategory, error: str, **more: object) -> DumpRecord:
        return failed_record({**base, **more}, category, error, round(time.monotonic() - t0, 3))

    try:
        base["size"] = os.stat(path).st_size
        if not sha256:
            base["sha256"] = file_sha256(path)
        kernel = dump_kind(path)
        short = truncation(path)
    except DumpFileError as exc:
        return failed("not_a_dump" if exc.reason == "not_a_dump" else "unreadable", exc.message.removeprefix("path: "))
    except OSError as exc:
        base["sha256"] = base["sha256"] or unreadable_key(path)
        return failed("unreadable", f"cannot be read: {exc.strerror or exc}")
    kind = "kernel" if kernel else "user"
    if short is not None:
        return failed("truncated", f"truncated: {short}", kind=kind)
    flavor: Flavor = "kd" if kernel else "cdb"
    if flavor not in spec.debuggers:
        return failed("debugger_error", f"no {flavor} to open a {kind} dump with (none found or configured)",
                      kind=kind)
    try:
        plan = build_plan(spec.debuggers[flavor], DumpTarget(path=path, kernel=kernel), symbol_path=spec.symbol_path,
                          initial_break=False, extra_args=spec.extra_args)
    except (KdMcpError, ValueError) as exc:
        return failed("debugger_error", f"cannot start {flavor}: {exc}", kind=kind)
    deadline = t0 + spec.timeout_s
    session = DebuggerSession(f"triage-{os.getpid()}-{threading.get_ident()}", plan, SessionConfig(
        startup_timeout=spec.timeout_s, command_timeout=spec.timeout_s, stop_timeout=_STOP_S))
    try:
        if debuggers is not None:
            debuggers.enter(session)
        outputs = _read_set(session, kernel, spec, deadline, debuggers.cancelled if debuggers is not None else None)
    except _Failed as exc:
        if debuggers is not None and debuggers.cancelled.is_set():
            raise Cancelled from None
        return failed(exc.category, exc.message, kind=kind)
    finally:
        session.stop(resume=False)
        session.store.close()  # its output, kept in memory or a spill file: nothing reads it after this
        if debuggers is not None:
            debuggers.leave(session)
    if debuggers is not None and debuggers.cancelled.is_set():
        raise Cancelled
    return _record(base, kind, outputs, spec, round(time.monotonic() - t0, 3))


class _Failed(Exception):
    def __init__(self, category: FailureCategory, message: str) -> None:
        super().__init__(message)
        self.category, self.message = category, message


def _read_set(session: DebuggerSession, kernel: bool, spec: TriageSpec, deadline: float,
              cancelled: threading.Event | None) -> dict[str, str]:
    """Each command of the read set -> its output; the whole set bounded by ``deadline``, and
    broken off between commands by ``cancelled`` (a cancel that came while the debugger started)."""
    try:
        start = session.start(max(0.1, deadline - time.monotonic()))
    except KdMcpError as exc:
        raise _Failed("debugger_error", exc.message) from None
    if start.state == SessionState.exited:
        last = [line for line in start.banner.splitlines() if line.strip()][-2:]
        raise _Failed("debugger_error", f"the debugger exited (code {start.exit_code}): {' '.join(last)}")
    if start.state != SessionState.broken:
        raise _Failed("debugger_timeout", f"no prompt within {spec.timeout_s:g} s of starting the debugger")
    commands = [".bugcheck"] if kernel else [".exr -1"]
    commands += ["!analyze -v"] if spec.analyze else []
    commands += ["k"] if kernel else [".ecxr", "k"]
    outputs: dict[str, str] = {}
    for command in commands:
        if cancelled is not None and cancelled.is_set():
            raise _Failed("debugger_error", "cancelled")
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Failed("debugger_timeout", f"the read set did not finish within {spec.timeout_s:g} s "
                                              f"(at {command})")
        try:
            outputs[command] = session.execute(command, timeout=left).output
        except CommandTimeout:
            raise _Failed("debugger_timeout", f"{command} did not finish within {spec.timeout_s:g} s") from None
        except DebuggerExited as exc:
            raise _Failed("debugger_error", f"the debugger exited during {command}: {exc.message}") from None
        except KdMcpError as exc:
            raise _Failed("debugger_error", f"{command}: {exc.message}") from None
    return outputs


def _record(base: dict[str, object], kind: str, outputs: dict[str, str], spec: TriageSpec,
            seconds: float) -> DumpRecord:
    """The record of a dump whose read set ran: the stop, the culprit, the frames, the bucket."""
    fields: dict[str, object] = {}
    stop_class: str | None = None
    analysis: parsing.AnalysisRecord | None = None
    stack: list[str] = []
    for command, output in outputs.items():
        record = parsing.parse(command, output)
        if command == ".bugcheck" and isinstance(record, parsing.AnalysisRecord) and record.bugcheck:
            check = record.bugcheck
            if check.code:
                fields["bugcheck"] = BugcheckStop(code=check.code, args=check.args)
                stop_class = check.code
        elif command == ".exr -1" and isinstance(record, parsing.ExceptionRecordRecord) and record.code:
            fields["exception"] = ExceptionStop(code=record.code, address=record.address,
                                                description=record.description)
            stop_class = record.code
        elif command == "!analyze -v" and isinstance(record, parsing.AnalysisRecord):
            analysis = record
        elif command == "k" and isinstance(record, parsing.StackRecord):
            stack = [text for frame in record.frames if (text := buckets.frame_text(frame))]
    if analysis is not None:
        stop_class = _from_analysis(analysis, fields) or stop_class
        if not stack:
            stack = [text for frame in analysis.stack if (text := buckets.frame_text(frame))]
    frames = stack[: spec.frames]
    culprit = buckets.culprit(stack)
    if culprit is not None:
        fields.update(_frame_parts(next(f for f in stack if buckets.normalised(f) == culprit)))
    failure_bucket = analysis.failure_bucket_id if analysis is not None else None
    return DumpRecord.model_validate({
        **base, **fields, "status": "ok", "kind": kind, "frames": frames, "failure_bucket": failure_bucket,
        "bucket_key": buckets.bucket_key(failure_bucket, stop_class, culprit),
        "stack_hash": buckets.stack_hash(frames), "seconds": seconds,
    })


def _from_analysis(analysis: parsing.AnalysisRecord, fields: dict[str, object]) -> str | None:
    """What ``!analyze -v`` adds: the bugcheck's name, the process and thread; the stop class if
    the first command gave none."""
    fields["process"] = analysis.process_name
    fields["thread"] = analysis.fields.get("FAULTING_THREAD")
    check = analysis.bugcheck
    stop = fields.get("bugcheck")
    if check is not None and check.code:
        if isinstance(stop, BugcheckStop):
            stop.name = stop.name or check.name
            return None
        fields["bugcheck"] = BugcheckStop(code=check.code, name=check.name, args=check.args)
        return check.code
    if analysis.exception is not None and analysis.exception.code and "exception" not in fields:
        found = analysis.exception
        fields["exception"] = ExceptionStop(code=found.code or "", address=found.address,
                                            description=found.description)
        return found.code
    return None


def _frame_parts(text: str) -> dict[str, object]:
    """``module!function+0xoff`` -> module, function, offset (``module+0xoff``: no function)."""
    head, _, offset = text.partition("+")
    module, _, function = head.partition("!")
    return {"module": module or None, "function": function or None, "offset": offset or None}
