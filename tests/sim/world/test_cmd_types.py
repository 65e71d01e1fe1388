"""``dt`` from the world: layouts, instances read from its memory, chosen fields, recursion and type
listings, in kd's spelling (families/types_symbols, corpus memory/06), and agreeing with the world
model the other commands print from."""

from __future__ import annotations

from kdmcp.parse import parse
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World


def dt(world: World, args: str) -> str:
    out = answer(world, f"dt {args}")
    assert out is not None
    return out


# The old canned ``dt nt!_EPROCESS`` text the default target printed (c564865:
# kdmcp/sim/data/default_kd.yaml), its header line and 75 fields, copied byte for byte.
CANNED_EPROCESS = """\
nt!_EPROCESS
   +0x000 Pcb              : _KPROCESS
   +0x438 ProcessLock      : _EX_PUSH_LOCK
   +0x440 UniqueProcessId  : Ptr64 Void
   +0x448 ActiveProcessLinks : _LIST_ENTRY
   +0x458 RundownProtect   : _EX_RUNDOWN_REF
   +0x460 Flags2           : Uint4B
   +0x460 JobNotReallyActive : Pos 0, 1 Bit
   +0x460 AccountingFolded : Pos 1, 1 Bit
   +0x460 NewProcessReported : Pos 2, 1 Bit
   +0x460 ExitProcessReported : Pos 3, 1 Bit
   +0x460 ReportCommitChanges : Pos 4, 1 Bit
   +0x460 LastReportMemory : Pos 5, 1 Bit
   +0x460 ForceWakeCharge  : Pos 6, 1 Bit
   +0x460 CrossSessionCreate : Pos 7, 1 Bit
   +0x460 NeedsHandleRundown : Pos 8, 1 Bit
   +0x460 RefTraceEnabled  : Pos 9, 1 Bit
   +0x460 PicoCreated      : Pos 10, 1 Bit
   +0x460 EmptyJobEvaluated : Pos 11, 1 Bit
   +0x460 DefaultPagePriority : Pos 12, 3 Bits
   +0x460 PrimaryTokenFrozen : Pos 15, 1 Bit
   +0x460 ProcessVerifierTarget : Pos 16, 1 Bit
   +0x460 RestrictSetThreadContext : Pos 17, 1 Bit
   +0x460 AffinityPermanent : Pos 18, 1 Bit
   +0x460 AffinityUpdateEnable : Pos 19, 1 Bit
   +0x460 PropagateNode    : Pos 20, 1 Bit
   +0x460 ExplicitAffinity : Pos 21, 1 Bit
   +0x460 ProcessExecutionState : Pos 22, 2 Bits
   +0x460 EnableReadVmLogging : Pos 24, 1 Bit
   +0x460 EnableWriteVmLogging : Pos 25, 1 Bit
   +0x460 FatalAccessTerminationRequested : Pos 26, 1 Bit
   +0x460 DisableSystemAllowedCpuSet : Pos 27, 1 Bit
   +0x460 ProcessStateChangeRequest : Pos 28, 2 Bits
   +0x460 ProcessStateChangeInProgress : Pos 30, 1 Bit
   +0x460 InPrivate        : Pos 31, 1 Bit
   +0x464 Flags            : Uint4B
   +0x464 CreateReported   : Pos 0, 1 Bit
   +0x464 NoDebugInherit   : Pos 1, 1 Bit
   +0x464 ProcessExiting   : Pos 2, 1 Bit
   +0x464 ProcessDelete    : Pos 3, 1 Bit
   +0x464 ManageExecutableMemoryWrites : Pos 4, 1 Bit
   +0x464 VmDeleted        : Pos 5, 1 Bit
   +0x464 OutswapEnabled   : Pos 6, 1 Bit
   +0x464 Outswapped       : Pos 7, 1 Bit
   +0x464 FailFastOnCommitFail : Pos 8, 1 Bit
   +0x464 Wow64VaSpace4Gb  : Pos 9, 1 Bit
   +0x464 AddressSpaceInitialized : Pos 10, 2 Bits
   +0x464 SetTimerResolution : Pos 12, 1 Bit
   +0x464 BreakOnTermination : Pos 13, 1 Bit
   +0x464 DeprioritizeViews : Pos 14, 1 Bit
   +0x464 WriteWatch       : Pos 15, 1 Bit
   +0x464 ProcessInSession : Pos 16, 1 Bit
   +0x464 OverrideAddressSpace : Pos 17, 1 Bit
   +0x464 HasAddressSpace  : Pos 18, 1 Bit
   +0x464 LaunchPrefetched : Pos 19, 1 Bit
   +0x464 Background       : Pos 20, 1 Bit
   +0x464 VmTopDown        : Pos 21, 1 Bit
   +0x464 ImageNotifyDone  : Pos 22, 1 Bit
   +0x464 PdeUpdateNeeded  : Pos 23, 1 Bit
   +0x464 VdmAllowed       : Pos 24, 1 Bit
   +0x464 ProcessRundown   : Pos 25, 1 Bit
   +0x464 ProcessInserted  : Pos 26, 1 Bit
   +0x464 DefaultIoPriority : Pos 27, 3 Bits
   +0x464 ProcessSelfDelete : Pos 30, 1 Bit
   +0x464 SetTimerResolutionLink : Pos 31, 1 Bit
   +0x468 CreateTime       : _LARGE_INTEGER
   +0x470 ProcessQuotaUsage : [2] Uint8B
   +0x480 ProcessQuotaPeak : [2] Uint8B
   +0x490 PeakVirtualSize  : Uint8B
   +0x498 VirtualSize      : Uint8B
   +0x4a0 SessionProcessLinks : _LIST_ENTRY
   +0x4b0 ExceptionPortData : Ptr64 Void
   +0x4b0 ExceptionPortValue : Uint8B
   +0x4b0 ExceptionPortState : Pos 0, 3 Bits
   +0x4b8 Token            : _EX_FAST_REF
   +0x4c0 MmReserved       : Uint8B
"""


