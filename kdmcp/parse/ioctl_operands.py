"""x64 operands as kd's disassembler prints them, for IOCTL recovery: registers, immediates, memory.

kd's MASM-style syntax (the ``u`` / ``uf`` output the parse layer keeps as operand text):
``ecx``, ``8336E00Bh`` / ``3`` (hex with an ``h`` suffix, a leading 0 before a letter; bare
digits below 10), ``dword ptr [rdx+rax*4+3000h]``, ``qword ptr [rdx+0B8h]``,
``[rcx-7CC95FEEh]``, and a RIP-relative address as its symbol with the address in parentheses:
``[myfault (fffff800`60da0000)]``, ``[mydrv+0x3000 (fffff800`60da3000)]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kdmcp.parse.register_names import X64_GPR_VIEWS

__all__ = ["Imm", "Mem", "Reg", "operands", "parse_imm", "register"]

_SIZES = {"byte": 1, "word": 2, "dword": 4, "qword": 8}
_IMM_RE = re.compile(r"^-?(?:0x[0-9a-f]+|[0-9a-f]+h|[0-9]+)$")
_ABS_RE = re.compile(r"^(?P<sym>.*?)\s*\((?P<addr>[0-9a-fA-F`]+)\)$")


@dataclass(frozen=True)
class Reg:
    family: str  # "rcx" for rcx, ecx, cx, cl, ch
    width: int
    high: bool = False  # ah, bh, ch, dh


@dataclass(frozen=True)
class Imm:
    value: int  # modulo 2**64 as written; callers mask to their width


@dataclass(frozen=True)
class Mem:
    text: str
    size: int | None = None  # bytes, from "dword ptr"
    base: str | None = None  # register family
    index: str | None = None
    scale: int = 1
    disp: int = 0
    absolute: int | None = None  # a RIP-relative operand's address
    symbol: str | None = None  # ... and kd's name for it


def register(name: str) -> Reg | None:
    """The register an operand names (``ecx`` -> ``rcx``, 32 bits), or ``None`` if it names none."""
    hit = X64_GPR_VIEWS.get(name.lower())
    return Reg(*hit) if hit else None


def parse_imm(text: str) -> int | None:
    """A number as kd prints it in an operand (``0B8h``, ``3``, ``-1``), or ``None``."""
    t = text.strip().lower()
    if not _IMM_RE.match(t):
        return None
    neg = t.startswith("-")
    t = t.lstrip("-")
    if t.startswith("0x"):
        v = int(t[2:], 16)
    elif t.endswith("h"):
        v = int(t[:-1], 16)
    else:
        v = int(t, 10)
    return -v if neg else v


def _memory(text: str) -> Mem | None:
    head, _, rest = text.partition("[")
    inner = rest.rsplit("]", 1)[0].strip()
    words = head.lower().split()
    size = _SIZES.get(words[0]) if words else None
    absolute = _ABS_RE.match(inner)
    if absolute is not None:
        return Mem(
            text, size, absolute=int(absolute.group("addr").replace("`", ""), 16), symbol=absolute.group("sym") or None
        )
    base = index = None
    scale, disp = 1, 0
    for sign, term in re.findall(r"([+-]?)([^+-]+)", inner.replace(" ", "")):
        reg_part, star, mult = term.partition("*")
        reg = register(reg_part)
        if reg is not None and star:
            index, scale = reg.family, int(mult)
        elif reg is not None and base is None:
            base = reg.family
        elif reg is not None:
            index = reg.family
        else:
            value = parse_imm(term)
            if value is None:
                return None
            disp += -value if sign == "-" else value
    return Mem(text, size, base, index, scale, disp)


def _operand(text: str) -> Reg | Imm | Mem | None:
    t = text.strip()
    if "[" in t:
        return _memory(t)
    reg = register(t)
    if reg is not None:
        return reg
    value = parse_imm(t)
    return Imm(value) if value is not None else None


def operands(text: str) -> list[Reg | Imm | Mem]:
    """The operands of one instruction; one in a form not read here (a branch's ``sym (addr)``,
    ``gs:[188h]``) is a bare ``Mem`` of its text: an operand whose value is unknown."""
    if not text:
        return []
    return [_operand(part) or Mem(part.strip()) for part in text.split(",")]
