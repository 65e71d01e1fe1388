"""The user world's commands (kdmcp/sim/world/cmd_user.py) through ``answer(world, cmd, kernel=False)``.

Outputs are held to the canned cdb target's texts they replace (git show
c564865:kdmcp/sim/data/default_cdb.yaml), to one another (``~`` ids are ``!teb``'s ClientId, every
``k`` frame lies in an ``lm`` range, ``r``'s rip is ``k``'s frame 0) and to the project's parser.
"""

from __future__ import annotations

import re

import pytest

from kdmcp.parse import parse
from kdmcp.sim.world.cmd_user import current_index
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.user import build_user
from kdmcp.sim.world.user_events import fault

PID = 0x1A2C


@pytest.fixture(scope="module")
def world() -> World:
    return build_user(0, PID, "")


@pytest.fixture
def fresh() -> World:
    return build_user(0, PID, "")


def ask(world: World, command: str) -> str:
    out = answer(world, command, kernel=False)
    assert out is not None, command
    return out


# the canned texts these commands replace, byte for byte
CANNED = {
    "~": (
        "   0  Id: 1a2c.3b4 Suspend: 1 Teb: 00000000`002d2000 Unfrozen\n"
        "   1  Id: 1a2c.1e48 Suspend: 1 Teb: 00000000`002d4000 Unfrozen\n"
        ".  2  Id: 1a2c.5d0 Suspend: 1 Teb: 00000000`002d6000 Unfrozen\n"
    ),
    "|": ".  0\tid: 1a2c\tattach\tname: C:\\target\\app.exe\n",
    "k": (
        " # Child-SP          RetAddr               Call Site\n"
        "00 00000000`00affb68 00007ffc`81ac7c0e     ntdll!DbgBreakPoint\n"
        "01 00000000`00affb70 00007ffc`80e37034     ntdll!DbgUiRemoteBreakin+0x4e\n"
        "02 00000000`00affba0 00007ffc`81a52651     KERNEL32!BaseThreadInitThunk+0x14\n"
        "03 00000000`00affbd0 00000000`00000000     ntdll!RtlUserThreadStart+0x21\n"
    ),
    ".exr -1": (
        "ExceptionAddress: 00007ffc81a986a0 (ntdll!DbgBreakPoint)\n"
        "   ExceptionCode: 80000003 (Break instruction exception)\n"
        "  ExceptionFlags: 00000000\n"
        "NumberParameters: 1\n"
        "   Parameter[0]: 0000000000000000\n"
    ),
    ".lastevent": (
        "Last event: 1a2c.5d0: Break instruction exception - code 80000003 (first chance)\n"
        "  debugger time: Mon Mar  4 10:15:42.118 2024 (UTC + 0:00)\n"
    ),
    "lm m ntdll": (
        "Browse full module list\n"
        "start             end                 module name\n"
        "00007ffc`81a00000 00007ffc`81bf0000   ntdll      (pdb symbols)          "
        "C:\\ProgramData\\Dbg\\sym\\ntdll.pdb\\63E12347526A46144B98F8CF61CDED791\\ntdll.pdb\n"
    ),
    "!heap -s": (
        "*" * 120 + "\n" + " " * 46 + "NT HEAP STATS BELOW\n" + "*" * 120 + "\n"
        "LFH Key                   : 0x5c3a91e07d24b6f8\n"
        "Termination on corruption : ENABLED\n"
        "          Heap     Flags   Reserv  Commit  Virt   Free  List   UCR  Virt  Lock  Fast \n"
        "                            (k)     (k)    (k)     (k) length      blocks cont. heap \n" + "-" * 85 + "\n"
        "0000000000530000 00000002    1020    148   1020     13     6     1    0      0   LFH\n"
        "0000000000410000 00008000      64      4     64      2     1     1    0      0      \n" + "-" * 85 + "\n\n"
    ),
    "!teb": (
        "TEB at 00000000002d6000\n"
        "    ExceptionList:        0000000000000000\n"
        "    StackBase:            0000000000b00000\n"
        "    StackLimit:           0000000000afc000\n"
        "    SubSystemTib:         0000000000000000\n"
        "    FiberData:            0000000000001e00\n"
        "    ArbitraryUserPointer: 0000000000000000\n"
        "    Self:                 00000000002d6000\n"
        "    EnvironmentPointer:   0000000000000000\n"
        "    ClientId:             0000000000001a2c . 00000000000005d0\n"
        "    RpcHandle:            0000000000000000\n"
        "    Tls Storage:          0000000000533f10\n"
        "    PEB Address:          00000000002d1000\n"
        "    LastErrorValue:       0\n"
        "    LastStatusValue:      0\n"
        "    Count Owned Locks:    0\n"
        "    HardErrorMode:        0\n"
    ),
}


