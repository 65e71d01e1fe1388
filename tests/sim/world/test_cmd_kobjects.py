"""``!drvobj``, ``!devobj``, ``!devstack``, ``!irp`` from the world: kd's layouts (corpus
io_objects/03, 04, 08, kernel_objects/04, 05), agreement with memory and the model, and the
project's parser reading each output as its typed record."""

from __future__ import annotations

import struct

from kdmcp.parse import parse
from kdmcp.parse.models import ObjectRecord
from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world.build import build
from kdmcp.sim.world.code import decode
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.drivers import CHAIN_CODES, WAIT_CODE
from kdmcp.sim.world.machine import World


def _record(command: str, text: str) -> ObjectRecord:
    record = parse(command, text)
    assert isinstance(record, ObjectRecord), record
    return record


def _out(world: World, command: str) -> str:
    text = answer(world, command)
    assert text is not None, command
    return text


def test_drvobj_default_lists_the_device(world: World) -> None:
    drv = world.driver("myfault")
    assert drv is not None
    text = _out(world, "!drvobj myfault")
    assert text.splitlines()[:7] == [
        f"Driver object ({drv.address:016x}) is for:",
        " \\Driver\\myfault",
        "",
        "Driver Extension List: (id , addr)",
        "",
        "Device Object list:",
        f"{drv.devices[0]:016x}  ",
    ]
    r = _record("!drvobj myfault", text)
    assert r.address == f"0x{drv.address:016x}" and r.name == "\\Driver\\myfault"
    assert [e["device"] for e in r.entries] == [f"0x{d:016x}" for d in drv.devices]


def test_drvobj_dispatch_table_is_memory(world: World) -> None:
    drv = world.driver("myfault")
    assert drv is not None
    text = _out(world, "!drvobj myfault 2")
    assert "[00] IRP_MJ_CREATE                      fffff80060da1f80\tmyfault+0x1f80\n" in text
    assert "[01] IRP_MJ_CREATE_NAMED_PIPE           fffff80062884c30\tnt!IopInvalidDeviceRequest\n" in text
    r = _record("!drvobj myfault 2", text)
    assert len(r.dispatch_routines) == 28
    space = world.space()
    for row in r.dispatch_routines:
        assert row.address is not None
        assert int(row.address, 16) == space.u64(drv.address + 0x70 + 8 * row.index)
    ioctl = next(x for x in r.dispatch_routines if x.name == "IRP_MJ_DEVICE_CONTROL")
    assert ioctl.symbol == "myfault+0x1e00"
    # the routine's bytes decode to the switch's compare chain
    at = int(ioctl.address or "0", 16)
    data = space.read(at, 0x60)
    assert data is not None
    texts, pos = [], 0
    while pos < len(data) and len(texts) < 12:
        d = decode(data[pos:], at + pos, world.name)
        assert d is not None
        texts.append(d.text)
        pos += len(d.data)
    compares = [t for t in texts if t.startswith("cmp ") and "ecx," in t]
    assert compares[:3] == [f"cmp     ecx,{c:X}h" for c in CHAIN_CODES]
    assert r.fields["driver_entry_symbol"] == "myfault+0x6000"


def test_drvobj_follows_an_edited_table() -> None:
    w = build()
    drv = w.driver("myfault")
    assert drv is not None
    new = cat.NT_ROUTINES["IopInvalidDeviceRequest"][0]
    assert w.space().write(drv.address + 0x70 + 8 * 0xE, struct.pack("<Q", new))
    assert "[0e] IRP_MJ_DEVICE_CONTROL              fffff80062884c30\tnt!IopInvalidDeviceRequest\n" in _out(
        w, "!drvobj myfault 2"
    )


def test_drvobj_7_embeds_the_device_stacks(world: World) -> None:
    text = _out(world, "!drvobj \\Driver\\myfault 7")
    assert "\n\nDevice Object stacks:\n\n!devstack " in text
    assert text.endswith("Processed 1 device objects.\n")
    r = _record("!drvobj myfault 7", text)
    assert r.fields["processed_device_objects"] == "1"
    assert [d.name for d in r.devices] == ["Myfault"]


def test_drvobj_unknown(world: World) -> None:
    assert _out(world, "!drvobj nosuchdriver") == "Driver object nosuchdriver not found\n"


