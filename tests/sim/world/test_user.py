"""The user-mode world (kdmcp/sim/world/user.py): one process whose model and memory agree.

The threads' TEBs, stacks and the PEB's loader lists are read back from the process's memory
and held to the model; the facts are the canned cdb target's (the attach banner's break-in
thread, the canned ~ and !teb), and a launch's fault changes the world as cdb would show it.
"""

from __future__ import annotations

import struct

import pytest

from kdmcp.sim.world import user_catalog as cat
from kdmcp.sim.world.code import decode
from kdmcp.sim.world.layouts import layout, offset_of
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.user import build_user, user_state
from kdmcp.sim.world.user_activity import break_in
from kdmcp.sim.world.user_events import fault

PID = 0x1A2C


@pytest.fixture(scope="module")
def attach() -> World:
    return build_user(0, PID, "")


def _u64(world: World, addr: int) -> int:
    value = world.space().u64(addr)
    assert value is not None, hex(addr)
    return value


def test_attach_has_the_canned_threads_and_breaks_in_on_its_own(attach: World) -> None:
    threads = attach.processes[0].threads
    assert [(t.tid, t.teb) for t in threads] == [(0x3B4, 0x2D2000), (0x1E48, 0x2D4000), (0x5D0, 0x2D6000)]
    assert attach.current_thread() is threads[2]
    assert all(cpu.current_thread == threads[2].address for cpu in attach.processors)
    state = user_state(attach)
    assert state is not None and state.mode == "attach" and state.event.thread == threads[2].address
    assert attach.registers()["rip"] == 0x00007FFC81A986A0  # ntdll!DbgBreakPoint (the attach banner)
    assert attach.name(threads[0].frames[0].site) == "ntdll!NtWaitForSingleObject+0x14"
    assert attach.name(threads[1].frames[1].site) == "ntdll!TppWorkerThread+0x2f4"


def test_modules_are_the_canned_lm_and_the_kernel_half_is_empty(attach: World) -> None:
    bases = {m.name: (m.base, m.end) for m in attach.modules}
    assert bases["app"] == (0x00007FF791D80000, 0x00007FF791D9B000)
    assert bases["ntdll"] == (0x00007FFC81A00000, 0x00007FFC81BF0000)
    assert bases["KERNEL32"] == (0x00007FFC80E20000, 0x00007FFC80ED2000)
    assert bases["KERNELBASE"] == (0x00007FFC7F600000, 0x00007FFC7F8C7000)
    assert attach.user_modules == []
    assert attach.kernel.pages == {} and attach.space().read(0xFFFFF80062A05C20, 1) is None


def test_teb_memory_holds_each_thread_ids_stack_and_peb(attach: World) -> None:
    for t in attach.processes[0].threads:
        assert _u64(attach, t.teb + offset_of("_TEB", "NtTib.Self")[0]) == t.teb
        assert _u64(attach, t.teb + offset_of("_TEB", "NtTib.StackBase")[0]) == t.stack_base
        assert _u64(attach, t.teb + offset_of("_TEB", "NtTib.StackLimit")[0]) == t.stack_limit
        assert _u64(attach, t.teb + offset_of("_TEB", "ClientId.UniqueProcess")[0]) == PID
        assert _u64(attach, t.teb + offset_of("_TEB", "ClientId.UniqueThread")[0]) == t.tid
        assert _u64(attach, t.teb + 0x60) == cat.PEB  # ProcessEnvironmentBlock
        assert t.stack_limit < t.frames[0].child_sp < t.stack_base


def test_stacks_hold_return_addresses_that_follow_calls(attach: World) -> None:
    space = attach.space()
    for t in attach.processes[0].threads:
        for f in t.frames[1:]:
            assert _u64(attach, f.child_sp - 8) == f.site  # x64: the caller's return address slot
            # the instruction before each return address is a call (direct, IAT or CFG dispatch)
            before = [decode(space.read(f.site - n, n) or b"", f.site - n, attach.name) for n in (5, 6)]
            assert any(
                d is not None and d.text.startswith("call") and d.address + len(d.data) == f.site for d in before
            )
        for f in t.frames:
            mod = attach.symbols.module_at(f.site)
            assert mod is not None and mod.base <= f.site < mod.end


