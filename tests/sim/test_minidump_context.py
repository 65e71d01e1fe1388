"""``kdmcp.sim.minidump_context``: the simulated ``cdb -z`` shows a real minidump's registers and stacks.

What it prints (``r``, ``~Ns``, ``.ecxr``, ``r eax``, ``k``/``kb``) is read back by the project's own
parser and held to what the ``minidump`` package reads from the same file: each thread's CONTEXT,
the exception stream's CONTEXT (whose pc is the README's exception address), the stack memory a
frame-pointer walk follows. Fast tier: no processes.
"""

from __future__ import annotations

import io
import itertools
from typing import Any

import pytest

from kdmcp.parse import parse
from kdmcp.sim.debugger import SimDebugger
from kdmcp.sim.minidump_context import MAX_FRAMES, NO_EXCEPTION_CONTEXT, UNWIND_WARNING, DumpContexts
from kdmcp.sim.minidump_target import MinidumpTarget
from tests.sim.dump_debugger import package as _package
from tests.sim.dump_debugger import run
from tests.sim.test_minidump_target import DUMPS, FIGURES

X86_REGS = ("eax", "ebx", "ecx", "edx", "esi", "edi", "eip", "esp", "ebp")
X64_REGS = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rip", "rsp", "rbp", "r8", "r9", "r10", "r11", "r12", "r15")
WITH_EXCEPTION = sorted(n for n, f in FIGURES.items() if f[4] is not None)
X86 = sorted(n for n, f in FIGURES.items() if f[0] == "x86")


def _word(dump: Any, address: int, size: int) -> int | None:
    """A little-endian value the package's own reader returns, ``None`` where the dump has none."""
    try:
        return int.from_bytes(bytes(dump.get_reader().read(address, size)), "little")
    except Exception:
        return None


def _expected(context: Any, x64: bool) -> dict[str, int]:
    return {n: getattr(context, n.capitalize()) for n in (X64_REGS if x64 else X86_REGS)} | {"efl": context.EFlags}


def _flags(efl: int) -> list[str]:
    """``r``'s flag words, straight from the Intel EFLAGS bit layout."""
    bits = ((11, "ov", "nv"), (10, "dn", "up"), (9, "ei", "di"), (7, "ng", "pl"), (6, "zr", "nz"), (4, "ac", "na"))
    return [on if efl >> b & 1 else off for b, on, off in (*bits, (2, "pe", "po"), (0, "cy", "nc"))]


def _exception_context(name: str) -> Any:
    from minidump.streams.ContextStream import CONTEXT, WOW64_CONTEXT

    dump = _package(name)
    loc = dump.exception.exception_records[0].ThreadContext
    data = (DUMPS / name).read_bytes()[loc.Rva : loc.Rva + loc.DataSize]
    return (CONTEXT if FIGURES[name][0] == "x64" else WOW64_CONTEXT).parse(io.BytesIO(data))


def _view(name: str) -> tuple[MinidumpTarget, DumpContexts]:
    target = MinidumpTarget(str(DUMPS / name))
    return target, DumpContexts(target)


def _say(view: DumpContexts, command: str, thread: int) -> tuple[str, int]:
    answer = view.answer(command, thread)
    assert answer is not None, command
    return answer


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_each_thread_s_registers_are_the_context_the_package_reads(name: str) -> None:
    """``~Ns`` prints thread N's CONTEXT (cdb shows the new thread's registers) and makes N current."""
    target, view = _view(name)
    dump = _package(name)
    for index, thread in enumerate(dump.threads.threads):
        text, current = _say(view, f"~{index}s", target.event_index)
        assert current == index
        record = parse(f"~{index}s", text)
        assert record.kind == "registers"
        expected = _expected(thread.ContextObject, target.x64)
        assert {n: int(record.registers[n], 16) for n in expected} == expected
        assert record.flags == _flags(thread.ContextObject.EFlags)
        ip = expected["rip" if target.x64 else "eip"]
        assert int(record.address.replace("`", ""), 16) == ip
        # the instruction's bytes are the dump's bytes at the pc
        shown = bytes.fromhex(record.bytes)
        assert shown == bytes(dump.get_reader().read(ip, len(shown)))
        assert record.mnemonic
        # the one-register form reads the same context
        pc = "rip" if target.x64 else "eip"
        assert _say(view, f"r {pc}", index)[0] == f"{pc}={ip:0{16 if target.x64 else 8}x}\n"


