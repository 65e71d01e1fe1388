"""Unit tests per family for layouts the corpus lacks (``kP``, ``lm k``, ``dqs``, x64 ``!pte``...)
and for the dispatcher's routing and the error categories.

Outputs below follow the documented kd formats; each test names what it pins down.
"""

from __future__ import annotations

import pytest

from kdmcp.parse import parse, route
from kdmcp.parse.memory import parse_memory
from kdmcp.parse.registers import parse_registers
from kdmcp.parse.stack import parse_stack
from kdmcp.parse.threads import parse_threads

# --------------------------------------------------------------------------- routing


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("k", "stack"),
        ("kb 100", "stack"),
        ("kn20", "stack"),
        ("k = @rsp @rip 20", "stack"),
        ("~*kb", "stack"),
        ("~3 kv", "stack"),
        ("~*e kb", "stack"),
        ("lmDvmSecondDriver", "modules"),
        ("lm k", "modules"),
        ("dd /c1 x L2", "memory"),
        ("dD x", "memory"),
        ("dqs rsp", "memory"),
        ("kd", "memory"),
        ("!db 1000", "memory"),
        ("dt nt!_EPROCESS", "type_dump"),
        ("dx @$curthread", "data_model"),
        ("dv /t", "locals"),
        ("~0s", "registers"),
        ("r rip", "registers"),
        ("rM 0x04", "registers"),
        (".cxr 0x1234", "registers"),
        ("g", "events"),
        ("gu", "events"),
        ("p", "events"),
        ("t 3", "events"),
        (".breakin", "events"),
        ("", "events"),
        ("|", "processes"),
        ("!process 0 0", "processes"),
        ("~", "threads"),
        ("~*", "threads"),
        ("!ready", "threads"),
        ("!analyze -v", "analysis"),
        ("bl", "breakpoints"),
        ("vertarget", "target"),
        (".exr -1", "exception_record"),
        ("!error 5", "error_code"),
        ("? 1+1", "expression"),
        ("x nt!Ke*", "symbols"),
        ("ln rip", "symbols"),
        (".sympath", "symbol_path"),
        (".reload /f", "symbol_load"),
        ("!irp 1234", "object"),
        ("!kdexts.pool 1234", "object"),
    ],
)
def test_route(command: str, kind: str) -> None:
    parser = route(command)
    assert parser is not None, command
    name = getattr(parser, "func", parser).__name__  # partial(parse_stack, per_thread=...) for ~*k
    expected = {
        "stack": "parse_stack",
        "modules": "parse_modules",
        "memory": "parse_memory",
        "type_dump": "parse_type_dump",
        "data_model": "parse_data_model",
        "locals": "parse_locals",
        "registers": "parse_registers",
        "events": ("parse_events", "_parse_unprompted"),
        "processes": "parse_processes",
        "threads": "parse_threads",
        "analysis": "parse_analysis",
        "breakpoints": "parse_breakpoints",
        "target": "parse_target",
        "exception_record": "parse_exception_record",
        "error_code": "parse_error_code",
        "expression": "parse_expression",
        "symbols": "parse_symbols",
        "symbol_path": "parse_symbol_path",
        "symbol_load": "parse_symbol_load",
        "object": "parse_object",
    }[kind]
    assert name in expected if isinstance(expected, tuple) else name == expected


@pytest.mark.parametrize("command", [".echo hi", "as x y", ".load foo", "!unknownext", "~0f"])
def test_unrouted_commands_are_text(command: str) -> None:
    assert route(command) is None
    assert parse(command, "whatever").kind == "text"


# --------------------------------------------------------------------------- stack


def test_kP_parameters_on_following_lines_are_joined() -> None:
    out = (
        " # ChildEBP RetAddr  \n"
        "00 0012fe80 0040150e MyApp!main(\n"
        "\t\t\tint argc = 0n1, \n"
        "\t\t\tchar ** argv = 0x00342fb8)+0x1d [c:\\myapp\\main.cpp @ 12]\n"
        "01 0012ffc0 7c817077 MyApp!mainCRTStartup+0x12f\n"
    )
    r = parse("kP", out)
    assert r.kind == "stack"
    assert len(r.frames) == 2
    f = r.frames[0]
    assert f.function == "main(int argc = 0n1, char ** argv = 0x00342fb8)"
    assert (f.offset, f.source_line) == ("0x1d", 12)
    assert r.frames[1].index == 1


