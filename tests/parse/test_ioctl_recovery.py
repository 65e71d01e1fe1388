"""IOCTL recovery from a dispatch routine's disassembly: every construct MSVC compiles a switch into.

The routines are written as kd prints ``uf`` (label lines, ``address bytes mnemonic operands``,
branch targets as ``sym (address)``, RIP-relative operands as ``[drv (address)]``) and read by
the parse layer, as the tool reads kd; each instruction is 4 bytes long, so an instruction's
fall-through is the next one. The myfault test at the end reads the simulator's real bytes.
"""

from __future__ import annotations

import re

import pytest

from kdmcp.parse import ioctl_domain as dom
from kdmcp.parse.disasm import parse_disassembly
from kdmcp.parse.ioctl_operands import Imm, Mem, Reg, operands, parse_imm
from kdmcp.parse.ioctl_recovery import Recovery, recover
from kdmcp.parse.models import Instruction

BASE = 0xFFFFF80012340000  # drv's image base
ENTRY = BASE + 0x1000
HEAD = """
    mov     qword ptr [rsp+8],rbx
    sub     rsp,20h
    mov     rax,qword ptr [rdx+0B8h]
    mov     rdi,rdx
    mov     ecx,dword ptr [rax+18h]
"""
TAIL = """
Ldefault:
    mov     ebx,0C0000010h
    jmp     Ldone
Ldone:
    mov     eax,ebx
    add     rsp,20h
    ret
"""


def _fmt(a: int) -> str:
    return f"{a >> 32:08x}`{a & 0xFFFFFFFF:08x}"


LABELS: dict[str, int] = {}  # the last listing's labels -> addresses


def kd(asm: str, order: list[str] | None = None) -> list[Instruction]:
    """``asm`` (``L…:`` labels, branch operands naming them, ``[drv]`` for the image base) as kd's
    uf text, parsed; its labels' addresses in ``LABELS``. ``order``: the labels' blocks in this
    order (uf prints a routine's blocks out of line)."""
    lines = [ln.strip() for ln in asm.strip().splitlines() if ln.strip()]
    labels: dict[str, int] = {}
    at = ENTRY
    for ln in lines:
        if ln.endswith(":"):
            labels[ln[:-1]] = at
        else:
            at += 4

    def sym(a: int) -> str:
        return f"drv+{a - BASE:#x}"

    blocks: dict[str, list[str]] = {"": []}
    current, at = "", ENTRY
    for ln in lines:
        if ln.endswith(":"):
            current = ln[:-1]
            blocks[current] = [f"{sym(labels[current])}:"]
            continue
        mn, _, ops = ln.partition(" ")
        ops = ops.strip()
        ops = re.sub(r"\bL\w+\b", lambda m: f"{sym(labels[m.group()])} ({_fmt(labels[m.group()])})", ops)
        ops = ops.replace("[drv]", f"[drv ({_fmt(BASE)})]")
        blocks[current].append(f"{_fmt(at)} 90909090        {mn:<7} {ops}".rstrip())
        at += 4
    names = list(blocks) if order is None else ["", *order]
    text = "\n".join([f"{sym(ENTRY)}:"] + [ln for name in names for ln in blocks[name]]) + "\n"
    LABELS.clear()
    LABELS.update(labels)
    record = parse_disassembly("uf drv+0x1000", text)
    assert record is not None
    return record.instructions


def off(label: str) -> str:
    return f"drv+{LABELS[label] - BASE:#x}"


def table_reader(table: dict[int, list[int]], calls: list[tuple[int, int]] | None = None):
    def read(address: int, count: int) -> list[int] | None:
        if calls is not None:
            calls.append((address, count))
        words = table.get(address)
        return None if words is None else words[:count]

    return read


def no_memory(address: int, count: int) -> None:
    raise AssertionError(f"read {count} dwords at {address:#x}: no table here")


def codes(r: Recovery) -> dict[int, tuple[int, str]]:
    return {c.code: (c.handler - BASE, c.how) for c in r.codes}