@pytest.mark.parametrize("name", WITH_EXCEPTION)
def test_ecxr_shows_the_exception_context_and_r_and_k_keep_it_until_the_thread_changes(name: str) -> None:
    target, view = _view(name)
    _, address, _ = FIGURES[name][4]
    event = target.event_index
    text, thread = _say(view, ".ecxr", event)
    record = parse(".ecxr", text)
    assert record.kind == "registers" and thread == event
    expected = _expected(_exception_context(name), target.x64)
    assert {n: int(record.registers[n], 16) for n in expected} == expected
    assert expected["rip" if target.x64 else "eip"] == address  # the README's exception address
    assert parse("r", _say(view, "r", event)[0]).registers == record.registers
    stack = parse("k", _say(view, "k", event)[0])
    assert stack.frames[0].call_site == view.where(address)
    # a thread switch, even to the same thread, returns to the thread's own context
    _say(view, f"~{event}s", event)
    own = _package(name).threads.threads[event].ContextObject
    pc = own.Rip if target.x64 else own.Eip
    assert int(parse("r", _say(view, "r", event)[0]).registers["rip" if target.x64 else "eip"], 16) == pc


def test_the_faulting_instruction_is_decoded_with_cdbs_spacing_and_operand_annotation() -> None:
    # null_read_av.dmp: "mov eax,[eax]" with eax=0, the read of 00000000 the .exr reports
    _, view = _view("null_read_av.dmp")
    text = _say(view, ".ecxr", 0)[0]
    assert text.endswith(
        "crashme+0xa6cd:\n0090a6cd 8b00            mov     eax,dword ptr [eax]  ds:002b:00000000=????????\n"
    )
    reference = parse(".ecxr", text).memory_reference
    assert (reference.segment, reference.selector, reference.address) == ("ds", "002b", "0x00000000")
    # tiny-exe-fastfail.dmp: __fastfail is "int 29h" (the README's c0000409)
    _, view = _view("tiny-exe-fastfail.dmp")
    text = _say(view, ".ecxr", 0)[0]
    assert text.startswith("rax=0000000000000000 rbx=00007ff75360aa9c rcx=0000000000000007\n")
    assert "\n r8=7efefefefefefeff  r9=" in text and "\niopl=0         nv up ei pl zr na pe nc\n" in text
    assert text.endswith("tiny+0x1af42:\n00007ff7`5355af42 cd29            int     29h\n")


def test_a_pc_the_dump_holds_no_bytes_for_is_question_marks() -> None:
    # minidump2.dmp keeps no code at its exception address 0040429e
    assert _word(_package("minidump2.dmp"), 0x0040429E, 1) is None
    _, view = _view("minidump2.dmp")
    text = _say(view, ".ecxr", 0)[0]
    assert text.endswith("test_app+0x429e:\n0040429e ??              ???\n")
    assert parse(".ecxr", text).kind == "registers"


def test_ecxr_without_an_exception_and_an_invalid_thread_answer_as_cdb_does() -> None:
    target, view = _view("tiny-exe-with-cet-xsave.dmp")
    assert _say(view, ".ecxr", 0) == (NO_EXCEPTION_CONTEXT, 0)
    assert target.ecxr_thread is None
    assert _say(view, "~1s", 0) == ("       ^ Illegal thread error in '~1s'\n", 0)
    assert _say(view, "r zz", 0)[0] == "       ^ Bad register error in 'r zz'\n"
    assert parse("r zz", _say(view, "r zz", 0)[0]).category == "bad_register"
    assert view.answer("lm", 0) is None  # not a context command