@pytest.mark.parametrize("command", sorted(CANNED))
def test_the_canned_texts(world: World, command: str) -> None:
    assert ask(world, command) == CANNED[command]


def test_r_is_the_canned_registers_with_the_flags_of_efl(world: World) -> None:
    out = ask(world, "r").splitlines()
    assert out[0] == "rax=00000000002d1000 rbx=0000000000000000 rcx=00007ffc81ac7bc0"
    assert out[3] == " r8=0000000000affb68  r9=0000000000000000 r10=0000000000000000"
    assert out[6] == "iopl=0         nv up ei pl zr na pe nc"  # efl 246: PF set is "pe"
    assert out[7] == "cs=0033  ss=002b  ds=002b  es=002b  fs=0053  gs=002b             efl=00000246"
    assert out[8:] == ["ntdll!DbgBreakPoint:", "00007ffc`81a986a0 cc              int     3"]
    assert ask(world, "r rax") == "rax=00000000002d1000\n"


def test_lm_lists_every_image_by_address(world: World) -> None:
    rows = ask(world, "lm").splitlines()
    assert rows[0] == "start             end                 module name"
    assert rows[1] == "00007ff7`91d80000 00007ff7`91d9b000   app        (private pdb symbols)  C:\\target\\app.pdb"
    assert rows[3] == "00007ffc`7f600000 00007ffc`7f8c7000   KERNELBASE   (deferred)             "
    assert [r.split()[2] for r in rows[1:]] == ["app", "ucrtbase", "KERNELBASE", "KERNEL32", "ntdll"]
    assert ask(world, "lm f").splitlines()[4].endswith("   KERNEL32   C:\\Windows\\System32\\KERNEL32.DLL")


def _lm_ranges(world: World) -> list[tuple[int, int]]:
    out = []
    for row in ask(world, "lm").splitlines()[1:]:
        start, end = (int(w.replace("`", ""), 16) for w in row.split()[:2])
        out.append((start, end))
    return out


def test_every_stack_frame_lies_in_a_listed_module(world: World) -> None:
    ranges = _lm_ranges(world)
    sites = re.findall(r"^[0-9a-f]{2} \S+ (\S+)", ask(world, "~*k"), re.MULTILINE)
    returns = [int(s.replace("`", ""), 16) for s in sites if s != "00000000`00000000"]
    assert len(returns) == 11
    assert all(any(lo <= r < hi for lo, hi in ranges) for r in returns)


def test_thread_ids_are_the_tebs_client_ids(fresh: World) -> None:
    rows = ask(fresh, "~").splitlines()
    for row in rows:
        m = re.match(r"[.# ]\s*(\d+)  Id: (\w+)\.(\w+) Suspend: 1 Teb: (\S+) Unfrozen$", row)
        assert m is not None, row
        ask(fresh, f"~{m.group(1)}s")
        assert current_index(fresh) == int(m.group(1))
        teb = ask(fresh, "!teb")
        assert teb.startswith(f"TEB at {m.group(4).replace('`', '')}\n")
        assert f"ClientId:             {int(m.group(2), 16):016x} . {int(m.group(3), 16):016x}\n" in teb


