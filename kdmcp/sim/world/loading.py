"""A driver that loads while the target runs: ``sampledrv.sys``, loaded by a system worker thread.

Deferred breakpoints only mean something if a module can arrive after the debugger connected,
so the world holds one driver that is not loaded at connect and loads at a fixed point of the
run cycle (:data:`LOAD_AT`: the third event after connect, 75 ms of target time). Its load is an
event like the others (:mod:`.activity`): a System worker thread runs the I/O manager's
load-driver work item down to the driver's entry point, the chain real kd stacks show for a
``bu MyDriver!DriverEntry`` hit (a public write-up's ``k`` at ``bindmonitor!DriverEntry``, and
several ``!analyze -v`` stacks of drivers that crashed in DriverEntry on Windows 10)::

    00 sampledrv!DriverEntry
    01 sampledrv!GsDriverEntry+0x20          (the WDK's /GS stub, the image's real entry point)
    02 nt!PnpCallDriverEntry+0x4c
    03 nt!IopLoadDriver+0x4e5
    04 nt!IopLoadUnloadDriver+0x57
    05 nt!ExpWorkerThread+0x155
    06 nt!PspSystemThreadStartup+0x55
    07 nt!KiStartSystemThread+0x28

The image is mapped (``lm``, ``x``, ``u`` see it; its DRIVER_OBJECT exists, not yet
initialised) when the chain reaches ``nt!PnpCallDriverEntry`` -- IopLoadDriver maps the image
and makes the object before it calls the entry point -- and the object is filled in (its
dispatch routines, DriverUnload, its device ``\\Device\\SampleDrv``) when DriverEntry returns,
that is when the event ends. The builder prepares everything (:func:`prepare`); the bytes sit
in their own :class:`~kdmcp.sim.world.memory.Memory` until the load maps them, so before it
``db`` at the base shows ``??`` as for any unmapped address.
"""

from __future__ import annotations

import functools
import itertools
import struct

from kdmcp.sim.world.code import Routine, assemble
from kdmcp.sim.world.laying import Builder, pe_header
from kdmcp.sim.world.layouts import put
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import Memory
from kdmcp.sim.world.model import Arrival, Device, Driver, Module, Symbol

__all__ = [
    "BASE",
    "DRIVER_OBJECT",
    "LOAD_AT",
    "LOAD_CHAIN",
    "LOAD_OUTER",
    "MAP_DEPTH",
    "NAME",
    "NOTICE_CHAIN",
    "NOTICE_OFFSET",
    "ROUTINES",
    "due",
    "finish",
    "map_image",
    "prepare",
]

NAME = "sampledrv"
BASE = 0xFFFFF80060DB0000  # just above myfault's image (lm lists it between myfault and hal)
SIZE = 0x8000
# the image's routines: name -> (offset, size); DriverEntry and the /GS stub sit in INIT, past .text
ROUTINES: dict[str, tuple[int, int]] = {
    "SampleUnload": (0x1010, 0x40),
    "SampleCreateClose": (0x1060, 0x50),
    "SampleDeviceControl": (0x10C0, 0x120),
    "DriverEntry": (0x5010, 0x110),
    "GsDriverEntry": (0x5130, 0x40),
}
# nt's load-driver path (the addresses are this world's; the return offsets the Windows 10 2004
# stacks' above): name -> (address, size)
LOADER_ROUTINES: dict[str, tuple[int, int]] = {
    "IopLoadUnloadDriver": (0xFFFFF80062D4E7A0, 0x1B0),
    "IopLoadDriver": (0xFFFFF80062D4F0B0, 0x8C0),
    "PnpCallDriverEntry": (0xFFFFF80062D51C40, 0xA0),
    # the load notification's path, for an "sxe ld" stop (NOTICE_CHAIN)
    "MmLoadSystemImageEx": (0xFFFFF80062D52400, 0x900),
    "DbgLoadImageSymbols": (0xFFFFF80062D53000, 0x80),
    "DebugService2": (0xFFFFF80062D530A0, 0x10),
}
# "sxe ld": the image's load notification stops the target in nt!DebugService2, on its int 3
# at +0x5 (real sessions, set1 misc/a_12 and connect/a_09: "nt!DebugService2+0x5:" /
# "fffff803`7f3a70e5 cc              int     3"): mov eax,r8d; int 2Dh; int 3; ret. The chain
# from IopLoadDriver down is reconstructed (the image maps in MmLoadSystemImageEx, which
# reports it through DbgLoadImageSymbols); the offsets are this world's.
NOTICE_CHAIN: tuple[tuple[str, int | None], ...] = (
    ("nt!ExpWorkerThread", 0x155),
    ("nt!IopLoadUnloadDriver", 0x57),
    ("nt!IopLoadDriver", 0x24C),
    ("nt!MmLoadSystemImageEx", 0x7BB),
    ("nt!DbgLoadImageSymbols", 0x45),
    ("nt!DebugService2", None),
)
NOTICE_OFFSET = 0x5  # DebugService2's int 3
_DEBUG_SERVICE2 = bytes.fromhex("418bc0cd2dccc3")
# outermost first, as activity.Event.chain: (routine, where its call to the next one returns)
LOAD_CHAIN: tuple[tuple[str, int | None], ...] = (
    ("nt!ExpWorkerThread", 0x155),
    ("nt!IopLoadUnloadDriver", 0x57),
    ("nt!IopLoadDriver", 0x4E5),
    ("nt!PnpCallDriverEntry", 0x4C),
    (f"{NAME}!GsDriverEntry", 0x20),
    (f"{NAME}!DriverEntry", None),
)
LOAD_OUTER = ("nt!PspSystemThreadStartup+0x55", "nt!KiStartSystemThread+0x28")
MAP_DEPTH = 3  # the image is mapped once the chain reaches nt!PnpCallDriverEntry
LOAD_AT = 3  # the load is the third event the running world plays after connect
# PnpCallDriverEntry calls the entry point through the object: "call qword ptr [rbx+58h]"
# (DRIVER_OBJECT.DriverInit at +0x58)
_CALL_INIT = bytes.fromhex("ff5358")
_CREATE_DEVICE_RET = 0x4F  # DriverEntry's IoCreateDevice call returns here
# where the load's objects go: a nonpaged page of their own, far above the builder's objects
_OBJECTS = 0xFFFFE70F3C5D0000
DRIVER_OBJECT = _OBJECTS + 0x40  # pool header, object header, body (as the builder's "Driv" blocks)
_DEVOBJ = _OBJECTS + 0x1D0
_SERVICE = "\\REGISTRY\\MACHINE\\SYSTEM\\ControlSet001\\Services\\sampledrv"
_IRP_MJ_CREATE, _IRP_MJ_CLOSE, _IRP_MJ_DEVICE_CONTROL = 0x0, 0x2, 0xE
FILE_DEVICE_UNKNOWN = 0x22