@pytest.mark.parametrize("name", X86)
def test_x86_k_follows_the_ebp_chain_through_the_dump_s_stack(name: str) -> None:
    """After ``.ecxr``: each ``ChildEBP`` is the saved ``ebp`` the frame below points at, each
    ``RetAddr`` the dword above it, each call site the return address of the frame below."""
    target, view = _view(name)
    dump = _package(name)
    _say(view, ".ecxr", target.event_index)
    text = _say(view, "kb", target.event_index)[0]
    assert text.startswith(" # ChildEBP RetAddr      Args to Child              \n" + UNWIND_WARNING)
    record = parse("kb", text)
    assert record.kind == "stack" and 1 <= len(record.frames) <= MAX_FRAMES
    assert record.warnings == [UNWIND_WARNING.strip()]
    frames = record.frames
    for below, above in itertools.pairwise(frames):
        ebp = int(below.child_ebp, 16)
        assert int(above.child_ebp, 16) == _word(dump, ebp, 4)
        assert int(below.return_address, 16) == _word(dump, ebp + 4, 4)
        assert above.call_site == view.where(int(below.return_address, 16))
    for f in frames:
        ebp = int(f.child_ebp, 16)
        # an argument beyond the dump's stack memory reads zero, as dbghelp leaves it
        assert tuple(int(a, 16) for a in f.args) == tuple(_word(dump, ebp + 8 + 4 * i, 4) or 0 for i in range(3))
    assert [f.index for f in frames] == list(range(len(frames)))


def test_the_null_read_stack_and_the_stack_overflow_bound() -> None:
    _, view = _view("null_read_av.dmp")
    _say(view, ".ecxr", 0)
    frames = parse("k", _say(view, "k", 0)[0]).frames
    assert [f.call_site for f in frames] == [
        "crashme+0xa6cd", "crashme+0x83d8", "crashme+0x821f", "kernel32+0x13677", "ntdll+0x39d42", "ntdll+0x39d15",
    ]  # fmt: skip
    assert frames[-1].return_address == "0x00000000"  # the thread's first frame returns nowhere
    # stack_exhaustion.dmp recurses until the guard page: the walk stops at 64 frames
    _, view = _view("stack_exhaustion.dmp")
    _say(view, ".ecxr", 0)
    frames = parse("k", _say(view, "k", 0)[0]).frames
    assert len(frames) == MAX_FRAMES
    assert {f.call_site for f in frames[1:]} == {"crashme+0xa6a7"}


@pytest.mark.parametrize("name", ["tiny-exe-fastfail.dmp", "tiny-exe-with-cet-xsave.dmp"])
def test_x64_k_scans_the_stack_for_return_addresses_into_modules(name: str) -> None:
    target, view = _view(name)
    dump = _package(name)
    thread = target.threads[target.event_index]
    text = _say(view, "k", target.event_index)[0]
    assert text.startswith(" # Child-SP          RetAddr               Call Site\n" + UNWIND_WARNING)
    record = parse("k", text)
    assert record.kind == "stack" and 2 <= len(record.frames) <= MAX_FRAMES
    sps = [int(f.child_sp.replace("`", ""), 16) for f in record.frames]
    assert sps == sorted(sps) and sps[0] == thread_sp(dump, target.event_index)
    stack_words = {
        _word(dump, a, 8) for a in range(sps[0], thread.stack[1] - 7, 8)
    }  # every qword of the thread's stack memory
    for f in record.frames[:-1]:
        ret = int(f.return_address.replace("`", ""), 16)
        assert ret in stack_words and view.where(ret)
    assert int(record.frames[-1].return_address, 16) == 0
    kb = parse("kb", _say(view, "kb", target.event_index)[0])
    assert kb.kind == "stack" and len(kb.frames) == len(record.frames)
    assert all(len(f.args) == 4 for f in kb.frames)