def test_layout_fields_equal_the_canned_text(world: World) -> None:
    canned = CANNED_EPROCESS.splitlines()
    assert canned[0] == "nt!_EPROCESS" and len(canned) == 76
    lines = dt(world, "nt!_EPROCESS").splitlines()
    # kd names no type on its own line for a module-qualified name (types_symbols/02, 23, 24)
    assert lines[:75] == canned[1:]
    assert lines[2] == "   +0x440 UniqueProcessId  : Ptr64 Void"
    # unqualified, kd names the type first (memory/07): the canned text whole, header and all
    assert dt(world, "_EPROCESS").splitlines()[:76] == canned


def test_unqualified_name_gets_a_header(world: World) -> None:
    lines = dt(world, "_KPCR").splitlines()
    assert lines[0] == "nt!_KPCR"
    assert lines[1] == "   +0x000 NtTib            : _NT_TIB"


def test_function_pointer_types_keep_their_trailing_blank(world: World) -> None:
    out = dt(world, "nt!_DRIVER_OBJECT")
    assert "   +0x058 DriverInit       : Ptr64     long \n" in out
    assert "   +0x070 MajorFunction    : [28] Ptr64     long \n" in out


def test_every_process_cid_and_image_agree(world: World) -> None:
    for p in world.processes:
        out = dt(world, f"nt!_EPROCESS {p.address:x} UniqueProcessId")
        assert out == f"   +0x440 UniqueProcessId : 0x{p.pid >> 32:08x}`{p.pid & 0xFFFFFFFF:08x} Void\n"
        image = dt(world, f"nt!_EPROCESS {fmt_addr(p.address)} ImageFileName")
        assert image == f'   +0x5a8 ImageFileName : [15]  "{p.image[:14]}"\n'


def test_instance_values(world: World) -> None:
    system = world.processes[0]
    lines = dt(world, f"nt!_EPROCESS {system.address:x}").splitlines()
    assert lines[2] == "   +0x440 UniqueProcessId  : 0x00000000`00000004 Void"
    nxt = world.processes[1].address + 0x448
    assert lines[3] == f"   +0x448 ActiveProcessLinks : _LIST_ENTRY [ {_ptr(nxt)} - 0xfffff800`6321e0f0 ]"
    assert "   +0x460 JobNotReallyActive : 0y0" in lines
    assert "   +0x4d8 RotateInProgress : (null) " in lines
    assert '   +0x5a8 ImageFileName    : [15]  "System"' in lines
    assert "   +0x468 CreateTime       : _LARGE_INTEGER 0x0" in lines


def test_active_process_head_links_the_first_process(world: World) -> None:
    out = dt(world, "nt!_LIST_ENTRY nt!PsActiveProcessHead")
    first = world.processes[0].address + 0x448
    flink = out.splitlines()[0]
    assert flink.startswith(f"   +0x000 Flink            : 0x{first >> 32:08x}`{first & 0xFFFFFFFF:08x} _LIST_ENTRY [ ")
    assert answer(world, "dq nt!PsActiveProcessHead L1") is None or True  # d* is another helper's