def prepare(b: Builder, kernel: list[Module], invalid: int, create_device: int) -> Arrival:
    """nt's loader routines (symbols and the calls their code makes) and the driver, unmapped."""
    nt = next(m for m in kernel if m.name == "nt")
    for sym, (addr, size) in LOADER_ROUTINES.items():
        nt.symbols.append(Symbol(sym, addr, size))
        b.routines[f"nt!{sym}"] = (addr, size)
    b.calls.setdefault("nt!ExpWorkerThread", {})[0x155] = LOADER_ROUTINES["IopLoadUnloadDriver"][0]
    b.calls.setdefault("nt!IopLoadUnloadDriver", {})[0x57] = LOADER_ROUTINES["IopLoadDriver"][0]
    b.calls.setdefault("nt!IopLoadDriver", {})[0x4E5] = LOADER_ROUTINES["PnpCallDriverEntry"][0]
    b.fixed.setdefault("nt!PnpCallDriverEntry", {})[0x4C - len(_CALL_INIT)] = _CALL_INIT
    for (caller, ret), (callee, _) in itertools.pairwise(NOTICE_CHAIN[2:]):
        b.calls.setdefault(caller, {})[ret or 0] = LOADER_ROUTINES[callee.split("!")[1]][0]
    b.fixed.setdefault("nt!DebugService2", {})[0] = _DEBUG_SERVICE2
    module = Module(
        NAME,
        f"{NAME}.sys",
        f"\\SystemRoot\\system32\\DRIVERS\\{NAME}.sys",
        BASE,
        SIZE,
        0x6560A2F1,  # lmv: "Fri Nov 24 13:21:21 2023 (6560A2F1)"
        0x0000F3A2,
        pdb=f"C:\\ProgramData\\Dbg\\sym\\{NAME}.pdb\\5E1B7C9A2D4F4E0B9A63C1D8E2F70B451\\{NAME}.pdb",
        third_party=True,
    )
    at = {name: BASE + off for name, (off, _) in ROUTINES.items()}
    module.symbols = [Symbol(name, BASE + off, size) for name, (off, size) in ROUTINES.items()]
    calls = {
        "GsDriverEntry": {0x20: at["DriverEntry"]},
        "DriverEntry": {_CREATE_DEVICE_RET: create_device},
    }
    image = Memory()
    image.defer(BASE, 0x400, pe_header(module))
    image.map(BASE + 0x1000, 0x5000, fill=0xCC)  # int 3 between routines, as MSVC pads code
    image.map(BASE, SIZE)
    for name, (off, size) in ROUTINES.items():
        r = Routine(f"{NAME}!{name}", BASE + off, size, calls.get(name, {}))
        image.defer(BASE + off, size, functools.partial(assemble, r))
    dispatch = [invalid] * 28
    driver = Driver(DRIVER_OBJECT, f"\\Driver\\{NAME}", NAME, dispatch, init=at["GsDriverEntry"], unload=0, flags=0x12)
    device = Device(_DEVOBJ, DRIVER_OBJECT, "\\Device\\SampleDrv", FILE_DEVICE_UNKNOWN, 0x40, 0x100, _DEVOBJ + 0x150)
    return Arrival(module, image, driver, device)


