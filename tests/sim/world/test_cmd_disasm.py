"""World u, ub, uf: iced-x86 decoding of the world's code bytes, in kd's disassembly layout.

Formats: corpus disasm/01 (u with its label line), disasm/02 (ub), disasm/04 (uf), the
published ``u`` at unmapped memory (``?? ???`` and ``^ Memory access error in 'u rcx'``).
Every listing is read back by the project's parser into a ``DisassemblyRecord``.
"""

from __future__ import annotations

from kdmcp.parse import parse
from kdmcp.sim.world.build import build
from kdmcp.sim.world.machine import World
from tests.sim.world.helpers import run


def test_u_at_the_break_in(world: World) -> None:
    out = run(world, "u")
    lines = out.splitlines()
    # corpus disasm/01 layout; the canned default target's listing at nt!DbgBreakPointWithStatus
    assert lines[:5] == [
        "nt!DbgBreakPointWithStatus:",
        "fffff800`62a05c20 cc              int     3",
        "fffff800`62a05c21 c3              ret",
        "nt!DbgBreakPointWithStatusEnd:",
        "fffff800`62a05c22 cc              int     3",
    ]
    r = parse("u", out)
    assert r.kind == "disassembly" and len(r.instructions) == 8
    assert r.instructions[0].address == "0xfffff80062a05c20" and r.instructions[0].mnemonic == "int"
    assert run(world, "u nt!DbgBreakPointWithStatus") == run(world, "u fffff800`62a05c20") == out


def test_u_continues_after_the_last_listing() -> None:
    w = build()
    first = parse("u", run(w, "u")).instructions
    second = parse("u", run(w, "u")).instructions
    last = int(first[-1].address, 16) + len(first[-1].bytes) // 2
    assert int(second[0].address, 16) == last
    third = parse("u", run(w, "u")).instructions
    last_second = int(second[-1].address, 16) + len(second[-1].bytes) // 2
    assert int(third[0].address, 16) == last_second  # and on, from where the second stopped


def test_u_count_and_label_mid_routine(world: World) -> None:
    out = run(world, "u nt!KdCheckForDebugBreak+0x6d L2")
    lines = out.splitlines()
    assert lines[0] == "nt!KdCheckForDebugBreak+0x6d:"
    assert lines[1] == "fffff800`62a8be9d e87e9df7ff      call    nt!DbgBreakPointWithStatus (fffff800`62a05c20)"
    assert len(parse("u", out).instructions) == 2
    assert parse("u", out).instructions[0].target == "0xfffff80062a05c20"


def test_db_dq_and_u_show_the_same_bytes(world: World) -> None:
    addr = "nt!KdCheckForDebugBreak"
    listing = parse("u", run(world, f"u {addr} L6")).instructions
    code = "".join(i.bytes for i in listing)
    n = len(code) // 2
    db = parse("db", run(world, f"db {addr} L{n:x}"))
    assert "".join(v for row in db.rows for v in row.values) == code
    dq = parse("dq", run(world, f"dq {addr} L1"))
    assert int(dq.rows[0].values[0], 16).to_bytes(8, "little").hex() == code[:16]


def test_eb_changes_what_u_decodes() -> None:
    w = build()
    assert run(w, "eb @rip 90 c3") == ""
    out = run(w, "u @rip L2")
    assert out.splitlines()[1:] == ["fffff800`62a05c20 90              nop", "fffff800`62a05c21 c3              ret"]
    assert run(w, "db @rip L2").startswith("fffff800`62a05c20  90 c3 ")


def test_u_at_unmapped_memory(world: World) -> None:
    out = run(world, "u rcx")  # rcx=1 at the break-in
    assert out == "00000000`00000001 ??              ???\n" + " " * 11 + "^ Memory access error in 'u rcx'\n"
    r = parse("u rcx", out)  # u read nothing and said why: the error is the answer (kdmcp/parse/dispatch.py)
    assert (r.kind, r.category) == ("error", "memory_access")


def test_ub_ends_right_before_the_address(world: World) -> None:
    ret = world.current_thread().frames[1].site  # nt!KdCheckForDebugBreak+0x72
    out = run(world, f"ub {ret:x}")
    ins = parse("ub", out).instructions
    assert len(ins) == 8
    last = ins[-1]
    assert int(last.address, 16) + len(last.bytes) // 2 == ret
    assert last.mnemonic == "call" and last.target == "0xfffff80062a05c20"  # k's frame 0 is its callee
    assert out.splitlines()[0].startswith("nt!KdCheckForDebugBreak+0x")
    assert len(parse("ub", run(world, f"ub {ret:x} L3")).instructions) == 3


