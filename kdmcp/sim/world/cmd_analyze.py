"""``!analyze`` and ``!analyze -v`` from the world: the bugcheck it is in, or the break it stopped at.

A world in a bugcheck (:func:`.cmd_report.crash`) gets the DRIVER_IRQL_NOT_LESS_OR_EQUAL
analysis the default target has always printed (modelled on corpus analyze/01 and 02 for the
content, analyze/12 for the current layout with ``KEY_VALUES_STRING``), every figure read from
the world: the arguments, the process and thread of ``STACK_COMMAND``, myfault's base in
``Failure.Exception.IP.*``, the faulting instruction decoded from myfault's bytes (``8b03``),
``STACK_TEXT`` from the thread's frames and the stack's memory.

A live target stopped by a break-in or a breakpoint is in no bugcheck: kd analyses the break
instruction exception of the current thread. Its header is the one kd prints for a code it
has no name for (``Unknown bugcheck code (0)`` / ``Unknown bugcheck description``, arguments
without descriptions: the form issue threads quote, e.g. microsoft/WinDbg-Feedback#17), the
exception is 80000003, and the bucket names the routine the thread stopped in
(``0x0_nt!DbgBreakPointWithStatus``: kd's bucket for an unnamed code is ``0x<code>_<symbol>``).
That layout is reconstructed, not copied from a published transcript of this case.
"""

from __future__ import annotations

import zlib

from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world.cmd_report import TRAP_FRAME, TRAP_REGS
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Thread
from kdmcp.sim.world.registry import command
from kdmcp.sim.world.regtext import location, register_block

__all__ = ["analysis", "stack_text"]

_STARS = "*" * 79
_BANNER = (
    f"{_STARS}\n*{' ' * 77}*\n*                        Bugcheck Analysis                                    *\n"
    f"*{' ' * 77}*\n{_STARS}\n\n"
)


def _q(value: int | None) -> str:
    """``00000000`0000000a``, or ``????????`????????`` where memory is unreadable."""
    return "????????`????????" if value is None else fmt_addr(value)


def stack_text(world: World, t: Thread) -> str:
    """``STACK_TEXT``'s rows: Child-SP, RetAddr, the four home slots from memory, the site's name
    (corpus analyze/02: ``ffffd48f`77af9698 fffff800`62a09169     : 00000000`0000000a … : nt!KeBugCheckEx``)."""
    space = world.space(world.owner(t))
    rows = []
    for i, f in enumerate(t.frames):
        ret = t.frames[i + 1].site if i + 1 < len(t.frames) else 0
        args = " ".join(_q(space.u64(f.child_sp + 8 * k)) for k in range(1, 5))
        name = world.name(f.site) if world.symbols.module_at(f.site) else f"0x{fmt_addr(f.site)}"
        rows.append(f"{fmt_addr(f.child_sp)} {fmt_addr(ret)}     : {args} : {name}\n")
    return "".join(rows)


def _symbol(world: World, address: int) -> tuple[str, str, str, int]:
    """(SYMBOL_NAME, MODULE_NAME, IMAGE_NAME, offset): ``myfault+1981`` or ``nt!Foo+0``
    (kd's analysis spells offsets in bare hex, and ``+0`` at a routine's start)."""
    mod, sym, off = world.symbols.nearest(address)
    if mod is None:
        return fmt_addr(address), "Unknown_Module", "Unknown_Image", 0
    name = f"{mod.name}!{sym.name}+{off:x}" if sym is not None else f"{mod.name}+{off:x}"
    return name, mod.name, mod.image, off


def _key_values(pairs: list[tuple[str, str]]) -> str:
    body = "".join(f"    Key  : {k}\n    Value: {v}\n\n" for k, v in pairs)
    return f"KEY_VALUES_STRING: 1\n\n{body}\n"