def handler_offsets(r: Recovery) -> list[int]:
    return [c.handler - BASE for c in r.codes]


# ---------------------------------------------------------------- compare chains


def test_a_compare_chain_with_je_gives_each_code_its_case_and_the_default_is_not_a_code() -> None:
    r = recover(
        kd(
            HEAD
            + """
    cmp     ecx,222000h
    je      L0
    cmp     ecx,222004h
    je      L4
    cmp     ecx,22200Bh
    je      Ldefault
    jmp     Ldefault
L0:
    mov     ebx,1
    jmp     Ldone
L4:
    mov     ebx,2
    jmp     Ldone
"""
            + TAIL
        ),
        no_memory,
    )
    assert [c.code for c in r.codes] == [0x222000, 0x222004]  # 0x22200b goes where no case does
    assert all(c.how == "compare" and c.confidence == "high" for c in r.codes)
    assert [c.handler_symbol for c in r.codes] == [off("L0"), off("L4")]
    assert r.codes[0].at == ENTRY + 0x18  # the je that routes it
    assert r.defaults == [LABELS["Ldefault"]] and not r.unresolved and r.code_loaded


def test_jne_polarity_the_case_is_the_fall_through() -> None:
    r = recover(
        kd(
            HEAD
            + """
    cmp     ecx,9C402000h
    jne     Lnext
    mov     ebx,1
    jmp     Ldone
Lnext:
    cmp     ecx,9C402004h
    jnz     Ldefault
    mov     ebx,2
    jmp     Ldone
"""
            + TAIL
        ),
        no_memory,
    )
    assert codes(r) == {0x9C402000: (0x101C, "compare"), 0x9C402004: (0x102C, "compare")}
    assert r.codes[0].handler_symbol is None  # a fall-through has no label of its own


def test_a_compare_in_memory_and_through_a_stack_slot() -> None:
    r = recover(
        kd(
            """
    mov     rax,qword ptr [rdx+0B8h]
    cmp     dword ptr [rax+18h],222000h
    je      L0
    mov     ecx,dword ptr [rax+18h]
    mov     dword ptr [rsp+40h],ecx
    call    Lhelper
    mov     eax,dword ptr [rsp+40h]
    cmp     eax,222008h
    je      L8
    ret
L0:
    ret
L8:
    ret
Lhelper:
    ret
"""
        ),
        no_memory,
    )
    assert [(c.code, c.confidence) for c in r.codes] == [(0x222000, "high"), (0x222008, "medium")]


def test_flags_survive_instructions_that_do_not_set_them() -> None:
    r = recover(
        kd(
            HEAD
            + """
    cmp     ecx,222000h
    mov     eax,1
    lea     r8,[rsp+30h]
    je      Ldone
    ret
"""
            + TAIL
        ),
        no_memory,
    )
    assert [c.code for c in r.codes] == [0x222000]


# ---------------------------------------------------------------- MSVC subtract cascades


def test_an_msvc_subtract_cascade_sums_its_immediates() -> None:
    # switch (code) { case 0x222000: case 0x222004: case 0x222008: case 0x22201c: } as cl /O2 emits it
    r = recover(
        kd(
            HEAD
            + """
    mov     eax,ecx
    sub     eax,222000h
    je      La
    sub     eax,4
    je      Lb
    sub     eax,4
    je      Lc
    sub     eax,14h
    jne     Ldefault
    mov     ebx,4
    jmp     Ldone
La:
    mov     ebx,1
    jmp     Ldone
Lb:
    mov     ebx,2
    jmp     Ldone
Lc:
    mov     ebx,3
    jmp     Ldone
"""
            + TAIL
        ),
        no_memory,
    )
    assert [c.code for c in r.codes] == [0x222000, 0x222004, 0x222008, 0x22201C]
    assert {c.how for c in r.codes} == {"subtract_chain"}
    assert r.codes[3].handler == ENTRY + 0x38  # the jne's fall-through


