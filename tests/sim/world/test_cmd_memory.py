"""World d* and e*: rows in kd's layouts, read from (and written to) the world's memory.

Formats: corpus exceptions_errors/02 (db), memory/01 and 05 (dd), memory/10 (qword pairs),
memory/04 (dps), memory/11 (da), memory/02 (unreadable rows). Each output is also read back by
the project's own parser into a ``MemoryRecord``.
"""

from __future__ import annotations

import pytest

from kdmcp.parse import parse
from kdmcp.sim.world.build import build
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World
from tests.sim.world.helpers import run

RIP = 0xFFFFF80062A05C20  # nt!DbgBreakPointWithStatus: the break-in's instruction pointer


@pytest.fixture
def fresh() -> World:
    """A world of its own, for tests that write memory."""
    return build()


def test_db_rows_match_memory_and_kd_layout(world: World) -> None:
    out = run(world, "db fffff800`62a05c20")
    lines = out.splitlines()
    assert len(lines) == 8  # 0x80 bytes by default
    data = world.space().read(RIP, 0x80)
    assert data is not None
    first = data[:16]
    hexes = [f"{b:02x}" for b in first]
    ascii_col = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in first)
    assert lines[0] == f"fffff800`62a05c20  {' '.join(hexes[:8])}-{' '.join(hexes[8:])}  {ascii_col}"
    assert lines[0].startswith("fffff800`62a05c20  cc c3 ")
    assert lines[7].startswith("fffff800`62a05c90  ")
    r = parse("db fffff800`62a05c20", out)
    assert r.kind == "memory" and r.unit == "byte" and len(r.rows) == 8
    assert [int(v, 16) for row in r.rows for v in row.values] == list(data)


def test_db_without_range_starts_at_rip_then_continues(fresh: World) -> None:
    first = run(fresh, "db")
    assert first.splitlines()[0].startswith("fffff800`62a05c20  ")
    second = run(fresh, "db")
    assert second.splitlines()[0].startswith("fffff800`62a05ca0  ")
    assert run(fresh, "d").splitlines()[0].startswith("fffff800`62a05d20  ")  # d repeats db


def test_short_db_row_keeps_the_character_column(world: World) -> None:
    out = run(world, "db fffff800`62a05c20 L5")
    assert out == "fffff800`62a05c20  cc c3 cc cc cc" + " " * 35 + ".....\n"
    assert parse("db x L5", out).rows[0].values == ["cc", "c3", "cc", "cc", "cc"]


def test_dd_dq_dw_and_db_agree(world: World) -> None:
    data = world.space().read(RIP, 0x10)
    assert data is not None
    dd = run(world, "dd @rip L4")
    words = [int.from_bytes(data[i : i + 4], "little") for i in range(0, 16, 4)]
    assert dd == "fffff800`62a05c20  " + " ".join(f"{w:08x}" for w in words) + "\n"
    dq = run(world, "dq @rip L2")
    q = [int.from_bytes(data[i : i + 8], "little") for i in (0, 8)]
    assert dq == "fffff800`62a05c20  " + " ".join(f"{v >> 32:08x}`{v & 0xFFFFFFFF:08x}" for v in q) + "\n"
    r = parse("dq @rip L2", dq)
    assert r.unit == "qword" and [int(v, 16) for v in r.rows[0].values] == q
    dw = run(world, "dw @rip L8")
    assert dw.split()[1:] == [f"{int.from_bytes(data[i : i + 2], 'little'):04x}" for i in range(0, 16, 2)]
    assert run(world, "dp @rip L2") == dq  # x64: dp is dq


def test_range_forms(world: World) -> None:
    # ADDR ADDR2 (inclusive), L count, L?count and an expression with blanks
    assert run(world, "db @rip @rip+3") == run(world, "db @rip L4")
    assert run(world, "dd @rip L?2") == run(world, "dd @rip L2")
    assert run(world, "dd fffff800`62a05c10 + 0x10 L1") == run(world, "dd @rip L1")
    assert len(run(world, "dd @rip").splitlines()) == 8
    assert len(run(world, "dq @rip").splitlines()) == 8
    assert run(world, "dd /c1 @rip L2").count("\n") == 2


def test_unreadable_memory_is_question_marks(world: World) -> None:
    # corpus memory/02: the first address unreadable, every row of ??
    out = run(world, "db ffffffff00000090")
    lines = out.splitlines()
    assert len(lines) == 8
    assert lines[0] == "ffffffff`00000090  " + "?? " * 7 + "??-" + "?? " * 7 + "??  " + "?" * 16
    assert run(world, "dd 0 L4") == "00000000`00000000  ???????? ???????? ???????? ????????\n"
    assert run(world, "dq 0 L1") == "00000000`00000000  ????????`????????\n"
    assert run(world, "dps 0 L1") == "00000000`00000000  ????????`????????\n"
    r = parse("db ffffffff00000090", out)
    assert r.kind == "memory" and r.rows[0].values == ["??"] * 16