def thread_sp(dump: Any, index: int) -> int:
    return int(dump.threads.threads[index].ContextObject.Rsp)


# ------------------------------------------------------------------ through the debugger




def test_the_debugger_switches_threads_and_the_prompt_and_marker_follow(debugger: SimDebugger) -> None:
    assert debugger.prompt_text() == "0:000> "
    switched = run(debugger, "~1s")
    assert parse("~1s", switched).registers["eip"] == "0x772d0bd2"
    assert debugger.prompt_text() == "0:001> "
    listing = parse("~", run(debugger, "~"))
    assert [t.current for t in listing.threads] == [False, True]
    assert run(debugger, "~7s") == "       ^ Illegal thread error in '~7s'\n"
    assert debugger.prompt_text() == "0:001> "
    # .ecxr on thread 1, then a switch back: the exception context is gone with the switch
    assert parse(".ecxr", run(debugger, ".ecxr")).registers["eip"] == "0x0090a6cd"
    assert parse("r", run(debugger, "r")).registers["eip"] == "0x0090a6cd"
    run(debugger, "~0s")
    assert parse("r", run(debugger, "r")).registers["eip"] == "0x772cf861"
    # d* reads the current context's registers: thread 0's esp is 0037f2f0
    assert run(debugger, "dd esp L1") == run(debugger, "dd 0037f2f0 L1") != "0037f2f0  ????????\n"
    assert parse("k", run(debugger, "k")).kind == "stack"


def test_r_names_the_module_of_every_dump_s_pc() -> None:
    """``r`` on every vendored dump's event thread (x86 and x64) is a registers record whose symbol
    line names a module, ``module+0xoff`` as cdb names an address with no symbols."""
    for name in sorted(FIGURES):
        target, view = _view(name)
        record = parse("r", _say(view, "r", target.event_index)[0])
        assert record.kind == "registers" and record.symbol and "+0x" in record.symbol


def test_an_x86_frame_pointer_outside_the_stack_falls_back_to_a_scan() -> None:
    """With ``ebp`` outside the thread's stack memory there is no chain to follow: the walk scans the
    stack for dwords that point into a module, each such a frame, the scan ending the stack."""
    from kdmcp.sim.minidump_context import Context

    target, view = _view("null_read_av.dmp")
    dump = _package("null_read_av.dmp")
    ctx = view.exception_context()
    assert ctx is not None
    frames, scanned = view.walk(Context(False, ctx.regs | {"ebp": 0}), target.threads[0].stack)
    assert scanned and 2 <= len(frames) <= MAX_FRAMES
    assert frames[0].ip == ctx.ip and frames[-1].ret == 0
    for f in frames[:-1]:
        assert _word(dump, f.child + 4, 4) == f.ret and view.where(f.ret)
    # the exception context itself has a chain: the frame-pointer walk
    assert not view.walk(ctx, target.threads[0].stack)[1]


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_thread_s_stack_with_its_header(name: str) -> None:
    """``~*k``: each thread's ``~`` line, then its own stack (frame 0 at its own pc); ``~Nk`` one."""
    target, view = _view(name)
    dump = _package(name)
    text, thread = _say(view, "~*k", target.event_index)
    record = parse("~*k", text)
    assert thread == target.event_index and record.kind == "stack"
    assert [int(t.thread_id, 16) for t in record.threads] == [t.tid for t in target.threads]
    assert [t.current for t in record.threads] == [t.index == target.event_index for t in target.threads]
    for section, thread_ in zip(record.threads, dump.threads.threads, strict=True):
        pc = thread_.ContextObject.Rip if target.x64 else thread_.ContextObject.Eip
        assert section.frames and section.frames[0].call_site == (view.where(pc) or f"0x{pc:x}")
    last = len(target.threads) - 1
    assert parse(f"~{last}kb", _say(view, f"~{last}kb", 0)[0]).threads[0].index == last
    assert _say(view, f"~{last + 1}k", 0)[0] == f"       ^ Illegal thread error in '~{last + 1}k'\n"
