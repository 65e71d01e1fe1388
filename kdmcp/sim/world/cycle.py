"""The running world's cycle of events: which thread calls which chain of routines, in order.

Kept apart from :mod:`.activity` (which plays them and stops the target where a breakpoint
catches one) because it is the world's *script*: fixed per world, threads chosen by position,
not at random, so the same commands give the same bytes. A driver's load (:mod:`.loading`) is
an event of its own, played once at a fixed point of the cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world import drivers as drv
from kdmcp.sim.world import loading
from kdmcp.sim.world.machine import World

__all__ = ["Event", "events", "load_event"]

# below the I/O manager: the system call and the client's DeviceIoControl (as catalog's ioctl_wait)
_IOCTL_CALLERS = (
    "nt!KiSystemServiceCopyEnd+0x25",
    "ntdll!NtDeviceIoControlFile+0x14",
    "KERNELBASE!DeviceIoControl+0x6b",
)


def _irp_accesses(irp: int) -> tuple[tuple[str, int, int, int], ...]:
    """What myfault's dispatch routine (drivers._dispatch) touches in the IRP, and where the
    next instruction is: ``mov rax,qword ptr [rdx+0B8h]`` (Tail.Overlay.CurrentStackLocation),
    ``mov ecx,dword ptr [rax+18h]`` (the stack location's IoControlCode; the first location, at
    IRP+0xd0), and at +0x122 ``mov dword ptr [rdi+30h],eax`` (IoStatus.Status)."""
    return (("r", irp + 0xB8, 8, 0x11), ("r", irp + 0xD0 + 0x18, 4, 0x17), ("w", irp + 0x30, 4, 0x125))


@dataclass(frozen=True)
class Event:
    """One thing the running world does: ``thread`` calls ``chain`` (outermost first) on ``cpu``.

    ``chain`` holds ``(routine, return offset)`` pairs: the routine's name (``nt!NtCreateFile``,
    ``myfault+0x1e00``) and where in it the call to the next one returns (``None`` for the last).
    ``outer`` are the frames below the chain (the system-call entry, the user-mode caller),
    innermost first; ``dbgprint`` is what the event prints on the debugger's console.
    """

    name: str
    thread: int
    cpu: int
    chain: tuple[tuple[str, int | None], ...]
    outer: tuple[str, ...] = ()
    dbgprint: str = ""
    registers: tuple[tuple[str, int], ...] = ()
    # data the innermost routine touches: (r or w, address, size, offset of the next instruction)
    accesses: tuple[tuple[str, int, int, int], ...] = ()


def events(world: World) -> list[Event]:
    """The world's cycle of events (fixed per world: threads chosen by position, not at random)."""
    ncpu = len(world.processors)
    client = world.thread(cat.CLIENT_THREAD)
    svchosts = [p for p in world.processes if p.image == "svchost.exe" and p.threads]
    system = world.process_by_pid(4)
    workers = system.threads if system is not None else []
    dispatch = _dispatch_routine(world)
    device = next((d.address for d in world.devices if d.name == "\\Device\\Myfault"), 0)
    irp = world.irps[0].address if world.irps else 0
    ntfs_read = world.symbols.lookup("Ntfs!NtfsFsdRead")
    out: list[Event] = []
    codes = [c for c in drv.IOCTLS if c != drv.BUG_CODE]  # the bug's code would crash the machine
    for i, code in enumerate(codes):
        if client is not None and dispatch is not None:
            out.append(
                Event(
                    f"ioctl {code:#x}",
                    client.address,
                    1 % ncpu,
                    (
                        ("nt!NtDeviceIoControlFile", 0x56),
                        ("nt!IopXxxControlFile", 0x5E5),
                        ("nt!IopSynchronousServiceTail", 0x1A8),
                        ("nt!IofCallDriver", 0x55),
                        (world.name(dispatch), None),
                    ),
                    _IOCTL_CALLERS,
                    # the driver's own trace line (our text: myfault prints no such line)
                    f"myfault: IOCTL {code:#010x} received\n",
                    (("rcx", device), ("rdx", irp), ("r8", code)),
                    _irp_accesses(irp),
                )
            )
        if svchosts:
            svc = svchosts[i % len(svchosts)]
            out.append(
                Event(
                    "NtCreateFile",
                    svc.threads[0].address,
                    2 % ncpu,
                    (("nt!NtCreateFile", 0x44), ("nt!IoCreateFileEx", 0x10C), ("nt!IopCreateFile", None)),
                    ("nt!KiSystemServiceCopyEnd+0x25", "ntdll!NtCreateFile+0x14", "KERNELBASE!CreateFileW+0x66"),
                )
            )
        if workers:
            out.append(
                Event(
                    "ExAllocatePoolWithTag",
                    workers[i % len(workers)].address,
                    3 % ncpu,
                    (("nt!ExpWorkerThread", 0x1B2), ("nt!ExAllocatePoolWithTag", None)),
                    ("nt!PspSystemThreadStartup+0x55", "nt!KiStartSystemThread+0x28"),
                )
            )
        if len(svchosts) > 1 and ntfs_read is not None:
            svc = svchosts[(i + 1) % len(svchosts)]
            out.append(
                Event(
                    "NtReadFile",
                    svc.threads[-1].address,
                    0,
                    (("nt!NtReadFile", 0x2F1), ("nt!IofCallDriver", 0x55), ("Ntfs!NtfsFsdRead", None)),
                    ("nt!KiSystemServiceCopyEnd+0x25",),
                )
            )
    return out


def _dispatch_routine(world: World) -> int | None:
    """myfault's IRP_MJ_DEVICE_CONTROL routine, read from its DRIVER_OBJECT's MajorFunction[0xe]."""
    d = world.driver("myfault")
    if d is None:
        return None
    value = world.space().u64(d.address + 0x70 + 8 * 0xE)
    return value if value is not None else d.dispatch[0xE]


def load_event(world: World) -> Event:
    """The driver's load: a System worker thread down to DriverEntry (loading.LOAD_CHAIN)."""
    system = world.process_by_pid(4)
    worker = system.threads[-1].address if system is not None and system.threads else 0
    registers = (("rcx", loading.DRIVER_OBJECT), ("rdx", loading.registry_path()))
    return Event(f"load {loading.NAME}", worker, 0, loading.LOAD_CHAIN, loading.LOAD_OUTER, "", registers)