def test_kc_call_sites_only() -> None:
    r = parse("kc", " # Call Site\n00 ntdll!NtWaitForSingleObject\n01 KERNELBASE!WaitForSingleObjectEx+0x8f\n")
    assert [f.call_site for f in r.frames] == ["ntdll!NtWaitForSingleObject", "KERNELBASE!WaitForSingleObjectEx+0x8f"]
    assert r.frames[0].child_sp is None and r.frames[0].return_address is None


def test_stack_with_only_an_error_is_an_error() -> None:
    r = parse("k", "Unable to get program counter\n")
    assert r.kind == "error" and r.category == "context"


def test_stack_thread_headers_without_prefix() -> None:
    out = (
        "\n   0  Id: 7a0.5ac Suspend: 1 Teb: 7ffdf000 Unfrozen\n"
        " # ChildEBP RetAddr  \n"
        "00 0012fe80 0040150e ntdll!KiFastSystemCallRet\n"
    )
    r = parse_stack("kb", out)
    assert r is not None and len(r.threads) == 1 and len(r.threads[0].frames) == 1


# --------------------------------------------------------------------------- registers


def test_single_register_and_pseudo_register() -> None:
    assert parse("r rip", "rip=fffff80240d322f9\n").registers == {"rip": "0xfffff80240d322f9"}
    assert parse("r $t0", "$t0=0000000000000000\n").registers == {"$t0": "0x0000000000000000"}


def test_arm64_register_names_are_generic() -> None:
    out = " x0=0000000000000000   x1=000000d7a1bfe760   x2=0000000000000000   x3=000000d7a1bfe6f0\n"
    r = parse_registers("r", out)
    assert r is not None and r.registers["x1"] == "0x000000d7a1bfe760"


def test_bad_register() -> None:
    r = parse("r zz", "        ^ Bad register error in 'r zz'\n")
    assert (r.kind, r.category, r.message) == ("error", "bad_register", "Bad register error in 'r zz'")


def test_rep_prefix_and_selector_in_current_instruction() -> None:
    out = (
        "ntdll!RtlCompareMemory+0x36:\n"
        "0033:00007ffe`eeed19b6 f348a7          repe cmps qword ptr [rsi],qword ptr [rdi]\n"
    )
    r = parse("p", out)
    assert r.context.mnemonic == "repe cmps"
    assert r.context.operands == "qword ptr [rsi],qword ptr [rdi]"


# --------------------------------------------------------------------------- modules


LMV = """start             end                 module name
fffff803`0e61b000 fffff803`0f0b0000   nt         (pdb symbols)          c:\\symbols\\ntkrnlmp.pdb\\ABC1\\ntkrnlmp.pdb
    Loaded symbol image file: ntkrnlmp.exe
    Image path: ntkrnlmp.exe
    Image name: ntkrnlmp.exe
    Browse all global symbols  functions  data
    Image was built with /Brepro flag.
    Timestamp:        9BC5F6D1 (This is a reproducible build file hash, not a timestamp)
    CheckSum:         00A5C1E1
    ImageSize:        00A95000
    File version:     10.0.19041.1288
    Product version:  10.0.19041.1288
    File flags:       0 (Mask 3F)
    Translations:     0409.04b0
    Information from resource tables:
        CompanyName:      Microsoft Corporation
        ProductVersion:   10.0.19041.1288
        FileVersion:      10.0.19041.1288 (WinBuild.160101.0800)
        FileDescription:  NT Kernel & System
"""


def test_lmv_details() -> None:
    (m,) = parse("lmvm nt", LMV).modules
    assert m.symbol_status == "pdb symbols"
    assert m.file_version == "10.0.19041.1288" and m.product_version == "10.0.19041.1288"
    assert m.company_name == "Microsoft Corporation"
    assert m.file_description == "NT Kernel & System"
    assert m.checksum == "0x00a5c1e1"