def test_code_is_the_canned_bytes_and_the_system_call_stubs(attach: World) -> None:
    space = attach.space()
    assert space.read(0x00007FFC81A986A0, 16) == bytes.fromhex("ccc3cccccccccccc0f1f840000000000")
    assert space.read(0x00007FFC81A986D0, 4) == bytes.fromhex("4883ec38")  # the canned db
    stub = attach.symbols.lookup("ntdll!NtWaitForSingleObject")
    assert stub is not None
    code = space.read(stub.address, 0x20) or b""
    assert code[3:8] == b"\xb8" + struct.pack("<I", 4) and code[0x12:0x15] == bytes.fromhex("0f05c3")
    wmain = attach.symbols.lookup("app!wmain")
    assert wmain is not None and wmain.address == 0x00007FF791D81000
    assert space.read(wmain.address + 0x14, 3) == bytes.fromhex("45891b")  # the canned .cxr's write
    iat = attach.symbols.lookup("app!__imp_WaitForSingleObjectEx")
    target = attach.symbols.lookup("KERNELBASE!WaitForSingleObjectEx")
    assert iat is not None and target is not None and _u64(attach, iat.address) == target.address


def test_peb_and_loader_lists_in_memory_match_the_modules(attach: World) -> None:
    peb = cat.PEB
    assert attach.space().u8(peb + 2) == 1  # BeingDebugged
    assert _u64(attach, peb + 0x10) == attach.symbols.module("app").base  # type: ignore[union-attr]
    ldr = _u64(attach, peb + 0x18)
    assert ldr == cat.PEB_LDR and _u64(attach, peb + 0x30) == cat.HEAPS[0].address
    # the canned !peb's list heads
    assert _u64(attach, ldr + 0x10) == 0x532BA0 and _u64(attach, ldr + 0x20) == 0x532BB0
    assert _u64(attach, ldr + 0x30) == 0x532A30
    node, seen = _u64(attach, ldr + 0x10), []
    while node != ldr + 0x10:
        seen.append(_u64(attach, node + 0x30))  # DllBase
        assert _u64(attach, _u64(attach, node + 8)) == node  # Blink's Flink is this entry
        node = _u64(attach, node)
    assert seen == [m.base for m in attach.modules]


def test_user_layouts_are_in_the_one_table() -> None:
    peb, teb = layout("ntdll!_PEB"), layout("_TEB")
    assert peb is not None and peb.module == "ntdll" and peb.size == 0x7C8
    assert teb is not None and teb.field("ProcessEnvironmentBlock").offset == 0x60  # type: ignore[union-attr]
    assert offset_of("_RTL_USER_PROCESS_PARAMETERS", "CommandLine.Buffer")[0] == 0x78
    assert offset_of("_LDR_DATA_TABLE_ENTRY", "FullDllName")[0] == 0x48
    assert layout("_LIST_ENTRY").module == "nt"  # type: ignore[union-attr]  # the kernel's types stay


def test_launch_maps_the_rest_when_the_app_faults() -> None:
    world = build_user(0, PID, "app.exe hello")
    assert [m.name for m in world.modules] == ["app", "ntdll"]
    main = world.processes[0].threads[0]
    assert main.tid == 0x1A8 and world.current_thread() is main
    assert world.name(main.frames[0].site) == "ntdll!LdrpDoDebuggerBreak+0x30"
    kernel32 = 0x00007FFC80E20000
    assert world.space().read(kernel32, 2) is None  # not mapped yet
    text = fault(world)
    assert text.splitlines()[:4] == [
        "ModLoad: 00007ffc`80e20000 00007ffc`80ed2000   C:\\Windows\\System32\\KERNEL32.DLL",
        "ModLoad: 00007ffc`7f600000 00007ffc`7f8c7000   C:\\Windows\\System32\\KERNELBASE.dll",
        "ModLoad: 00007ffc`7f3e0000 00007ffc`7f4e0000   C:\\Windows\\System32\\ucrtbase.dll",
        "(1a2c.1a8): Access violation - code c0000005 (first chance)",
    ]
    assert text.endswith(
        "app!wmain+0x14:\n"
        "00007ff7`91d81014 45891b          mov     dword ptr [r11],r11d ds:00000000`00000000=????????\n"
    )
    assert world.space().read(kernel32, 2) == b"MZ"
    assert world.symbols.lookup("KERNEL32!BaseThreadInitThunk") is not None
    state = user_state(world)
    assert state is not None and state.event.code == 0xC0000005 and state.event.parameters == (1, 0)
    assert world.registers()["rip"] == 0x00007FF791D81014 and world.registers()["efl"] == 0x10246
    assert "(!!! second chance !!!)" in fault(world).splitlines()[0]


