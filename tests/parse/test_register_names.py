"""kdmcp/parse/register_names.py: the one list of x86/x64 register names.

The names and their views are checked against the processor's register set as the x64
software conventions ("Register Usage") and kd's ``r`` output spell it; the integer context is
checked in order, since the server's rollback (``debug_batch``) writes registers back in it.
"""

from __future__ import annotations

import pytest

from kdmcp.parse.ioctl_operands import Reg, register
from kdmcp.parse.register_names import (
    INTEGER_CONTEXT,
    SEGMENT_REGISTERS,
    X64_ARGUMENTS,
    X64_GENERAL,
    X64_GPR_VIEWS,
    X64_VOLATILE,
    X86_GENERAL,
    GprView,
)
from kdmcp.parse.registers import parse_registers


def test_the_integer_context_is_rs_registers_x64_then_x86() -> None:
    assert INTEGER_CONTEXT == (
        "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
        "r15", "rip", "eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp", "eip", "efl",
    )


@pytest.mark.parametrize(
    ("name", "view"),
    [
        ("rax", GprView("rax", 64)), ("eax", GprView("rax", 32)), ("ax", GprView("rax", 16)),
        ("al", GprView("rax", 8)), ("ah", GprView("rax", 8, high=True)), ("dh", GprView("rdx", 8, high=True)),
        ("sil", GprView("rsi", 8)), ("spl", GprView("rsp", 8)), ("bp", GprView("rbp", 16)),
        ("r8", GprView("r8", 64)), ("r9d", GprView("r9", 32)), ("r12w", GprView("r12", 16)),
        ("r15b", GprView("r15", 8)),
    ],
)
def test_each_name_views_its_register(name: str, view: GprView) -> None:
    assert X64_GPR_VIEWS[name] == view
    assert register(name.upper()) == Reg(view.family, view.width, view.high)  # operands in any case


def test_the_views_cover_every_general_register_and_nothing_else() -> None:
    # 16 registers x (64, 32, 16, low 8) + the four legacy high bytes ah bh ch dh
    assert len(X64_GPR_VIEWS) == 16 * 4 + 4
    assert {view.family for view in X64_GPR_VIEWS.values()} == set(X64_GENERAL)
    assert {name for name, view in X64_GPR_VIEWS.items() if view.width == 32} == {*X86_GENERAL, *(
        f"r{n}d" for n in range(8, 16))}
    assert register("rip") is None and register("efl") is None and register("xmm0") is None


def test_the_calling_convention_sets_are_general_registers() -> None:
    assert set(X64_VOLATILE) <= set(X64_GENERAL) and set(X64_ARGUMENTS) <= set(X64_VOLATILE)


def test_segments_are_what_r_prints_on_its_last_line() -> None:
    record = parse_registers("r", "cs=0010  ss=0018  ds=002b  es=002b  fs=0053  gs=002b             efl=00000246\n")
    assert record is not None and set(record.segments) == SEGMENT_REGISTERS