def test_lm_k_and_export_symbols() -> None:
    out = (
        "start             end                 module name\n"
        "fffff800`0b200000 fffff800`0b2d8000   acpi       (deferred)             \n"
        "fffff800`0c000000 fffff800`0c010000   foo        (export symbols)       foo.sys\n"
    )
    r = parse("lm k", out)
    assert [(m.name, m.symbol_status) for m in r.modules] == [("acpi", "deferred"), ("foo", "export symbols")]


def test_lmf_image_paths() -> None:
    out = "fffff800`0b200000 fffff800`0b2d8000   acpi     \\SystemRoot\\System32\\drivers\\ACPI.sys\n"
    (m,) = parse("lmf", out).modules
    assert m.image_path == "\\SystemRoot\\System32\\drivers\\ACPI.sys" and m.symbol_status is None


# --------------------------------------------------------------------------- processes / threads


def test_modern_process_list() -> None:
    out = (
        "**** NT ACTIVE PROCESS DUMP ****\n"
        "PROCESS ffffe0002a277840\n"
        "    SessionId: none  Cid: 0004    Peb: 00000000  ParentCid: 0000\n"
        "    DirBase: 001aa000  ObjectTable: ffffc00021a03000  HandleCount: <Data Not Accessible>\n"
        "    Image: System\n\n"
        "PROCESS ffffe0002c8b6080\n"
        "    SessionId: 1  Cid: 0f3c    Peb: 7ff5ffd6c000  ParentCid: 0e3c\n"
        "    DirBase: 6b6c7000  ObjectTable: ffffc00025d7b880  HandleCount: 1243.\n"
        "    Image: explorer.exe\n"
    )
    r = parse("!process 0 0", out)
    assert [p.image for p in r.processes] == ["System", "explorer.exe"]
    assert r.processes[0].session_id == "none" and r.processes[0].handle_count is None
    assert r.processes[1].handle_count == 1243 and r.processes[1].peb == "0x7ff5ffd6c000"


def test_ready_threads() -> None:
    out = (
        "Processor 0: Ready Threads at priority 8\n"
        "    THREAD ffffa80e1d1c5080  Cid 0c3c.0c40  Teb: 0000000000000000 Win32Thread: 0000000000000000 READY on processor 0\n"  # noqa: E501 - real output line, kept whole
    )
    r = parse_threads("!ready", out)
    assert r is not None
    (t,) = r.threads
    assert (t.state, t.processor, t.cid) == ("READY", 0, "0c3c.0c40")


# --------------------------------------------------------------------------- memory


def test_dqs_symbols() -> None:
    out = "fffff801`5f9a3a10  fffff801`5f89c4e0 nt!KiSystemServiceCopyEnd+0x25\nfffff801`5f9a3a18  00000000`00000000\n"
    r = parse("dqs rsp L2", out)
    assert r.unit == "qword"
    assert r.rows[0].symbols == ["nt!KiSystemServiceCopyEnd+0x25"] and r.rows[1].symbols == [None]


def test_partial_db_row_and_dc_and_dw() -> None:
    db = parse_memory("db x L5", "00000000`7777cb60  68 65 6c 6c 6f                                   hello\n")
    assert db is not None and db.rows[0].values == ["68", "65", "6c", "6c", "6f"] and db.rows[0].ascii == "hello"
    dc = parse("dc x", "00400000  00905a4d 00000003 00000004 0000ffff  MZ..............\n")
    assert dc.rows[0].values[0] == "00905a4d" and dc.rows[0].ascii == "MZ.............."
    dw = parse("dw x", "00400000  5a4d 0090 0003 0000 0004 0000 ffff 0000\n")
    assert dw.unit == "word" and len(dw.rows[0].values) == 8


def test_physical_memory_rows() -> None:
    r = parse("!db 1000", "#    1000 00 00 00 00 00 00 00 00-00 00 00 00 00 00 00 00 ................\n")
    assert r.kind == "memory" and r.rows[0].address == "0x1000"