def test_add_lea_and_dec_biases() -> None:
    r = recover(
        kd(
            HEAD
            + """
    lea     eax,[rcx-222000h]
    test    eax,eax
    je      La
    add     eax,0FFFFFFFCh
    je      Lb
    dec     eax
    je      Lc
    jmp     Ldefault
La:
    ret
Lb:
    ret
Lc:
    ret
"""
            + TAIL
        ),
        no_memory,
    )
    assert [c.code for c in r.codes] == [0x222000, 0x222004, 0x222005]
    assert {c.how for c in r.codes} == {"subtract_chain"}


def test_a_cascade_below_an_unsigned_split() -> None:
    # cmp ecx,X / ja: then a cascade on the lower half: the bound narrows it, the subtraction pins it
    r = recover(
        kd(
            HEAD
            + """
    cmp     ecx,222010h
    ja      Lhigh
    je      L10
    sub     ecx,222000h
    je      L0
    sub     ecx,8
    je      L8
    jmp     Ldefault
Lhigh:
    cmp     ecx,222020h
    je      L20
    jmp     Ldefault
L10:
    ret
L0:
    ret
L8:
    ret
L20:
    ret
"""
            + TAIL
        ),
        no_memory,
    )
    assert codes(r) == {
        0x222010: (LABELS["L10"] - BASE, "binary_search"),
        0x222000: (LABELS["L0"] - BASE, "subtract_chain"),
        0x222008: (LABELS["L8"] - BASE, "subtract_chain"),
        0x222020: (LABELS["L20"] - BASE, "binary_search"),
    }


# ---------------------------------------------------------------- binary-search trees


def test_a_binary_search_tree_of_unsigned_splits() -> None:
    r = recover(
        kd(
            HEAD
            + """
    cmp     ecx,222010h
    ja      Lright
    je      L10
    cmp     ecx,222000h
    je      L00
    cmp     ecx,222008h
    je      L08
    jmp     Ldefault
Lright:
    cmp     ecx,222018h
    jb      Ldefault
    cmp     ecx,222018h
    jbe     L18
    cmp     ecx,222020h
    je      L20
    jmp     Ldefault
L10:
    ret
L00:
    ret
L08:
    ret
L18:
    ret
L20:
    ret
"""
            + TAIL
        ),
        no_memory,
    )
    assert sorted(codes(r)) == [0x222000, 0x222008, 0x222010, 0x222018, 0x222020]
    assert {c.how for c in r.codes} == {"binary_search"}
    assert codes(r)[0x222018][0] == LABELS["L18"] - BASE  # pinned by jb then jbe: 0x222018 <= code <= 0x222018


def test_signed_splits_on_codes_with_the_top_bit_set() -> None:
    # vendor codes >= 0x80000000 are negative to jg/jl: the tree's order is signed
    r = recover(
        kd(
            HEAD
            + """
    cmp     ecx,83362000h
    jg      Lright
    je      La
    cmp     ecx,22200Ch
    je      Lb
    jmp     Ldefault
Lright:
    cmp     ecx,83366000h
    je      Lc
    jmp     Ldefault
La:
    ret
Lb:
    ret
Lc:
    ret
"""
            + TAIL
        ),
        no_memory,
    )
    # 0x22200c is positive: greater than 0x83362000 signed, so on the right, and this je never sees it
    assert sorted(codes(r)) == [0x83362000, 0x83366000]


# ---------------------------------------------------------------- jump tables

TABLE = BASE + 0x3000


def _table_routine(bound: str = "    cmp     eax,4\n    ja      Ldefault\n") -> str:
    return (
        HEAD
        + """
    lea     eax,[rcx+7FFDDFF0h]
    test    al,3
    jne     Ldefault
    shr     eax,2
"""
        + bound
        + """
    lea     rdx,[drv]
    mov     ecx,dword ptr [rdx+rax*4+3000h]
    add     rcx,rdx
    jmp     rcx
"""
        + TAIL
    )


