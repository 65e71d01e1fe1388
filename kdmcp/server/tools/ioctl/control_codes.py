"""``decode_ioctl`` and ``ioctl_map``: a control code's fields, and the codes a driver handles.

The driver reaches kd's command line (``!drvobj DRIVER 2``), so it is one word: a name
(``myfault``, ``\\Driver\\myfault``) or a DRIVER_OBJECT address; no blank, ';' or '"'.

``ioctl_map`` runs, each through the caller's policy: ``!drvobj DRIVER 2`` (the dispatch table;
"!drvobj" docs: flag bit 1 lists the dispatch routines), then ``uf`` at its
``[0e] IRP_MJ_DEVICE_CONTROL`` routine ("uf (Unassemble Function)": the whole routine, found by
following its branches -- so a switch's compare chains and trees are there, and the blocks a
jump table reaches are not, which the table's entries give), then ``dd TABLE Ln`` for each
bounds-checked jump table the routine indexes. The recovery itself is pure
(kdmcp/parse/ioctl_recovery.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

from pydantic import Field

# The record models are built on the first command, not at start-up (kdmcp.parse's lazy
# attributes; docs/performance.md, "Cold start").
from kdmcp import parse as parsing
from kdmcp.errors import InvalidArgument
from kdmcp.parse.record_base import RecordBase
from kdmcp.server import typed
from kdmcp.server.args import SessionId
from kdmcp.server.call import Call
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.ioctl.models import DecodeIoctlResult, IoctlMapResult, MappedIoctl, UnresolvedSite

__all__ = ["MAX_INSTRUCTIONS", "decode_ioctl", "ioctl_map"]

RecordT = TypeVar("RecordT", bound=RecordBase)

_DEVICE_CONTROL = 0x0E
_INVALID = "nt!iopinvaliddevicerequest"  # the I/O manager's "not handled" routine (STATUS_INVALID_DEVICE_REQUEST)
MAX_INSTRUCTIONS = 20_000  # of uf's listing: a dispatch routine is far smaller; a bound on a bad walk


@tool("inspect", reads("Decode an IOCTL"))
def decode_ioctl(
    call: Call,
    # one check, ioctl.decode's, in words a caller reads: a constrained union made pydantic name
    # its branches ("code.constrained-int: …; code.constrained-str: …")
    code: Annotated[int | str, Field(union_mode="left_to_right")],
) -> DecodeIoctlResult:
    """Decode an IOCTL code (no session needed)."""
    from kdmcp.parse import ioctl  # at the first call: serving the tools builds no parse model (cold start)

    try:
        decoded = ioctl.decode(code)
    except ValueError as exc:
        raise InvalidArgument(f"code: {exc} (0x222003, 222003h, 0n2236419)") from None
    return DecodeIoctlResult(**decoded.model_dump())


def _module(symbol: str | None) -> str | None:
    """``ks`` of ``ks!DispatchDeviceIoControl``, ``myfault`` of ``myfault+0x1e00``."""
    if not symbol:
        return None
    head = symbol.split("!", 1)[0] if "!" in symbol else symbol.split("+", 1)[0]
    return head or None


def _whole(ran: typed.Ran, command: str, kind: type[RecordT]) -> RecordT | None:
    """``command``'s record if it is a ``kind``, parsed from all of its output: past the inline cap
    (``inline_output_bytes``) the inline text is cut, so the rest is read from the session's store.
    kd's complaint is invalid_argument (``typed.refuse_error``)."""
    record = ran.record(command, show=False)
    out = ran.outputs[-1]
    if out.truncated:
        record = parsing.parse(out.command, typed.whole_output(ran, out))
    typed.refuse_error(ran, record)
    return record if isinstance(record, kind) else None


def _served(ran: typed.Ran, **fields: Any) -> IoctlMapResult:
    """The result; ``command`` names every command it ran, though their outputs (long: the
    dispatch table, the routine's listing) are left out of the text and read by ``output_id``."""
    return typed.serve(ran, IoctlMapResult, command="; ".join(o.command for o in ran.outputs), **fields)


@tool("inspect", reads("Map a driver's IOCTLs"))
def ioctl_map(
    call: Call,
    driver: Annotated[
        str,
        Field(
            description='name or DRIVER_OBJECT',
            min_length=1,
            max_length=256,
            pattern=r'^[^\s;"]+$',
        ),
    ],
    session_id: SessionId = None,
) -> IoctlMapResult:
    """IOCTL codes a driver handles, and where."""
    from kdmcp.parse import ioctl, ioctl_recovery  # at the first call, as decode_ioctl's

    ran = typed.open_session(call.app, session_id, call.owner, needs="kernel")
    drv = _whole(ran, f"!drvobj {driver} 2", parsing.ObjectRecord)
    entry = next((r for r in drv.dispatch_routines if r.index == _DEVICE_CONTROL), None) if drv is not None else None
    if drv is None or entry is None:  # "Driver object … not found", an unreadable object
        raise typed.refusal(ran, None)
    fields: dict[str, Any] = {
        "driver": drv.name,
        "driver_object": drv.address,
        "routine": entry.address,
        "routine_symbol": entry.symbol,
    }
    if (entry.symbol or "").lower() == _INVALID:
        return _served(ran, handles_ioctls=False, note="the driver handles no IOCTLs", **fields)
    listing = _whole(ran, f"uf {entry.address}", parsing.DisassemblyRecord)
    instructions = list(listing.instructions) if listing is not None else []
    if not instructions:
        raise typed.refusal(ran, None)
    if len(instructions) > MAX_INSTRUCTIONS:
        fields["listing_cut"] = True
        instructions = instructions[:MAX_INSTRUCTIONS]

    def read(address: int, count: int) -> Sequence[int] | None:
        rec = ran.record(f"dd {address:#x} L{count:#x}", show=False)  # unreadable: no table, not a refusal
        words = [v for row in rec.rows for v in row.values] if isinstance(rec, parsing.MemoryRecord) else []
        if len(words) < count or any("?" in w for w in words[:count]):
            return None
        return [int(w, 16) for w in words[:count]]

    found = ioctl_recovery.recover(instructions, read, int(entry.address, 16))
    owner_module = _module(drv.fields.get("driver_entry_symbol"))
    routine_module = _module(entry.symbol)
    if routine_module and owner_module and routine_module.lower() != owner_module.lower():
        # corpus kernel_objects/03: sysvad's "[0e] IRP_MJ_DEVICE_CONTROL ... ks!DispatchDeviceIoControl"
        fields["note"] = (
            f"the routine is {routine_module}'s, not {owner_module}'s: a class, port or framework driver "
            "(ks, portcls, Wdf01000…) dispatches for it; the driver's own IOCTLs are in callbacks it registered"
        )
    return _served(
        ran,
        codes=[
            MappedIoctl(
                code=f"{c.code:#010x}",
                name=(decoded := ioctl.decode(c.code)).name,
                ctl_code=decoded.ctl_code,
                handler=f"{c.handler:#x}",
                handler_symbol=c.handler_symbol,
                how=c.how,
                confidence=c.confidence,
                at=f"{c.at:#x}",
            )
            for c in found.codes
        ],
        unresolved=[UnresolvedSite(at=f"{u.at:#x}", reason=u.reason) for u in found.unresolved],
        default=[f"{d:#x}" for d in found.defaults],
        instructions=len(instructions),
        truncated_walk=found.truncated,
        **fields,
    )