def test_unreadable_memory_is_an_error() -> None:
    r = parse("dd 0", "00000000  ???????? ???????? ???????? ????????\n")
    assert r.kind == "memory" and r.rows[0].values == ["????????"] * 4
    err = parse("dd nosuch", "Couldn't resolve error at 'nosuch'\n")
    assert (err.kind, err.category) == ("error", "unresolved_symbol")
    mem = parse("dd 0 L1", "       ^ Memory access error in 'dd 0 L1'\n")
    assert mem.category == "memory_access"


# --------------------------------------------------------------------------- breakpoints / symbols / expressions


def test_bl_deferred_data_and_command() -> None:
    out = (
        " 0 e Disable Clear  fffff803`52c4a2fc     0001 (0001) nt!MmCreateProcessAddressSpace\n"
        " 1 eu                                      0001 (0001) (foo!bar)\n"
        " 2 d Enable Clear  fffff803`11112222 w 4 0002 (0004) nt!KiFoo\n"
        '     "r rax; g"\n'
    )
    r = parse("bl", out)
    b0, b1, b2 = r.breakpoints
    assert b0.enabled and b0.address == "0xfffff80352c4a2fc"
    assert b1.unresolved and b1.address is None and b1.symbol == "foo!bar"
    assert (b2.enabled, b2.access, b2.size, b2.pass_count, b2.initial_pass_count) == (False, "w", 4, 2, 4)
    assert b2.command == "r rax; g"


def test_bm_lists_what_it_set() -> None:
    r = parse("bm nt!MmCreate*", '  1: fffff803`52c4a2fc @!"nt!MmCreateProcessAddressSpace"\n')
    assert r.breakpoints[0].symbol == "nt!MmCreateProcessAddressSpace"


def test_ln_neighbours_and_exact_match() -> None:
    out = (
        "(fffff801`5f9a3a10)   nt!KiPageFault+0x469   |  (fffff801`5f9a3f00)   nt!KiRaiseSecurityCheckFailure\n"
        "Exact matches:\n"
        "    nt!KiPageFault (<no parameter info>)\n"
    )
    r = parse("ln rip", out)
    assert [s.name for s in r.symbols] == ["nt!KiPageFault+0x469", "nt!KiRaiseSecurityCheckFailure", "nt!KiPageFault"]
    assert r.symbols[2].exact and r.symbols[0].address == "0xfffff8015f9a3a10"


def test_cpp_expression() -> None:
    r = parse("?? sizeof(nt!_EPROCESS)", "unsigned int64 0xa40\n")
    assert r.value == "0xa40" and r.fields["type"] == "unsigned int64"


# --------------------------------------------------------------------------- objects / exceptions / events


def test_x64_pte() -> None:
    out = (
        "                                           VA fffff80240d322f9\n"
        "PXE at FFFFF5FAFD7EBF80    PPE at FFFFF5FAFD7F0048    PDE at FFFFF5FAFE009028    PTE at FFFFF5FC01205E90\n"
        "contains 0000000004F09063  contains 0000000004F0A063  contains 0A0000013F6F1863  contains 090000013E47A021\n"
        "pfn 4f09      ---DA--KWEV  pfn 4f0a      ---DA--KWEV  pfn 13f6f1    ---DA--KWEV  pfn 13e47a    ----A--KREV\n"
    )
    r = parse("!pte fffff80240d322f9", out)
    assert r.address == "0xfffff80240d322f9"
    assert [p.level for p in r.pte_levels] == ["PXE", "PPE", "PDE", "PTE"]
    assert r.pte_levels[3].contains == "0x090000013e47a021" and r.pte_levels[3].flags == "----A--KREV"