def test_a_bounds_checked_jump_table_is_read_and_indices_to_the_default_are_dropped() -> None:
    # codes 0x80022010 + 4*i (the lea adds -0x80022010), i = 0..4; index 2 goes to the default
    listing = kd(_table_routine())
    default_rva = LABELS["Ldefault"] - BASE
    calls: list[tuple[int, int]] = []
    read = table_reader({TABLE: [0x2000, 0x2010, default_rva, 0x2030, 0x2040]}, calls)
    r = recover(listing, read)
    assert calls == [(TABLE, 5)]
    assert codes(r) == {
        0x80022010: (0x2000, "jump_table"),
        0x80022014: (0x2010, "jump_table"),
        0x8002201C: (0x2030, "jump_table"),
        0x80022020: (0x2040, "jump_table"),
    }
    assert [c.index for c in r.codes] == [0, 1, 3, 4] and r.codes[0].handler_symbol == "drv+0x2000"
    assert r.tables == [TABLE] and r.defaults == [LABELS["Ldefault"]]


def test_without_the_alignment_test_every_code_an_index_covers_is_routed() -> None:
    asm = _table_routine().replace("    test    al,3\n    jne     Ldefault\n", "")
    r = recover(kd(asm), table_reader({TABLE: [0x2000, 0x2010, 0x2020, 0x2030, 0x2040]}))
    assert len(r.codes) == 20 and codes(r)[0x80022013] == (0x2000, "jump_table")


def test_a_table_whose_index_is_not_bounded_is_unresolved() -> None:
    listing = kd(_table_routine(bound=""))
    r = recover(listing, no_memory)
    assert not r.codes
    (u,) = r.unresolved
    jmp = next(i for i in listing if i.mnemonic == "jmp" and i.operands == "rcx")
    assert u.at == int(jmp.address, 16) and "bound" in u.reason


def test_a_table_that_cannot_be_read_is_unresolved() -> None:
    r = recover(kd(_table_routine()), table_reader({}))
    assert not r.codes and "could not read the jump table" in r.unresolved[0].reason


def test_a_chain_then_a_table_excludes_the_chained_codes_from_the_table() -> None:
    asm = _table_routine().replace(
        "    lea     eax,[rcx+7FFDDFF0h]\n",
        "    cmp     ecx,80022014h\n    je      Ldone\n    lea     eax,[rcx+7FFDDFF0h]\n",
    )
    r = recover(kd(asm), table_reader({TABLE + 0x0: [0x2000, 0x2010, 0x2020, 0x2030, 0x2040]}))
    assert codes(r)[0x80022014][1] == "compare" and len(r.codes) == 5


# ---------------------------------------------------------------- what it cannot resolve


def test_an_indirect_jump_it_cannot_bound_is_unresolved() -> None:
    r = recover(kd(HEAD + "    mov rax,qword ptr [rdi+40h]\n    jmp     rax\n"), no_memory)
    assert [(u.at, "indirect jump" in u.reason) for u in r.unresolved] == [(ENTRY + 0x18, True)]


def test_a_compare_on_a_value_it_lost_track_of_is_unresolved() -> None:
    r = recover(
        kd(
            HEAD
            + """
    mov     eax,ecx
    and     eax,3FFCh
    cmp     eax,800h
    je      Ldone
    cmp     ecx,222000h
    je      Ldone
"""
            + TAIL
        ),
        no_memory,
    )
    assert [c.code for c in r.codes] == [0x222000]
    (u,) = r.unresolved
    assert u.at == ENTRY + 0x1C and "and eax,3FFCh" in u.reason


def test_a_routine_without_an_iocontrolcode_load_says_so() -> None:
    r = recover(kd("    mov     eax,dword ptr [rcx+18h]\n    cmp     eax,5\n    je      L1\nL1:\n    ret\n"), no_memory)
    assert not r.codes and not r.code_loaded and "no load of IoControlCode" in r.unresolved[0].reason