def test_driver_object(world: World) -> None:
    drv = world.driver("myfault")
    assert drv is not None
    lines = dt(world, f"nt!_DRIVER_OBJECT {drv.address:x}").splitlines()
    assert '   +0x038 DriverName       : _UNICODE_STRING "\\Driver\\myfault"' in lines
    assert "   +0x000 Type             : 0n4" in lines
    major = next(line for line in lines if "MajorFunction" in line)
    assert major == f"   +0x070 MajorFunction    : [28] {_ptr(drv.dispatch[0])}     long  {world.name(drv.dispatch[0])}"
    init = next(line for line in lines if "DriverInit" in line)
    assert init.endswith(f"     long  {world.name(drv.init)}")


def _ptr(value: int) -> str:
    return f"0x{value >> 32:08x}`{value & 0xFFFFFFFF:08x}"


def test_chosen_fields_pad_to_the_longest_and_follow_the_layout(world: World) -> None:
    p = world.processes[2]
    out = dt(world, f"nt!_EPROCESS {p.address:x} ImageFileName UniqueProcessId Pcb.DirectoryTableBase")
    assert out.splitlines() == [
        "   +0x000 Pcb                    : ",
        f"      +0x028 DirectoryTableBase     : {_ptr(p.dirbase)}",
        f"   +0x440 UniqueProcessId        : {_ptr(p.pid)} Void",
        f'   +0x5a8 ImageFileName          : [15]  "{p.image}"',
    ]


def test_field_dot_expands_one_level(world: World) -> None:
    drv = world.driver("myfault")
    assert drv is not None
    lines = dt(world, f"nt!_DRIVER_OBJECT {drv.address:x} DriverName.").splitlines()
    assert lines[0] == "   +0x038 DriverName  : "
    assert lines[1] == f"      +0x000 Length      : 0x{2 * len(drv.name):x}"
    assert lines[3].endswith('  "\\Driver\\myfault"')


def test_recursion_expands_embedded_and_pointed_to_structures(world: World) -> None:
    cpu = world.processors[1]
    lines = dt(world, f"-r1 nt!_KPCR {cpu.pcr:x}").splitlines()
    assert f"   +0x020 CurrentPrcb      : {_ptr(cpu.prcb)} _KPRCB" in lines
    at = lines.index(f"   +0x020 CurrentPrcb      : {_ptr(cpu.prcb)} _KPRCB")
    assert f"      +0x008 CurrentThread    : {_ptr(cpu.current_thread)} _KTHREAD" in lines[at:]
    assert "      +0x024 Number           : 0x1" in lines[at:]
    # without -r the pointer stays a line
    assert "      +0x024 Number           : 0x1" not in dt(world, f"nt!_KPCR {cpu.pcr:x}").splitlines()


def test_prcb_fields_across_processors(world: World) -> None:
    for cpu in world.processors:
        out = dt(world, f"nt!_KPRCB {cpu.prcb:x} Number MHz CurrentThread")
        assert out.splitlines() == [
            f"   +0x008 CurrentThread : {_ptr(cpu.current_thread)} _KTHREAD",
            f"   +0x024 Number        : {'0' if cpu.index == 0 else hex(cpu.index)}",
            "   +0x044 MHz           : 0xe74",
        ]


def test_wildcards_list_types(world: World) -> None:
    assert dt(world, "nt!*PROCESS*") == (
        "          ntkrnlmp!_KPROCESS\n          ntkrnlmp!_EPROCESS\n          ntkrnlmp!_RTL_USER_PROCESS_PARAMETERS\n"
    )
    listing = dt(world, "nt!_*").splitlines()
    assert "          ntkrnlmp!_PEB" in listing and "          ntkrnlmp!_LIST_ENTRY" in listing


def test_errors(world: World) -> None:
    assert dt(world, "_UNKNOWN") == "Symbol _UNKNOWN not found.\n"
    assert dt(world, "nt!_EPROCESS 0") == "Memory read error 0000000000000000\n"
    assert (
        dt(world, f"nt!_EPROCESS {world.processes[0].address:x} NoSuchField")
        == "Cannot find specified field members.\n"
    )


def test_unicode_string_instance_shows_the_string_first(world: World) -> None:
    drv = world.driver("myfault")
    assert drv is not None
    lines = dt(world, f"_UNICODE_STRING {drv.address + 0x38:x}").splitlines()
    assert lines[:2] == ["nt!_UNICODE_STRING", ' "\\Driver\\myfault"']