def test_dps_at_rsp_shows_the_return_addresses_k_has(world: World) -> None:
    thread = world.current_thread()
    rsp = world.registers()["rsp"]
    assert rsp == thread.frames[0].child_sp
    out = run(world, "dps @rsp L60")
    r = parse("dps @rsp L60", out)
    symbols = {row.address: row.symbols[0] for row in r.rows if row.symbols[0]}
    # frame n+1's site sits just below frame n+1's stack pointer (x64: the call's push)
    wanted = [f for f in thread.frames[1:] if f.child_sp - 8 < rsp + 60 * 8]
    assert len(wanted) >= 4
    for frame in wanted:
        slot = f"0x{frame.child_sp - 8:016x}"
        assert symbols[slot] == world.name(frame.site)
    assert out.splitlines()[0] == "fffff800`66c0ef38  fffff800`62a8bea2 nt!KdCheckForDebugBreak+0x72"
    assert len(run(world, "dps @rsp").splitlines()) == 16  # 16 pointers by default
    k = answer(world, "k")
    if k is not None and parse("k", k).kind == "stack":  # k answered from the world too
        sites = [f.return_address for f in parse("k", k).frames if f.return_address]
        assert f"0x{thread.frames[1].site:016x}" in sites


def test_da_du_stop_at_the_nul(world: World) -> None:
    # corpus memory/11; rows of 32 characters
    out = run(world, "da nt!NtBuildLabEx")
    assert out == 'fffff800`63200a40  "19041.1.amd64fre.vb_release.1912"\nfffff800`63200a60  "06-1406"\n'
    r = parse("da nt!NtBuildLabEx", out)
    assert "".join(row.text for row in r.rows) == "19041.1.amd64fre.vb_release.191206-1406"
    assert run(world, "da 0 L4") == '00000000`00000000  "????"\n'


def test_eb_then_db_and_dd_show_the_change(fresh: World) -> None:
    assert run(fresh, "eb @rip 90 48 8b") == ""
    assert run(fresh, "db @rip L4").startswith("fffff800`62a05c20  90 48 8b cc ")
    assert run(fresh, "dd @rip L1") == "fffff800`62a05c20  cc8b4890\n"
    assert run(fresh, "ed @rip 11223344") == ""
    assert run(fresh, "db @rip L4").startswith("fffff800`62a05c20  44 33 22 11 ")
    assert run(fresh, "eq @rip+8 0102030405060708") == ""
    assert run(fresh, "dq @rip+8 L1") == "fffff800`62a05c28  01020304`05060708\n"
    assert run(fresh, "ew @rip 9090") == ""
    assert run(fresh, "dw @rip L1") == "fffff800`62a05c20  9090\n"


def test_ea_eu_write_strings(fresh: World) -> None:
    target = fresh.symbols.lookup("nt!NtBuildLabEx")
    assert target is not None
    assert run(fresh, 'ea nt!NtBuildLabEx "HELLO"') == ""
    assert run(fresh, "da nt!NtBuildLabEx").startswith('fffff800`63200a40  "HELLO.1.amd64')
    assert run(fresh, 'ezu nt!NtBuildLabEx "ab"') == ""
    assert run(fresh, "du nt!NtBuildLabEx") == 'fffff800`63200a40  "ab"\n'


def test_write_to_unmapped_memory_is_a_memory_access_error(fresh: World) -> None:
    out = run(fresh, "eb 0 90")
    # the caret under the command's last character, past the 7-character "0: kd> " prompt
    assert out == " " * 13 + "^ Memory access error in 'eb 0 90'\n"
    r = parse("eb 0 90", out)
    assert r.kind == "error" and r.category == "memory_access"


def test_bad_expression_is_couldnt_resolve(world: World) -> None:
    assert run(world, "db nosuch!thing") == "Couldn't resolve error at 'nosuch!thing'\n"


def test_a_length_past_256mb_is_a_range_error(world: World) -> None:
    # "the value passed after L cannot exceed 256MB ... use L? instead": kd's caret form
    out = run(world, "db @rip L20000000")
    assert out == " " * 23 + "^ Range error in 'db @rip L20000000'\n"
    assert run(world, "db @rip L?20") == run(world, "db @rip L20")