def test_uf_block_order_does_not_matter_and_loops_end() -> None:
    asm = (
        HEAD
        + """
    cmp     ecx,222000h
    je      La
    jmp     Lloop
La:
    ret
Lloop:
    dec     r8d
    jne     Lloop
    jmp     Ldefault
"""
        + TAIL
    )
    straight = recover(kd(asm), no_memory)
    shuffled = recover(kd(asm, order=["Ldone", "Lloop", "Ldefault", "La"]), no_memory, entry=ENTRY)
    assert codes(straight) == codes(shuffled) == {0x222000: (LABELS["La"] - BASE, "compare")}
    assert not recover([], no_memory).codes


# ---------------------------------------------------------------- the pieces


def test_operands_as_kd_prints_them() -> None:
    assert operands("ecx,8336E00Bh") == [Reg("rcx", 32), Imm(0x8336E00B)]
    m = operands("ecx,dword ptr [rdx+rax*4+3000h]")[1]
    assert isinstance(m, Mem) and (m.base, m.index, m.scale, m.disp, m.size) == ("rdx", "rax", 4, 0x3000, 4)
    lea = operands("rdx,[myfault (fffff800`60da0000)]")[1]
    assert isinstance(lea, Mem) and lea.absolute == 0xFFFFF80060DA0000 and lea.symbol == "myfault"
    assert operands("al,3") == [Reg("rax", 8), Imm(3)] and operands("ch,1")[0] == Reg("rcx", 8, True)
    neg = operands("eax,[rcx-7CC95FEEh]")[1]
    assert isinstance(neg, Mem) and neg.disp == -0x7CC95FEE
    assert [parse_imm(t) for t in ("0B8h", "3", "-1", "0x10", "ah", "zz")] == [0xB8, 3, -1, 16, 0xA, None]
    assert isinstance(operands("qword ptr gs:[188h]")[0], Mem)


@pytest.mark.parametrize(
    ("lin", "lo", "hi", "want"),
    [
        (dom.Lin(), 5, 5, ((5, 5),)),
        (dom.Lin(bias=0x7CC95FEE, shift=2), 0, 3, ((0x8336A012, 0x8336A021),)),
        (dom.Lin(bias=-0x10 & dom.MASK), 0, 0x1F, ((0x10, 0x2F),)),
        (dom.Lin(bias=0x10), 0, 0x1F, ((0, 0xF), (0xFFFFFFF0, dom.MASK))),  # wraps
    ],
)
def test_preimages(lin: dom.Lin, lo: int, hi: int, want: dom.Domain) -> None:
    assert lin.preimage(lo, hi) == want
    assert all(lo <= lin.apply(c) <= hi for a, b in want for c in (a, b))


def test_conditions_signed_and_unsigned() -> None:
    assert dom.condition("ja", 3) == ([(4, dom.MASK)], True)
    assert dom.condition("jbe", 3) == ([(4, dom.MASK)], False)
    assert dom.condition("jg", 0xFFFFFFFF) == ([(0, 0x7FFFFFFF)], True)  # > -1
    assert dom.condition("jl", 5) == ([(5, 0x7FFFFFFF)], False)
    assert dom.condition("js", 0) is None
    inside, outside = dom.cut(dom.FULL, ((10, 20),))
    assert inside == ((10, 20),) and outside == ((0, 9), (21, dom.MASK)) and dom.count(outside) == dom.MASK - 10
    assert dom.values(inside, 5) is None and dom.values(((1, 2),), 5) == [1, 2]


def test_the_simulated_myfault_routine_from_its_real_bytes() -> None:
    from kdmcp import parse
    from kdmcp.sim.world import drivers
    from kdmcp.sim.world.build import build
    from kdmcp.sim.world.commands import answer

    world = build()
    listing = parse.parse("uf myfault+0x1e00", answer(world, "uf myfault+0x1e00"))

    def read(address: int, count: int) -> list[int]:
        rec = parse.parse("dd", answer(world, f"dd {address:#x} L{count:#x}"))
        return [int(w, 16) for row in getattr(rec, "rows", []) for w in row.values][:count]

    r = recover(getattr(listing, "instructions", []), read)
    assert tuple(c.code for c in r.codes) == drivers.IOCTLS
    assert [c.handler - 0xFFFFF80060DA1E00 for c in r.codes] == list(drivers.CASES)