_ANALYSIS_KEYS = [
    ("Analysis.CPU.mSec", "1859"),
    ("Analysis.Elapsed.mSec", "8842"),
    ("Analysis.IO.Other.Mb", "0"),
    ("Analysis.IO.Read.Mb", "1"),
    ("Analysis.IO.Write.Mb", "27"),
    ("Analysis.Init.CPU.mSec", "343"),
    ("Analysis.Init.Elapsed.mSec", "30511"),
    ("Analysis.Memory.CommitPeak.Mb", "98"),
    ("Analysis.Version.DbgEng", "10.0.26100.1"),
    ("Analysis.Version.Description", "10.2408.27.01 amd64fre"),
    ("Analysis.Version.Ext", "1.2408.27.1"),
]
_OS_KEYS = [("WER.OS.Branch", "vb_release"), ("WER.OS.Version", "10.0.19041.1")]


def _hash(bucket: str) -> str:
    """A FAILURE_ID_HASH-shaped GUID derived from the bucket (the same bucket, the same hash)."""
    if bucket == "AV_myfault!unknown_function":
        return "{9745090a-9bce-ccba-c096-ca6e9ca04c64}"  # the canned analysis's
    h = "".join(f"{zlib.crc32(f'{bucket}{i}'.encode()):08x}" for i in range(4))
    return f"{{{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}}}"


def _footer(sym: str, module: str, image: str, offset: int, stack_command: str, bucket: str) -> str:
    return (
        f"SYMBOL_NAME:  {sym}\n\n"
        f"MODULE_NAME: {module}\n\n"
        f"IMAGE_NAME:  {image}\n\n"
        f"STACK_COMMAND: {stack_command}\n\n"
        f"BUCKET_ID_FUNC_OFFSET:  {offset:x}\n\n"
        f"FAILURE_BUCKET_ID:  {bucket}\n\n"
        "OS_VERSION:  10.0.19041.1\n\n"
        "BUILDLAB_STR:  vb_release\n\n"
        "OSPLATFORM_TYPE:  x64\n\n"
        "OSNAME:  Windows 10\n\n"
        f"FAILURE_ID_HASH:  {_hash(bucket)}\n\n"
        "Followup:     MachineOwner\n"
        "---------\n\n"
    )


def _d1(world: World) -> str:
    """The D1 analysis (corpus analyze/01, 02, 12), from the world in :func:`.cmd_report.crash`'s state."""
    assert world.bugcheck is not None
    code, args = world.bugcheck
    t = world.thread(cat.CLIENT_THREAD) or world.current_thread()
    proc = world.owner(t)
    fault = args[3]
    sym, module, image, offset = _symbol(world, fault)
    bucket = f"AV_{module}!unknown_function"
    trap = dict(TRAP_REGS, efl=0x286)  # "ng nz na pe": the compare before the read
    # the instruction with its memory operand's address and value, for the trap frame's
    # registers: "ds:00000000`00000000=????????"
    here = location(world, fault, trap).rstrip("\n")
    keys = [
        *_ANALYSIS_KEYS,
        ("Bugcheck.Code.LegacyAPI", f"{code:#x}"),
        ("Bugcheck.Code.TargetModel", f"{code:#x}"),
        ("Failure.Bucket", bucket),
        ("Failure.Exception.IP.Address", f"{fault:#x}"),
        ("Failure.Exception.IP.Module", module),
        ("Failure.Exception.IP.Offset", f"{offset:#x}"),
        ("Failure.Hash", _hash(bucket)),
        *_OS_KEYS,
    ]
    return (
        _BANNER + "DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)\n"
        "An attempt was made to access a pageable (or completely invalid) address at an\n"
        "interrupt request level (IRQL) that is too high.  This is usually\n"
        "caused by drivers using improper addresses.\n"
        "If kernel debugger is available get stack backtrace.\n"
        "Arguments:\n"
        f"Arg1: {args[0]:016x}, memory referenced\n"
        f"Arg2: {args[1]:016x}, IRQL\n"
        f"Arg3: {args[2]:016x}, value 0 = read operation, 1 = write operation\n"
        f"Arg4: {args[3]:016x}, address which referenced memory\n\n"
        "Debugging Details:\n------------------\n\n\n"
        + _key_values(keys)
        + f"BUGCHECK_CODE:  {code:x}\n\n"
        + "".join(f"BUGCHECK_P{i + 1}: {a:x}\n\n" for i, a in enumerate(args))
        + f"READ_ADDRESS:  {args[0]:016x} Paged pool\n\n"
        "BLACKBOXBSD: 1 (!blackboxbsd)\n\n\n"
        "BLACKBOXNTFS: 1 (!blackboxntfs)\n\n\n"
        "BLACKBOXPNP: 1 (!blackboxpnp)\n\n\n"
        "BLACKBOXWINLOGON: 1\n\n"
        f"PROCESS_NAME:  {proc.image}\n\n"
        f"TRAP_FRAME:  {TRAP_FRAME:016x} -- (.trap 0x{TRAP_FRAME:016x})\n"
        "NOTE: The trap frame does not contain all registers.\n"
        "Some register values may be zeroed or incorrect.\n"
        + register_block(trap, segments=False)
        + here
        + "\nResetting default scope\n\n"
        "STACK_TEXT:  \n"
        + stack_text(world, t)
        + "\n\n"
        + _footer(
            sym, module, image, offset, f".process /r /p 0x{proc.address:016x}; .thread 0x{t.address:016x} ; kb", bucket
        )
    )


