"""The typed driver tools (issue 16): ``driver_object``, ``device_object`` and ``irp``.

Each runs kd's own extension and reads its answer through the parse layer:
``!drvobj NAME 7`` (Microsoft's !drvobj page: bit 0 the device objects, bit 1 the dispatch
routines, bit 2 each device's stack), ``!devobj X`` then ``!devstack`` of the address it
named, ``!irp ADDRESS``. What kd answers instead of an object (``Driver object foo not
found``, ``… is not a device object``, ``IRP signature does not match, probably not an IRP``)
is the caller's mistake: invalid_argument with kd's words (``typed.refusal``).

Every argument that reaches kd's command line is checked: an address is ``args.Address``,
a driver or device name one word (``myfault``, ``\\Driver\\myfault``, ``\\Device\\Harddisk0\\DR0``)
with no blank, ';' or '"' that could end the command or add to it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from kdmcp import parse as parsing
from kdmcp.errors import InvalidArgument
from kdmcp.parse import io_names, ioctl
from kdmcp.server import typed
from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Call
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.kobjects.models import (
    DeviceObjectResult,
    DeviceRef,
    DispatchEntry,
    DriverObjectResult,
    IrpLocation,
    IrpResult,
    Routine,
    StackEntry,
)

if TYPE_CHECKING:
    from kdmcp.parse.models.objects import IrpStackLocation

__all__ = ["device_object", "driver_object", "irp"]

ObjectName = Annotated[
    str,
    Field(description="an object name or address", min_length=1, max_length=256, pattern=r'^[^\s;"]+$'),
]
# the routine the I/O manager leaves in every major a driver did not set (IopInvalidDeviceRequest
# completes the IRP with STATUS_INVALID_DEVICE_REQUEST)
_DEFAULT_DISPATCH = "nt!IopInvalidDeviceRequest"
_ROUTINES = {"driver_entry": "DriverEntry", "driver_unload": "DriverUnload", "driver_start_io": "DriverStartIo",
             "add_device": "AddDevice"}
# an IRP stack location's major as !irp prints it: "IRP_MJ_DEVICE_CONTROL(e)", "N/A(0)", or the old
# layout's bare hex "e"
_MAJOR_RE = re.compile(r"^(?P<name>IRP_MJ_\w+|N/A)\((?P<code>[0-9a-fA-F]+)\)$")
# IRP_MJ_DEVICE_CONTROL / IRP_MJ_INTERNAL_DEVICE_CONTROL: Parameters.DeviceIoControl is
# OutputBufferLength, InputBufferLength, IoControlCode, Type3InputBuffer (wdm.h IO_STACK_LOCATION),
# the four words !irp prints after "Args:"
_DEVICE_CONTROL = (0x0E, 0x0F)


def _object(ran: typed.Ran, command: str, extension: str) -> parsing.ObjectRecord:
    """What ``command`` answers as the object ``extension`` describes; anything else is kd's
    refusal (``typed.refusal``)."""
    record = ran.record(command)
    if (isinstance(record, parsing.ObjectRecord) and record.object_type == extension
            and (record.address or record.fields)):
        return record
    raise typed.refusal(ran, record)


def _nonzero(value: str | None) -> str | None:
    """``value`` as ``0x…`` unless it is kd's zero pointer (``00000000``): an absent object, not a fact."""
    if not value:
        return None
    try:
        number = int(value.replace("`", ""), 16)
    except ValueError:
        return value  # not a number: kept as printed
    return f"{number:#x}" if number else None


@tool("inspect", reads("Driver object"))
def driver_object(
    call: Call,
    name: Annotated[ObjectName, Field(description='name or DRIVER_OBJECT')],
    session_id: SessionId = None,
) -> DriverObjectResult:
    """A driver's devices and dispatch routines (!drvobj)."""
    ran = typed.open_session(call.app, session_id, call.owner, needs="kernel")
    rec = _object(ran, f"!drvobj {name} 7", "drvobj")
    fields = rec.fields
    routines = {
        label: Routine(address=fields[key], symbol=fields.get(key + "_symbol"))
        for key, label in _ROUTINES.items()
        if _nonzero(fields.get(key))
    }
    names = {d.device: d.name for d in rec.devices if d.current}
    devices = [DeviceRef(address=e["device"], name=names.get(e["device"])) for e in rec.entries if "device" in e]
    dispatch = [
        DispatchEntry(major=r.name, address=r.address, symbol=r.symbol)
        for r in rec.dispatch_routines
        if r.symbol != _DEFAULT_DISPATCH
    ]
    return typed.serve(
        ran, DriverObjectResult, address=rec.address, name=rec.name, routines=routines, devices=devices,
        dispatch=dispatch, unhandled_majors=len(rec.dispatch_routines) - len(dispatch),
    )


def _attached(fields: dict[str, str], key: str) -> DeviceRef | None:
    return DeviceRef(address=fields[key], driver=fields.get(key + "_driver") or None) if key in fields else None


