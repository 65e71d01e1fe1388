"""``!irpfind``: the IRPs in flight, found where they are -- in the world's pool, read from memory.

An agent's first try when it looks for pending I/O. kd scans the large-allocation table, then the
nonpaged pool, for IoAllocateIrp's tag, and prints a row per IRP under one column header, printed
before the first row (kdexts' ``if (SearchContext->FirstTime) dprintf(header)``). The layout is a
published x64 session's (Windows 7, stored-index file id 26559660924), verbatim but for the
addresses::

    Scanning large pool allocation table for Tag 'Irp?' (fffffa801a333000 : fffffa801a3f3000)

      Irp            [ Thread ]         irpStack: (Mj,Mn)   DevObj          [Driver]         MDL Process
    fffffa8019753390 [fffffa801a9f9b50] irpStack: ( 3, 0)  fffffa801a9c9980 [ \\Driver\\mouclass]
    fffffa8019c22950 [fffffa801b27bb50] irpStack: ( e,20)  fffffa80198ae9a0 [ \\Driver\\AFD] 0xfffffa801aa034a0

    Searching NonPaged pool (fffffa8018c04000 : fffffa8075c00000) for Tag 'Irp?'

and the scan lines are Windows 10's wording (a Windows Internals transcript on Windows 10:
"Scanning large pool allocation table for tag 0x3f707249 (Irp?) (a5000000 : a5200000)",
"Searching nonpaged pool (80000000 : ffc00000) for tag 0x3f707249 (Irp?)"), with the pool ranges
``!poolfind`` prints (:mod:`.cmd_pool`). The MDL's process follows the driver when the IRP has an
MDL. Criteria (the !irpfind page): ``arg``, ``device``, ``fileobject``, ``mdlprocess``,
``thread``, ``userevent`` and a value keep the IRPs that match.
"""

from __future__ import annotations

import struct

from kdmcp.sim.world.cmd_kobjects import driver_name
from kdmcp.sim.world.cmd_pool import BIG_TABLE, NONPAGED_RANGE
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.registry import command

_TAG = "tag 0x3f707249 (Irp?)"
_HEADER = "  Irp            [ Thread ]         irpStack: (Mj,Mn)   DevObj          [Driver]         MDL Process\n"
_CRITERIA = ("arg", "device", "fileobject", "mdlprocess", "thread", "userevent")


@command("!irpfind", summary="IRPs in flight, found in pool")
def _irpfind(world: World, name: str, args: str) -> str | None:
    del name
    words = [w for w in args.split() if w.lower() != "-v"]
    if words and words[0] not in ("0",):
        return None  # paged, special or session pool: the world's IRPs are all nonpaged
    criteria = None
    if len(words) >= 4:
        if words[2].lower() not in _CRITERIA:
            return None
        criteria = (words[2].lower(), world.evaluate(words[3]))
    out = [
        "\n",
        f"Scanning large pool allocation table for {_TAG} ({BIG_TABLE[0]:016x} : {BIG_TABLE[1]:016x})\n",
        "\n",
        f"Searching nonpaged pool ({NONPAGED_RANGE[0]:016x} : {NONPAGED_RANGE[1]:016x}) for {_TAG}\n",
        "\n",
    ]
    rows = [row for irp in sorted(i.address for i in world.irps) if (row := _row(world, irp, criteria))]
    if rows:
        out.append(_HEADER)
    return "".join(out + rows)


def _row(world: World, irp: int, criteria: tuple[str, int] | None) -> str:
    """One IRP's line, read from memory; "" when it does not match the criteria."""
    space = world.space()
    raw = space.read(irp, 0xD0)
    if raw is None or struct.unpack_from("<H", raw, 0)[0] != 6:  # IO_TYPE_IRP
        return ""
    mdl = struct.unpack_from("<Q", raw, 0x8)[0]
    count, current = raw[0x42], raw[0x43]
    thread, user_event = struct.unpack_from("<Q", raw, 0x98)[0], struct.unpack_from("<Q", raw, 0x50)[0]
    file_obj = struct.unpack_from("<Q", raw, 0xC0)[0]
    stack_at = struct.unpack_from("<Q", raw, 0xB8)[0]
    stack = space.read(stack_at, 0x48) or bytes(0x48)
    device = struct.unpack_from("<Q", stack, 0x28)[0]
    mdl_process = (space.u64(mdl + 0x20) or 0) if mdl else 0
    if criteria is not None:
        kind, value = criteria
        stacks = [space.read(irp + 0xD0 + 0x48 * i, 0x48) or bytes(0x48) for i in range(count)]
        matched = {
            "arg": any(value in struct.unpack_from("<4Q", s, 8) for s in stacks),
            "device": any(struct.unpack_from("<Q", s, 0x28)[0] == value for s in stacks),
            "fileobject": file_obj == value,
            "mdlprocess": bool(mdl) and mdl_process == value,
            "thread": thread == value,
            "userevent": user_event == value,
        }[kind]
        if not matched:
            return ""
    head = f"{irp:016x} [{thread:016x}] "
    if current > count:
        return head + f"Irp is complete (CurrentLocation {current} > StackCount {count})\n"
    owner = driver_name(world, space.u64(device + 0x8) or 0) if device else ""
    tail = f" 0x{mdl_process:016x}" if mdl else ""
    return head + f"irpStack: ({stack[0]:2x},{stack[1]:2x})  {device:016x} [ {owner}]{tail}\n"