def test_an_attached_app_faults_on_its_main_thread_and_the_break_thread_is_gone() -> None:
    world = build_user(0, PID, "")
    assert fault(world).startswith("(1a2c.3b4): Access violation - code c0000005 (first chance)\n")
    assert [t.tid for t in world.processes[0].threads] == [0x3B4, 0x1E48]
    assert world.current_thread().tid == 0x3B4


def test_the_world_is_deterministic(attach: World) -> None:
    again = build_user(0, PID, "")
    for addr, size in ((0x00007FFC81A52630, 0x40), (0x00007FF791D81000, 0x40), (cat.PEB, 0x100), (0xAFFB68, 0x80)):
        assert again.space().read(addr, size) == attach.space().read(addr, size)
    assert [t.registers for t in again.processes[0].threads] == [t.registers for t in attach.processes[0].threads]


def test_another_pid_is_that_process() -> None:
    world = build_user(0, 4242, "")
    assert world.processes[0].pid == 4242
    t = world.processes[0].threads[0]
    assert _u64(world, t.teb + 0x40) == 4242


def test_a_break_in_starts_cdbs_thread_in_a_running_launch() -> None:
    world = build_user(0, PID, "app.exe")
    text = break_in(world)
    assert text.endswith(
        "(1a2c.5d0): Break instruction exception - code 80000003 (first chance)\n"
        "ntdll!DbgBreakPoint:\n00007ffc`81a986a0 cc              int     3\n"
    )
    assert text.startswith("ModLoad: 00007ffc`80e20000 00007ffc`80ed2000   C:\\Windows\\System32\\KERNEL32.DLL\n")
    threads = world.processes[0].threads
    assert [t.tid for t in threads] == [0x1A8, 0x1E48, 0x5D0] and world.current_thread() is threads[2]
    assert _u64(world, threads[2].teb + 0x48) == 0x5D0
    assert world.name(threads[0].frames[2].site) == "app!wmain+0xf"  # past the loader
    state = user_state(world)
    assert state is not None and state.event.code == 0x80000003 and state.event.thread == threads[2].address
    assert fault(world).startswith("(1a2c.1a8): Access violation")  # no images left to load
    assert [t.tid for t in world.processes[0].threads] == [0x1A8, 0x1E48]


# the canned 'dt ntdll!_PEB' (its first 51 fields, to CriticalSectionTimeout), as the user layout holds them
CANNED_PEB_HEAD = [
    (0x000, "InheritedAddressSpace", "UChar"),
    (0x002, "BeingDebugged", "UChar"),
    (0x010, "ImageBaseAddress", "Ptr64 Void"),
    (0x018, "Ldr", "Ptr64 _PEB_LDR_DATA"),
    (0x020, "ProcessParameters", "Ptr64 _RTL_USER_PROCESS_PARAMETERS"),
    (0x030, "ProcessHeap", "Ptr64 Void"),
    (0x050, "ReservedBits0", "Pos 8, 24 Bits"),
    (0x0BC, "NtGlobalFlag", "Uint4B"),
    (0x0C0, "CriticalSectionTimeout", "_LARGE_INTEGER"),
]


def test_the_peb_layout_keeps_the_canned_dt_fields() -> None:
    peb = layout("_PEB")
    assert peb is not None
    fields = [(f.offset, f.name, f.type) for f in peb.fields]
    assert fields.index((0x0C0, "CriticalSectionTimeout", "_LARGE_INTEGER")) == 50
    assert all(entry in fields[:51] for entry in CANNED_PEB_HEAD)