def test_a_thread_switch_moves_k_and_r(fresh: World) -> None:
    assert ask(fresh, "~1s") == "ntdll!NtWaitForWorkViaWorkerFactory+0x14:\n00007ffc`81a94e64 c3              ret\n"
    assert ask(fresh, "~").splitlines()[1].startswith(".  1  Id: 1a2c.1e48")
    assert ask(fresh, "~").splitlines()[2].startswith("#  2  Id: 1a2c.5d0")  # the event's thread
    frame0 = ask(fresh, "k").splitlines()[1]
    assert frame0 == "00 00000000`008ff6f8 00007ffc`81a331b4     ntdll!NtWaitForWorkViaWorkerFactory+0x14"
    assert "rip=00007ffc81a94e64 rsp=00000000008ff6f8" in ask(fresh, "r")
    assert ask(fresh, "~7s") == "       ^ Illegal thread error in '~7s'\n"
    assert ask(fresh, "~#").startswith("#  2  Id: 1a2c.5d0 Suspend: 1 Teb: 00000000`002d6000 Unfrozen\n")
    assert "      Start: ntdll!DbgUiRemoteBreakin (00007ffc`81ac7bc0)\n" in ask(fresh, "~~[5d0]")


def test_the_main_thread_waits_in_wmain_with_its_source_line(world: World) -> None:
    block = ask(world, "~0k")
    assert block.startswith("\n   0  Id: 1a2c.3b4 Suspend: 1 Teb: 00000000`002d2000 Unfrozen\n")
    assert "     KERNELBASE!WaitForSingleObjectEx+0x8e\n" in block
    assert "     app!wmain+0xf [C:\\src\\app\\app.cpp @ 13] \n" in block
    assert "[C:\\src" not in ask(world, "~0kL")


def test_kb_args_are_the_stack_memory(world: World) -> None:
    row = ask(world, "kb").splitlines()[2]
    assert row.startswith("01 00000000`00affb70 00007ffc`80e37034     : ")
    # the fourth home slot, 00affb90, holds DbgUiRemoteBreakin (the canned dq 00affb68)
    assert row.split(" : ")[1].split()[3] == "00007ffc`81ac7bc0"


def test_peb_reads_the_loader_lists_and_parameters(world: World) -> None:
    out = ask(world, "!peb")
    assert out.startswith("PEB at 00000000002d1000\n    InheritedAddressSpace:    No\n")
    assert "    Ldr.InLoadOrderModuleList:           0000000000532ba0 . 0000000000533c30\n" in out
    assert "            7ff791d80000 65e1b2c4 Mar 01 10:49:40 2024 C:\\target\\app.exe\n" in out
    assert "            7ffc7f600000 2b6a0c33 Jan 30 05:03:47 1993 C:\\Windows\\System32\\KERNELBASE.dll\n" in out
    bases = re.findall(r"^ {12}([0-9a-f]{12}) ", out, re.MULTILINE)
    assert sorted(int(b, 16) for b in bases) == sorted(lo for lo, _ in _lm_ranges(world))
    assert "    CommandLine:  '\"C:\\target\\app.exe\" '\n    DllPath:      '< Name not readable >'\n" in out
    assert out.endswith("        USERPROFILE=C:\\Users\\dev\n        windir=C:\\Windows\n")


def test_heap_list(world: World) -> None:
    assert ask(world, "!heap") == (
        "        Heap Address      NT/Segment Heap\n\n"
        "              530000              NT Heap\n"
        "              410000              NT Heap\n"
    )