def test_new_layouts(world: World) -> None:
    assert dt(world, "nt!_KIDTENTRY64").splitlines()[4] == "   +0x004 Type             : Pos 8, 5 Bits"
    teb = dt(world, "nt!_TEB").splitlines()
    assert "   +0x060 ProcessEnvironmentBlock : Ptr64 _PEB" in teb
    peb = dt(world, "nt!_PEB").splitlines()
    assert "   +0x2c0 SessionId        : Uint4B" in peb
    for name in (
        "_NT_TIB",
        "_KAPC_STATE",
        "_MDL",
        "_IO_STATUS_BLOCK",
        "_KEVENT",
        "_FILE_OBJECT",
        "_HANDLE_TABLE_ENTRY",
        "_OBJECT_TYPE",
    ):
        assert dt(world, f"nt!{name}").startswith("   +0x000 ")


def test_parser_reads_typed_records(world: World) -> None:
    p = world.processes[0]
    record = parse(f"dt nt!_EPROCESS {p.address:x}", dt(world, f"nt!_EPROCESS {p.address:x}"))
    assert record.kind == "type_dump"
    assert record.instance  # type: ignore[attr-defined]
    pid = next(f for f in record.fields if f.name == "UniqueProcessId")  # type: ignore[attr-defined]
    assert pid.value == "0x0000000000000004" and pid.type == "Void"
    links = next(f for f in record.fields if f.name == "ActiveProcessLinks")  # type: ignore[attr-defined]
    assert links.type == "_LIST_ENTRY"
    layout_record = parse("dt nt!_EPROCESS", dt(world, "nt!_EPROCESS"))
    assert layout_record.kind == "type_dump" and not layout_record.instance  # type: ignore[attr-defined]
    listing = parse("dt nt!*PROCESS*", dt(world, "nt!*PROCESS*"))
    assert [t.name for t in listing.types] == [  # type: ignore[attr-defined]
        "ntkrnlmp!_KPROCESS", "ntkrnlmp!_EPROCESS", "ntkrnlmp!_RTL_USER_PROCESS_PARAMETERS"]


def test_list_walk_visits_every_process_then_the_head(world: World) -> None:
    first = world.processes[0].address
    out = dt(world, "nt!_EPROCESS -l ActiveProcessLinks.Flink ImageFileName (poi(nt!PsActiveProcessHead) - 0x448)")
    blocks = out.split("\n\n")
    assert blocks[-1] == ""
    entries = blocks[:-1]
    # a Windows 11 kd transcript of this command: header, a rule of 45 dashes, the link, the field
    assert entries[0].splitlines() == [
        f"ActiveProcessLinks.Flink at {_ptr(first)}",
        "-" * 45,
        f"   +0x448 ActiveProcessLinks :  [ {_ptr(world.processes[1].address + 0x448)} - 0xfffff800`6321e0f0 ]",
        '   +0x5a8 ImageFileName : [15]  "System"',
    ]
    # every process in ActiveProcessLinks order, then the list head's own (pseudo) entry
    assert len(entries) == len(world.processes) + 1
    for block, p in zip(entries, world.processes, strict=False):
        assert block.splitlines()[0] == f"ActiveProcessLinks.Flink at {_ptr(p.address)}"
        assert block.splitlines()[-1] == f'   +0x5a8 ImageFileName : [15]  "{p.image[:14]}"'


def test_unqualified_name_with_fields_keeps_its_header(world: World) -> None:
    p = world.processes[3]
    out = dt(world, f"_KPROCESS {p.address:x} DirectoryTableBase UserDirectoryTableBase")
    # "dt _KPROCESS @$proc DirectoryTableBase UserDirectoryTableBase" in a kd transcript
    assert out.splitlines() == [
        "nt!_KPROCESS",
        f"   +0x028 DirectoryTableBase     : {_ptr(p.dirbase) if p.dirbase >> 32 else hex(p.dirbase)}",
        "   +0x388 UserDirectoryTableBase : 0",
    ]


def test_layout_fields_and_paths(world: World) -> None:
    assert dt(world, "nt!_EPROCESS UniqueProcessId Pcb.DirectoryTableBase").splitlines() == [
        "   +0x000 Pcb                    : ",
        "      +0x028 DirectoryTableBase     : Uint8B",
        "   +0x440 UniqueProcessId        : Ptr64 Void",
    ]
    assert dt(world, "nt!_EPROCESS ActiveProcessLinks.").splitlines()[1:] == [
        "      +0x000 Flink               : Ptr64 _LIST_ENTRY",
        "      +0x008 Blink               : Ptr64 _LIST_ENTRY",
    ]
