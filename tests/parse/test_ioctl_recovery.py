"""IOCTL recovery from a dispatch routine's disassembly: compare chains, MSVC's subtract cascades,
binary-search trees and what it cannot resolve (jump tables: test_ioctl_recovery_tables.py; real
bytes: test_ioctl_recovery_bytes.py).

The routines are kd-style ``uf`` listings (tests/parse/ioctl_listing.py) read by the parse layer,
as the tool reads kd. The myfault test at the end reads the simulator's real bytes.
"""

from __future__ import annotations

from kdmcp.parse.ioctl_recovery import recover
from tests.parse.ioctl_listing import BASE, ENTRY, HEAD, LABELS, TAIL, codes, kd, no_memory, off

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


def test_a_code_pinned_by_an_ordered_split_alone_is_binary_search() -> None:
    # jb not taken: code >= 0x222003; jbe taken: code <= 0x222003 -- one code, by order alone
    r = recover(
        kd(
            HEAD
            + """
    cmp     ecx,222003h
    jb      Ldefault
    cmp     ecx,222003h
    jbe     La
    jmp     Ldefault
La:
    ret
"""
            + TAIL
        ),
        no_memory,
    )
    assert codes(r) == {0x222003: (LABELS["La"] - BASE, "binary_search")}


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


def test_a_tail_call_through_the_import_table_is_where_unmatched_codes_go_not_unresolved() -> None:
    # a filter driver: one code handled, the others passed down (return IoCallDriver(...))
    r = recover(
        kd(
            HEAD
            + """
    cmp     ecx,222000h
    je      Lmine
    jmp     qword ptr [drv+0x5000 (fffff800`12345000)]
Lmine:
    ret
"""
        ),
        no_memory,
    )
    assert [c.code for c in r.codes] == [0x222000] and not r.unresolved
    assert r.defaults == [ENTRY + 0x1C]  # the jmp to nt!IofCallDriver


def test_what_a_bit_test_said_holds_on_both_sides() -> None:
    # test cl,3 / jne: on the taken side the code is not a multiple of 4, so 0x222000 cannot be there
    r = recover(
        kd(
            HEAD
            + """
    test    cl,3
    jne     Lodd
    cmp     ecx,222000h
    je      La
    ret
Lodd:
    cmp     ecx,222000h
    je      Lb
    cmp     ecx,222001h
    je      Lc
    ret
La:
    ret
Lb:
    ret
Lc:
    ret
"""
        ),
        no_memory,
    )
    assert codes(r) == {0x222000: (LABELS["La"] - BASE, "compare"), 0x222001: (LABELS["Lc"] - BASE, "compare")}


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
