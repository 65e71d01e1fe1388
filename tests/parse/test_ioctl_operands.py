"""x64 operands as kd prints them, read for IOCTL recovery."""

from __future__ import annotations

from kdmcp.parse.ioctl_operands import Imm, Mem, Reg, operands, parse_imm


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