def _break(world: World) -> str:
    """A live target's analysis: the break instruction exception where the current thread stopped."""
    t = world.current_thread()
    proc = world.owner(t)
    site = t.frames[0].site if t.frames else world.registers(t).get("rip", 0)
    sym, module, image, offset = _symbol(world, site)
    routine = sym.rsplit("+", 1)[0]
    bucket = f"0x0_{routine}"
    keys = [
        *_ANALYSIS_KEYS,
        ("Bugcheck.Code.LegacyAPI", "0x0"),
        ("Bugcheck.Code.TargetModel", "0x0"),
        ("Failure.Bucket", bucket),
        ("Failure.Hash", _hash(bucket)),
        *_OS_KEYS,
    ]
    return (
        _BANNER + "Unknown bugcheck code (0)\n"
        "Unknown bugcheck description\n"
        "Arguments:\n" + "".join(f"Arg{i}: {0:016x}\n" for i in range(1, 5)) + "\n"
        "Debugging Details:\n------------------\n\n\n"
        + _key_values(keys)
        + "BUGCHECK_CODE:  0\n\n"
        + "".join(f"BUGCHECK_P{i}: 0\n\n" for i in range(1, 5))
        + f"PROCESS_NAME:  {proc.image}\n\n"
        "ERROR_CODE: (NTSTATUS) 0x80000003 - {EXCEPTION}  Breakpoint  A breakpoint has been reached.\n\n"
        "EXCEPTION_CODE_STR:  80000003\n\n"
        "EXCEPTION_PARAMETER1:  0000000000000000\n\n"
        "STACK_TEXT:  \n"
        + stack_text(world, t)
        + "\n\n"
        + _footer(sym, module, image, offset, ".cxr; .ecxr ; kb", bucket)
    )


def analysis(world: World) -> str:
    """``!analyze -v``'s text for the world as it stands."""
    if world.bugcheck is not None and world.bugcheck[0] == 0xD1:
        return _d1(world)
    return _break(world)


@command("!analyze", summary="analyse the bugcheck or the break the target is in")
def _analyze(world: World, name: str, args: str) -> str | None:
    del name
    words = args.split()
    if words == ["-v"]:
        return analysis(world)
    if words:
        return None
    # !analyze alone: the short form (corpus analyze/01's header, then kd's one-line summary)
    code, params = world.bugcheck if world.bugcheck is not None else (0, (0, 0, 0, 0))
    t = world.thread(cat.CLIENT_THREAD) if world.bugcheck else world.current_thread()
    t = t or world.current_thread()
    site = params[3] if world.bugcheck else (t.frames[0].site if t.frames else 0)
    sym, _module, image, _off = _symbol(world, site)
    return (
        _BANNER + "Use !analyze -v to get detailed debugging information.\n\n"
        f"BugCheck {code:X}, {{{', '.join(f'{a:x}' for a in params)}}}\n\n"
        f"Probably caused by : {image} ( {sym} )\n\n"
        "Followup:     MachineOwner\n---------\n\n"
    )