@tool("inspect", reads("Device object"))
def device_object(
    call: Call,
    address: Annotated[Address | None, Field()] = None,
    name: Annotated[ObjectName | None, Field(description='or \\Device\\NAME')] = None,
    session_id: SessionId = None,
) -> DeviceObjectResult:
    """A device and its stack (!devobj, !devstack)."""
    device = address if name is None else name
    if device is None or (address is not None and name is not None):
        raise InvalidArgument("give one of address or name")
    ran = typed.open_session(call.app, session_id, call.owner, needs="kernel")
    rec = _object(ran, f"!devobj {device}", "devobj")
    fields = rec.fields
    stack: list[StackEntry] = []
    devnode = None
    if rec.address is not None:
        # the stack of the address !devobj resolved, so a name is looked up once
        below = ran.record(f"!devstack {rec.address}")
        if isinstance(below, parsing.ObjectRecord):
            stack = [StackEntry(device=d.device, driver=d.driver, name=d.name, this=d.current) for d in below.devices]
            devnode = below.fields.get("devnode")
    kind = int(fields["Type"], 16) if "Type" in fields else None
    flags = int(fields["Flags"], 16) if "Flags" in fields else None
    refs = fields.get("RefCount")
    return typed.serve(
        ran, DeviceObjectResult, address=rec.address, name=rec.name, driver=fields.get("driver"),
        driver_object=fields.get("driver_object"),
        device_type=f"{kind:#x}" if kind is not None else None,
        device_type_name=ioctl.DEVICE_TYPES.get(kind) if kind is not None else None,
        flags=f"{flags:#010x}" if flags is not None else None,
        flag_names=io_names.device_flag_names(flags) if flags else [],
        characteristics=[n.strip() for n in fields.get("Characteristics_names", "").split(",") if n.strip()],
        current_irp=_nonzero(fields.get("Current Irp")),
        reference_count=int(refs, 16) if refs else None,
        extension=_nonzero(fields.get("DevExt")),
        attached_device=_attached(fields, "attached_device"), attached_to=_attached(fields, "attached_to"),
        stack=stack, devnode=devnode,
    )


def _major(text: str) -> tuple[str, int | None]:
    m = _MAJOR_RE.match(text.strip())
    if m is not None:
        return m["name"], int(m["code"], 16)
    try:
        code = int(text, 16)  # the old layout: "[  e, 0]"
    except ValueError:
        return text, None
    return io_names.major_name(code) or "N/A", code


def _location(loc: IrpStackLocation) -> IrpLocation:
    major, code = _major(loc.major)
    out = IrpLocation(
        current=loc.current, major=major, major_code=code, minor=loc.minor, device=_nonzero(loc.device),
        driver=loc.driver, file=_nonzero(loc.file), completion_routine=_nonzero(loc.completion_routine),
        completion_symbol=loc.completion_symbol, invoke_on=list(loc.invoke_on), pending=loc.pending,
        args=list(loc.args),
    )
    if major != "N/A" and code in _DEVICE_CONTROL and len(loc.args) >= 3:
        try:
            out.ioctl = ioctl.decode(loc.args[2])
            out.output_length, out.input_length = int(loc.args[0], 16), int(loc.args[1], 16)
        except ValueError:
            pass  # a cut-down published row ("...") has no words to decode: the args stay as printed
    return out


# what the parse layer reads from !irp's header lines; every other field is a line of "!irp ADDR 1"
_IRP_HEADER = frozenset({"state", "stack_count", "current_location", "current_location_address", "thread", "mdl",
                         "system_buffer"})


def _detail(value: str) -> bool:
    """Whether a ``!irp ADDR 1`` value says something: not kd's zero (``00000000``, ``0``, ``00000000 - 00000000``)."""
    return any(c not in "0 -`x" for c in value.lower())


@tool("inspect", reads("I/O request packet"))
def irp(
    call: Call,
    address: Address,
    detail: Annotated[bool, Field()] = False,
    session_id: SessionId = None,
) -> IrpResult:
    """An IRP's stack, IOCTLs decoded (!irp)."""
    ran = typed.open_session(call.app, session_id, call.owner, needs="kernel")
    # "!irp Address [Detail]: with any value, such as 1, the output includes the status of the IRP, ... its
    # owning thread ..." (Microsoft's !irp page): the IRP's own fields, one "Key = value" line each
    rec = _object(ran, f"!irp {address} 1" if detail else f"!irp {address}", "irp")
    fields = rec.fields
    count, current = fields.get("stack_count"), fields.get("current_location")
    return typed.serve(
        ran, IrpResult, address=rec.address or address, irp_state=fields.get("state"),
        stack_count=int(count) if count else None, current_location=int(current) if current else None,
        thread=_nonzero(fields.get("thread")), mdl=_nonzero(fields.get("mdl")),
        system_buffer=_nonzero(fields.get("system_buffer")),
        locations=[_location(loc) for loc in rec.irp_stack],
        details={k: v.strip() for k, v in fields.items() if k not in _IRP_HEADER and _detail(v)},
    )