def test_windows8_irp_layout() -> None:
    out = (
        "Irp is active with 3 stacks 3 is current (= 0xffffe000d94e6e08)\n"
        " No Mdl: No System Buffer: Thread ffffe000d8e89880:  Irp stack trace.  \n"
        "     cmd  flg cl Device   File     Completion-Context\n"
        ">[IRP_MJ_DEVICE_CONTROL(e), N/A(0)]\n"
        "            5 e0 ffffe000d69c5050 ffffe000d9f2c070 fffff8016f3e2a40-ffffe000d94e6d50 Success Error Cancel \n"
        "\t       \\Driver\\ACPI\tnt!IopUnloadSafeCompletion\n"
        "\t\t\tArgs: 00000000 00000000 00000000 00000000\n"
    )
    r = parse("!irp ffffe000d94e6d50", out)
    (loc,) = r.irp_stack
    assert loc.current and loc.major == "IRP_MJ_DEVICE_CONTROL(e)" and loc.device == "0xffffe000d69c5050"
    assert loc.driver == "\\Driver\\ACPI" and loc.completion_symbol == "nt!IopUnloadSafeCompletion"
    assert r.fields["thread"] == "0xffffe000d8e89880"


def test_lastevent() -> None:
    out = "Last event: 1450.1424: Integer divide-by-zero - code c0000094 (first chance)\n  debugger time: Mon Apr 7\n"
    r = parse(".lastevent", out)
    assert (r.thread, r.code, r.first_chance) == ("1450.1424", "0xc0000094", True)


def test_fatal_system_error_event() -> None:
    out = (
        "*** Fatal System Error: 0x000000d1\n"
        "                       (0x0000000000000008,0x0000000000000002,0x0000000000000000,0xFFFFF8024E50C688)\n\n"
        "Break instruction exception - code 80000003 (first chance)\n"
    )
    r = parse("g", out)
    assert r.events[0].kind == "bugcheck" and r.events[0].code == "0x000000d1"
    assert "0xFFFFF8024E50C688" in r.events[0].details["args"]
    assert r.events[1].code == "0x80000003"


def test_running_target_gives_empty_events() -> None:
    assert parse("g", "").kind == "text"
    assert parse("g", "       ^ No runnable debuggees error in 'g'\n").category == "no_target"


# --------------------------------------------------------------------------- error categories


@pytest.mark.parametrize(
    ("command", "output", "category"),
    [
        ("u bad", "       ^ Syntax error in 'u bad'", "syntax"),
        ("r rip rip", "          ^ Extra character error in 'r rip rip'", "syntax"),
        ("db 0 L-1", "        ^ Range error in 'db 0 L-1'", "invalid_argument"),
        (
            "dd KiGlobalTimerResolutionRequests L1",
            "Couldn't resolve error at 'KiGlobalTimerResolutionRequests '",
            "unresolved_symbol",
        ),
        ("dt nt!_FOO", "Symbol nt!_FOO not found.", "unresolved_symbol"),
        ("!foo", "No export foo found", "no_export"),
        (
            ".reload foo.sys",
            "*** ERROR: Module load completed but symbols could not be loaded for foo.sys",
            "symbol_load",
        ),
        (
            ".dump c:\\x.dmp",
            "          ^ Operation not supported in current debug session '.dump c:\\x.dmp'",
            "not_supported",
        ),
        (
            "!load foo",
            'The call to LoadLibrary(foo) failed, Win32 error 0n2\n    "The system cannot find the file specified."',
            "extension_load",
        ),
        ("bp 0", "Unable to insert breakpoint 0 at 00000000`00000000, Win32 error 0n998", "breakpoint"),
    ],
)
def test_error_categories(command: str, output: str, category: str) -> None:
    r = parse(command, output + "\n")
    assert r.kind == "error" and r.category == category, r
    assert r.raw == output + "\n"


def test_warnings_ride_along_with_a_successful_record() -> None:
    out = (
        "*** ERROR: Symbol file could not be found.  Defaulted to export symbols for ntdll.dll - \n"
        " # Child-SP          RetAddr           Call Site\n"
        "00 00000000`0015eed0 00000000`77732ef5 ntdll!DbgBreakPoint\n"
    )
    r = parse("k", out)
    assert r.kind == "stack" and len(r.frames) == 1
    assert r.warnings == ["*** ERROR: Symbol file could not be found.  Defaulted to export symbols for ntdll.dll -"]