def due(world: World, played: int) -> Arrival | None:
    """The driver whose load is the event to play now (``played`` events so far), if any."""
    if played + 1 < LOAD_AT:
        return None
    return next((a for a in world.arriving if not a.done), None)


def _wide(world: World, at: int, text: str) -> tuple[int, int, int]:
    """A UNICODE_STRING's buffer laid at ``at``: (Length, MaximumLength, Buffer)."""
    world.kernel.load(at, text.encode("utf-16-le") + b"\0\0")
    return 2 * len(text), 2 * len(text) + 2, at


def map_image(world: World, a: Arrival) -> None:
    """IopLoadDriver's part: the image mapped, in the loaded-module list, its object made."""
    if a.mapped:
        return
    a.mapped = True
    world.kernel.absorb(a.image)
    world.modules.append(a.module)
    world.drivers.append(a.driver)
    world.reindex()  # the symbol table now holds the driver's symbols (x, ln, bp)
    mem = world.kernel
    # pool and object headers as the builder lays them ("Driv" / "Devi", nonpaged)
    mem.load(_OBJECTS, struct.pack("<I4s", (0x190 // 16) << 16 | 3 << 24, b"Driv"))
    mem.load(_DEVOBJ - 0x40, struct.pack("<I4s", (0x1F0 // 16) << 16 | 3 << 24, b"Devi"))
    mem.map(_OBJECTS, 0x1000)
    length, maximum, buf = _wide(world, _OBJECTS + 0x500, a.driver.name)
    put(
        mem,
        "_DRIVER_OBJECT",
        a.driver.address,
        {
            "Type": 4,
            "Size": 0x150,
            "Flags": a.driver.flags,
            "DriverStart": a.module.base,
            "DriverSize": a.module.size,
            "DriverInit": a.driver.init,
            "DriverName.Length": length,
            "DriverName.MaximumLength": maximum,
            "DriverName.Buffer": buf,
        },
    )
    mem.load(a.driver.address + 0x70, struct.pack("<28Q", *a.driver.dispatch))
    length, maximum, buf = _wide(world, _OBJECTS + 0x420, _SERVICE)
    mem.load(_OBJECTS + 0x400, struct.pack("<HHIQ", length, maximum, 0, buf))  # the RegistryPath
    _link_module(world, a.module)


def registry_path() -> int:
    """DriverEntry's second argument (``rdx`` at the entry): the service key's UNICODE_STRING."""
    return _OBJECTS + 0x400


def _link_module(world: World, m: Module) -> None:
    """A KLDR_DATA_TABLE_ENTRY at the tail of ``nt!PsLoadedModuleList`` (InsertTailList)."""
    mem, head = world.kernel, world.evaluate("nt!PsLoadedModuleList")
    entry = _OBJECTS + 0x600
    full = _wide(world, _OBJECTS + 0x700, m.path)
    base = _wide(world, _OBJECTS + 0x7C0, m.image)
    put(
        mem,
        "_KLDR_DATA_TABLE_ENTRY",
        entry,
        {
            "DllBase": m.base,
            "EntryPoint": BASE + ROUTINES["GsDriverEntry"][0],
            "SizeOfImage": m.size,
            "FullDllName.Length": full[0],
            "FullDllName.MaximumLength": full[1],
            "FullDllName.Buffer": full[2],
            "BaseDllName.Length": base[0],
            "BaseDllName.MaximumLength": base[1],
            "BaseDllName.Buffer": base[2],
            "LoadCount": 1,
        },
    )
    space = world.space()
    last = space.u64(head + 8) or head
    mem.load(entry, struct.pack("<QQ", head, last))
    mem.load(last, struct.pack("<Q", entry))
    mem.load(head + 8, struct.pack("<Q", entry))


def finish(world: World, a: Arrival) -> None:
    """DriverEntry returned: its dispatch routines, DriverUnload and its device are in place."""
    a.done = True
    map_image(world, a)
    at = {name: BASE + off for name, (off, _) in ROUTINES.items()}
    d = a.driver
    d.dispatch[_IRP_MJ_CREATE] = d.dispatch[_IRP_MJ_CLOSE] = at["SampleCreateClose"]
    d.dispatch[_IRP_MJ_DEVICE_CONTROL] = at["SampleDeviceControl"]
    d.unload = at["SampleUnload"]
    d.devices = [a.device.address]
    world.devices.append(a.device)
    mem = world.kernel
    mem.load(d.address + 0x70, struct.pack("<28Q", *d.dispatch))
    put(mem, "_DRIVER_OBJECT", d.address, {"DeviceObject": a.device.address, "DriverUnload": d.unload})
    dev = a.device
    put(
        mem,
        "_DEVICE_OBJECT",
        dev.address,
        {
            "Type": 3,
            "Size": 0x150 + 0x60,
            "ReferenceCount": 0,
            "DriverObject": dev.driver,
            "Flags": dev.flags,
            "Characteristics": dev.characteristics,
            "DeviceExtension": dev.extension,
            "DeviceType": dev.device_type,
            "StackSize": dev.stack_size,
        },
    )
