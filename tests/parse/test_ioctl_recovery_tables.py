"""IOCTL recovery through bounds-checked jump tables (kd-style listings, tests/parse/ioctl_listing.py).

MSVC's layout: a bias (``lea eax,[rcx+X]``), an alignment test (``test al,3`` / ``jne default``),
scaling (``shr eax,2``), the bound (``cmp eax,N`` / ``ja default``), then the read relative to
the image base and ``jmp rcx``; the table's dwords come from the ``read`` callback (``dd``).
"""

from __future__ import annotations

from kdmcp.parse.ioctl_recovery import recover
from tests.parse.ioctl_listing import BASE, HEAD, LABELS, TAIL, codes, kd, no_memory, table_reader

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