def test_a_launch_faults_and_the_exception_commands_follow() -> None:
    world = build_user(0, PID, "app.exe")
    assert ask(world, "|") == ".  0\tid: 1a2c\tcreate\tname: C:\\target\\app.exe\n"
    assert len(ask(world, "lm").splitlines()) == 3
    fault(world)
    assert len(ask(world, "lm").splitlines()) == 6
    assert ask(world, ".exr -1") == (
        "ExceptionAddress: 00007ff791d81014 (app!wmain+0x0000000000000014)\n"
        "   ExceptionCode: c0000005 (Access violation)\n"
        "  ExceptionFlags: 00000000\n"
        "NumberParameters: 2\n"
        "   Parameter[0]: 0000000000000001\n"
        "   Parameter[1]: 0000000000000000\n"
        "Attempt to write to address 0000000000000000\n"
    )
    ecxr = ask(world, ".ecxr").splitlines()
    assert ecxr[0] == "rax=0000000000000000 rbx=0000000000000000 rcx=00007ffc81a954d4"
    assert ecxr[2] == "rip=00007ff791d81014 rsp=00000000006ff8b0 rbp=0000000000000000"
    assert ecxr[-1] == "00007ff7`91d81014 45891b          mov     dword ptr [r11],r11d ds:00000000`00000000=????????"
    assert ask(world, "k").splitlines()[1] == (
        "00 00000000`006ff8b0 00007ff7`91d811d2     app!wmain+0x14 [C:\\src\\app\\app.cpp @ 14] "
    )
    assert ask(world, ".lastevent").startswith(
        "Last event: 1a2c.1a8: Access violation - code c0000005 (first chance)\n"
    )


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("~", "threads"),
        ("~*k", "stack"),
        ("k", "stack"),
        ("kb", "stack"),
        ("r", "registers"),
        (".ecxr", "registers"),
        ("|", "processes"),
        ("lm", "modules"),
        ("!peb", "object"),
        ("!teb", "object"),
        ("!heap -s", "object"),
        (".exr -1", "exception_record"),
        (".lastevent", "exception_record"),
    ],
)
def test_outputs_parse_to_their_records(world: World, command: str, kind: str) -> None:
    record = parse(command, ask(world, command))
    assert record.kind == kind
    data = record.model_dump()
    if kind == "threads":
        assert [t["thread_id"] for t in data["threads"]] in (["3b4", "1e48", "5d0"], ["0x3b4", "0x1e48", "0x5d0"])
    if kind == "modules":
        assert len(data["modules"]) == 5
    if command == "!heap -s":
        assert [h["heap"] for h in data["heap_summaries"]] == ["0x0000000000530000", "0x0000000000410000"]
    if command == "!peb":
        assert len(data["entries"]) == 5


def test_the_commands_are_deterministic(world: World) -> None:
    other = build_user(0, PID, "")
    for command in ("~*k", "r", "!peb", "kb", "lm"):
        assert ask(other, command) == ask(world, command)


def test_user_commands_leave_a_kernel_world_alone() -> None:
    from kdmcp.sim.world import build

    kernel = build(0, 2)
    assert answer(kernel, "~", kernel=True) is None
    assert answer(kernel, "|", kernel=True) is None


@pytest.mark.process
def test_the_simulated_cdb_answers_from_the_user_world() -> None:
    """``cdb -p`` end to end: a thread switch and the heap list come from the world."""
    import sys

    from pexpect.popen_spawn import PopenSpawn

    cdb = PopenSpawn([sys.executable, "-m", "kdmcp.sim", "cdb", "-p", "6700"], timeout=10)
    try:
        cdb.expect_exact("0:002> ")
        cdb.sendline("~1s")
        cdb.expect_exact("ntdll!NtWaitForWorkViaWorkerFactory+0x14:\r\n00007ffc`81a94e64 c3              ret\r\n")
        cdb.sendline("!heap")
        cdb.expect_exact(
            "        Heap Address      NT/Segment Heap\r\n\r\n              530000              NT Heap\r\n"
        )
        cdb.sendline("q")
        cdb.expect_exact("quit:")
    finally:
        if cdb.proc.poll() is None:
            cdb.proc.kill()
        cdb.proc.wait(timeout=10)
        cdb._read_thread.join(timeout=10)
        for stream in (cdb.proc.stdin, cdb.proc.stdout):
            if stream is not None:
                stream.close()


def test_address_names_the_region_of_code_stacks_and_free_space(world: World) -> None:
    code = ask(world, "!address ntdll!NtWaitForSingleObject").splitlines()
    assert code[:2] == ["", "Usage:                  Image"]
    assert "Allocation Base:        00007ffc`81a00000" in code  # ntdll's base, as lm lists it
    assert "Protect:                00000020          PAGE_EXECUTE_READ" in code
    assert "Loaded Image Name:      C:\\Windows\\SYSTEM32\\ntdll.dll" in code
    assert "More info:              ln 0x7ffc81a94eb0" in code
    stack = ask(world, "!address @rsp")
    assert "Usage:                  Stack\nBase Address:           00000000`00afc000\n" in stack  # !teb's StackLimit
    assert stack.endswith("More info:              ~2k\n\n\nContent source: 1 (target), length: 498\n")
    free = ask(world, "!address 0")
    assert "Usage:                  Free\n" in free and free.endswith("Content source: 0 (invalid), length: 2d1000\n")
    record = parse("!address 530010", ask(world, "!address 530010"))
    assert record.kind == "object" and record.model_dump()["fields"]["Usage"] == "Heap"
