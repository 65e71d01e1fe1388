"""``read_output``: any byte range of a session's output, by offset or by an ``output_id``.

An ``output_id`` (``SESSION:START-END``) names where one result's output lies in the session's
store; offsets then count from its start, so ``next_offset`` is what the caller sends back.
Every byte goes out masked (``Redactor.byte_range``, judged against the whole store).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kdmcp.errors import InvalidArgument
from kdmcp.server import models
from kdmcp.server.args import SessionId
from kdmcp.server.call import Call
from kdmcp.server.registry import reads, tool
from kdmcp.triage.record_files import RecordFiles

__all__ = ["read_output"]

OUTPUT_READ_MAX = 1024 * 1024


@tool("output", reads("Read a session's output"))
def read_output(
    call: Call,
    session_id: SessionId = None,
    output_id: Annotated[str | None, Field(max_length=128)] = None,
    offset: Annotated[int, Field(ge=0)] = 0,
    limit: Annotated[int, Field(description='bytes', ge=1, le=OUTPUT_READ_MAX)] = 65536,
) -> models.OutputChunk:
    """Read output: the rest of a cut result."""
    app = call.app
    end_cap: int | None = None
    base = 0  # where the caller's offsets count from: an output_id's start, else the session's
    if output_id is not None:
        sid, _, span = output_id.partition(":")
        start_text, _, end_text = span.partition("-")
        if not sid or not start_text.isdigit() or not end_text.isdigit():
            raise InvalidArgument(f"malformed output_id {output_id!r} (expected SESSION:START-END)")
        if session_id is not None and session_id != sid:
            raise InvalidArgument(f"output_id {output_id!r} belongs to session {sid}, not {session_id}")
        session_id = sid
        base = int(start_text)
        offset += base
        end_cap = int(end_text)
        records = app.state_of(RecordFiles).path(sid, call.owner)
        if records is not None:
            return _record_page(call, sid, records, offset, base, limit)
    session = app.session(session_id, call.owner, include_ended=True)
    total = session.store.size
    if offset > total:
        raise InvalidArgument(f"offset {offset} is past the end of the output ({total} bytes)")
    stop = total if end_cap is None else min(end_cap, total)
    end = min(stop, offset + min(limit, OUTPUT_READ_MAX))
    text, next_offset = app.masked_range(session, offset, end)
    # Offsets answer in the frame the caller asked in, so next_offset is what to send back.
    return models.OutputChunk(
        session_id=session.session_id,
        state=session.state,
        offset=offset - base,
        next_offset=next_offset - base,
        total_bytes=stop - base,
        eof=next_offset >= stop,
        text=text,
    )


def _record_page(call: Call, file_id: str, path: str, offset: int, base: int, limit: int) -> models.OutputChunk:
    """A page of a record file (a triage run's JSONL): whole lines, unless one line is longer than
    ``limit``; the file as it is now (a rerun may have appended since the id was given)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            total = f.tell()
            if offset > total:
                raise InvalidArgument(f"offset {offset - base} is past the end of the records ({total - base} bytes)")
            f.seek(offset)
            data = f.read(min(limit, OUTPUT_READ_MAX))
    except OSError as exc:
        raise InvalidArgument(f"output_id {file_id}: the records file cannot be read: {exc.strerror or exc}",
                              file_problem=True) from None
    end = offset + len(data)
    if end < total and b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]
        end = offset + len(data)
    return models.OutputChunk(session_id=file_id, offset=offset - base, next_offset=end - base,
                              total_bytes=total - base, eof=end >= total,
                              text=call.app.redactor.text(data.decode("utf-8", errors="replace")))