def test_devobj_shows_the_client_irp(world: World) -> None:
    dev = next(d for d in world.devices if d.name == "\\Device\\Myfault")
    text = _out(world, "!devobj \\Device\\Myfault")
    lines = text.splitlines()
    assert lines[0] == f"Device object ({dev.address:016x}) is for:"
    assert lines[1] == f" Myfault \\Driver\\myfault DriverObject {dev.driver:016x}"
    assert lines[2] == f"Current Irp {cat.CLIENT_IRP:016x} RefCount 1 Type 00008336 Flags 00000040"
    assert "Characteristics (0x00000100)  FILE_DEVICE_SECURE_OPEN" in lines
    assert lines[-1] == "Device queue is not busy."
    r = _record("!devobj", text)
    assert r.fields["Current Irp"] == f"{cat.CLIENT_IRP:016x}"
    assert r.fields["driver"] == "\\Driver\\myfault" and r.name == "Myfault"
    assert _out(world, f"!devobj {dev.address:x}") == text
    assert _out(world, "!devobj Myfault") == text  # a name under \Device (docs: "!devobj Video0")


def test_devobj_and_devstack_agree_on_the_disk_stack(world: World) -> None:
    disk = next(d for d in world.devices if d.name == "\\Device\\Harddisk0\\DR0")
    text = _out(world, f"!devobj {disk.address:x}")
    assert f"AttachedDevice (Upper) {disk.attached:016x} \\Driver\\partmgr\n" in text
    assert f"AttachedTo (Lower) {disk.lower:016x} \\Driver\\ACPI\n" in text
    stack = _out(world, f"!devstack {disk.address:x}")
    assert stack.splitlines()[0] == "  !DevObj           !DrvObj            !DevExt           ObjectName"
    assert f"> {disk.address:016x}  \\Driver\\disk       {disk.extension:016x}  DR0\n" in stack
    r = _record("!devstack", stack)
    assert [d.driver for d in r.devices] == ["\\Driver\\partmgr", "\\Driver\\disk", "\\Driver\\ACPI", "\\Driver\\pci"]
    assert [d.current for d in r.devices] == [False, True, False, False]
    # each row's device is the one below's AttachedDevice in memory
    space = world.space()
    for upper, lower in zip(r.devices, r.devices[1:], strict=False):
        assert space.u64(int(lower.device, 16) + 0x18) == int(upper.device, 16)


def test_irp_names_the_client_thread_and_ioctl(world: World) -> None:
    irp = world.irps[0]
    text = _out(world, f"!irp {cat.CLIENT_IRP:x}")
    assert text.splitlines() == [
        f"Irp is active with 1 stacks 1 is current (= {cat.CLIENT_IRP + 0xD0:#x})",
        f" No Mdl: System buffer={irp.system_buffer:016x}: Thread {cat.CLIENT_THREAD:016x}:  Irp stack trace.  ",
        "     cmd  flg cl Device   File     Completion-Context",
        ">[IRP_MJ_DEVICE_CONTROL(e), N/A(0)]",
        f"            0  1 {irp.stacks[0].device:016x} {irp.stacks[0].file:016x} 00000000-00000000    pending",
        "\t       \\Driver\\myfault",
        f"\t\t\tArgs: 00000020 00000020 {WAIT_CODE:#x} 00000000",
    ]
    r = _record(f"!irp {cat.CLIENT_IRP:x}", text)
    assert r.fields["thread"] == f"0x{cat.CLIENT_THREAD:016x}"
    assert r.irp_stack[0].current and r.irp_stack[0].pending
    assert r.irp_stack[0].args[2] == f"{WAIT_CODE:#x}"
    assert world.thread(cat.CLIENT_THREAD) is not None


def test_irp_detail_and_not_an_irp(world: World) -> None:
    text = _out(world, f"!irp {cat.CLIENT_IRP:x} 1")
    r = _record("!irp x 1", text)
    assert r.fields["Flags"] == "00060900"
    assert r.fields["Tail.Overlay.Thread"] == f"{cat.CLIENT_THREAD:016x}"
    assert r.fields["Tail.Overlay.CurrentStackLocation"] == f"{cat.CLIENT_IRP + 0xD0:016x}"
    dev = world.devices[0].address
    assert _out(world, f"!irp {dev:x}") == "IRP signature does not match, probably not an IRP\n"


def test_deterministic() -> None:
    a, b = build(), build()
    for c in ("!drvobj myfault 7", "!devobj \\Device\\Myfault", f"!irp {cat.CLIENT_IRP:x} 1"):
        assert answer(a, c) == answer(b, c)