def test_ub_at_rip_reaches_into_the_routine_before(world: World) -> None:
    out = run(world, "ub @rip")
    lines = out.splitlines()
    assert lines[0] == "nt!DbgUserBreakPoint+0x1:"
    assert lines[1] == "fffff800`62a05c11 c3              ret"
    ins = parse("ub", out).instructions
    assert int(ins[-1].address, 16) + len(ins[-1].bytes) // 2 == 0xFFFFF80062A05C20


def test_uf_walks_the_whole_routine(world: World) -> None:
    out = run(world, "uf nt!KdCheckForDebugBreak")
    sym = world.symbols.lookup("nt!KdCheckForDebugBreak")
    assert sym is not None
    ins = parse("uf", out).instructions
    assert out.splitlines()[0] == "nt!KdCheckForDebugBreak:"
    assert ins[-1].mnemonic == "ret"
    assert all(sym.address <= int(i.address, 16) < sym.address + sym.size for i in ins)
    assert any(i.mnemonic == "call" for i in ins)
    assert run(world, "uf nt!DbgBreakPointWithStatus") == (
        "nt!DbgBreakPointWithStatus:\n"
        "fffff800`62a05c20 cc              int     3\n"
        "fffff800`62a05c21 c3              ret\n"
    )


def test_uf_labels_branch_targets() -> None:
    w = build()
    sym = w.symbols.lookup("nt!KdCheckForDebugBreak")
    assert sym is not None
    # a conditional jump over the next instruction: two blocks, the target labelled
    start = sym.address + 0x5
    assert run(w, f"eb {start:x} 74 01 90 c3") == ""
    out = run(w, f"uf {start:x}")  # inside the routine: the whole routine from its entry
    lines = out.splitlines()
    assert lines[0] == "nt!KdCheckForDebugBreak:"
    assert lines[2].startswith(f"{start >> 32:08x}`{start & 0xFFFFFFFF:08x} 7401            je      ")
    assert lines[4:6] == [
        "nt!KdCheckForDebugBreak+0x8:",
        f"{start + 3 >> 32:08x}`{start + 3 & 0xFFFFFFFF:08x} c3              ret",
    ]
    assert len(lines) == 6
    assert run(w, "uf nt!KdCheckForDebugBreak") == out


def test_ub_at_k_return_addresses_shows_the_calls(world: World) -> None:
    """A return address in k is just past a call of the frame above: ub's last line is that call."""
    frames = world.current_thread().frames
    # skipped: frame 2 (catalog: nt!ExpWorkerThread is placed over nt!KeAccumulateTicks+0x340..,
    # a core layout clash reported to the lead) and frame 8 (an interrupt: a trap frame, no call)
    checked = [n for n in range(1, len(frames)) if n not in (2, 8)]
    for n in checked:
        last = parse("ub", run(world, f"ub {frames[n].site:x} L1")).instructions[-1]
        assert last.mnemonic == "call" and last.target is not None, n
        target = int(last.target, 16)
        callee = world.symbols.nearest(target)[1]
        assert callee is not None and callee.address == target, n
        assert target <= frames[n - 1].site < target + callee.size, n  # the frame above runs in it


def test_a_branch_out_of_every_module_shows_the_bare_address() -> None:
    w = build()
    # jmp rel32 from nt!KdCheckForDebugBreak to an address no module covers
    sym = w.symbols.lookup("nt!KdCheckForDebugBreak")
    assert sym is not None
    target = 0xFFFFF80010000000
    rel = (target - (sym.address + 5)) & 0xFFFFFFFF
    assert run(w, f"ed {sym.address + 1:x} {rel:x}") == "" and run(w, f"eb {sym.address:x} e9") == ""
    line = run(w, f"u {sym.address:x} L1").splitlines()[1]
    assert line.endswith(" jmp     fffff800`10000000")
    assert parse("u", line + "\n").instructions[0].target == "0xfffff80010000000"


def test_uf_c_lists_the_calls(world: World) -> None:
    # published "uf /c /o KiExecuteDpc": the routine, each call site, "call to" its target
    assert run(world, "uf /c nt!KdCheckForDebugBreak") == (
        "nt!KdCheckForDebugBreak (fffff800`62a8be30)\n"
        "  nt!KdCheckForDebugBreak+0x6d (fffff800`62a8be9d):\n"
        "    call to nt!DbgBreakPointWithStatus (fffff800`62a05c20)\n"
    )
