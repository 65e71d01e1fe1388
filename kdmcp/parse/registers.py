"""Register contexts: ``r``, ``r rip``, ``rM``/``rX``, ``.trap``/``.cxr``/``.ecxr``, ``~Ns``.

kd prints registers as ``name=value`` groups, separated by one space within a group and
two or more between groups; flags follow ``iopl`` as two-letter words; then the current
instruction under its symbol label::

    rax=ffffffff00000080 rbx=0000000000000000 rcx=ffffa68337cb7028
     r8=ffffffffffffffff  r9=0000000000000000 r10=7ffffffffffffffc
    iopl=0         nv up ei ng nz na pe nc
    cs=0010  ss=0018  ds=0000  es=0000  fs=0000  gs=0000             efl=00010282
    nt!RtlSubtreePredecessor+0x9:
    fffff802`40d322f9 488b4810        mov     rcx,qword ptr [rax+10h] ds:ffffffff`00000090=????????????????

Non-hex registers (``st0= 0.0e+0000``, ``xmm0=0 0 0 0``, ``fpcw=027F: rn 53 puozdi``) are
kept as printed in ``raw_values``. ARM64 prints its flags after the status register
(``psr=60000000 -ZC- EL0``: the hex value is a register, ``-ZC-`` and ``EL0`` are flags); an
x86 trap frame adds ``ErrCode = 00000000``.
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.disasm import INSTRUCTION_RE, instruction_fields, match_label
from kdmcp.parse.models import RegistersRecord
from kdmcp.parse.register_names import ARM_STATUS_REGISTERS, IOPL, SEGMENT_REGISTERS

# A line that starts with "name=" (optionally indented: " r8=...").
REGISTER_LINE_RE = re.compile(r"^\s*\$?[A-Za-z][A-Za-z0-9]*=")

# Groups are separated by two or more blanks.
_GROUP_SPLIT_RE = re.compile(r"\s{2,}")

# A group made only of "name=hex" pairs separated by single blanks.
_HEX_GROUP_RE = re.compile(r"\$?[A-Za-z][A-Za-z0-9]*=[0-9a-fA-F`]+(?: \$?[A-Za-z][A-Za-z0-9]*=[0-9a-fA-F`]+)*")
_HEX_PAIR_RE = re.compile(r"(\$?[A-Za-z][A-Za-z0-9]*)=([0-9a-fA-F`]+)")
# A line made only of such pairs, separated by blanks (most lines of a context: "rax=… rbx=… rcx=…",
# "cs=0010  ss=0018 … efl=00000246"): each of its groups is a hex group, so the line is folded at once.
_HEX_LINE_RE = re.compile(r"\$?[A-Za-z][A-Za-z0-9]*=[0-9a-fA-F`]+(?: +\$?[A-Za-z][A-Za-z0-9]*=[0-9a-fA-F`]+)*")

# A group of flag words: "nv up ei pl zr na pe nc".
_FLAGS_RE = re.compile(r"[a-z]{2}(?: [a-z]{2})*")

# Status registers printed with their decoded flags: " pc=00007ffea80e30f4  psr=60000000 -ZC- EL0"
# (NZCV letters, "-" for a clear bit, then the exception level): register_names.ARM_STATUS_REGISTERS.
_STATUS_VALUE_RE = re.compile(r"(?P<value>[0-9a-fA-F]+)(?P<flags>(?: [-A-Za-z0-9]+)*)")

# x86 trap frame (".trap", !analyze TRAP_FRAME): "ErrCode = 00000000", the frame's error code.
_ERRCODE_RE = re.compile(r"^\s*ErrCode = (?P<value>[0-9a-fA-F]+)$")

# Current instruction whose memory cannot be read, as old engines print it after ".trap"
# with eip=0: "00000000 ???????????????" (bytes and mnemonic run together).
_UNREADABLE_INSTRUCTION_RE = re.compile(r"^\s*(?P<address>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?) \?{3,}(?:\s|$)")

# Informational lines kd prints around a context.
_NOTE_PREFIXES = ("Last set context", "NOTE:", "Some register values", "Resetting default scope")


def _add_pairs(text: str, ctx: dict[str, Any]) -> None:
    """Fold the ``name=hex`` pairs of ``text`` (a hex group, or a line of them: ASCII, as the
    patterns it matched) into the context dict: names lower case, values as ``hex_token_addr``
    spells them (lowered once for all of them)."""
    registers, segments = ctx["registers"], ctx["segments"]
    for key, value in _HEX_PAIR_RE.findall(text.lower()):
        norm = "0x" + value.replace("`", "")
        registers[key] = norm
        if key in SEGMENT_REGISTERS:
            segments[key] = norm


def _add_group(group: str, ctx: dict[str, Any]) -> None:
    """Fold one blank-separated group into the context dict."""
    if _HEX_GROUP_RE.fullmatch(group):
        _add_pairs(group, ctx)
        return
    if "=" not in group:
        if _FLAGS_RE.fullmatch(group):
            ctx["flags"].extend(group.split())
        return
    name, _, value = group.partition("=")
    key = name.strip().lower()
    status = _STATUS_VALUE_RE.fullmatch(value) if key in ARM_STATUS_REGISTERS else None
    if status is not None:
        ctx["registers"][key] = addr(status.group("value"))
        ctx["flags"].extend(status.group("flags").split())
        return
    if key == IOPL:
        # "iopl=0 nv up ..." when only one blank separates them
        first, _, rest = value.strip().partition(" ")
        ctx["registers"][IOPL] = addr(first) if first else "0x0"
        if rest.strip() and _FLAGS_RE.fullmatch(rest.strip()):
            ctx["flags"].extend(rest.split())
        return
    ctx["raw_values"][key] = value.strip()


def new_context() -> dict[str, Any]:
    """An empty context dict with the collection fields ready."""
    return {"registers": {}, "raw_values": {}, "flags": [], "segments": {}, "notes": []}


def add_register_line(line: str, ctx: dict[str, Any]) -> None:
    """Fold one ``name=value`` line into ``ctx``: group by group (``_add_group``), or at once when
    every group of it is a hex group (the same pairs, in the same order)."""
    stripped = line.strip()
    if _HEX_LINE_RE.fullmatch(stripped):
        _add_pairs(stripped, ctx)
        return
    for group in _GROUP_SPLIT_RE.split(stripped):
        if group:
            _add_group(group, ctx)


def set_instruction(ctx: dict[str, Any], label: str | None, m: re.Match[str]) -> None:
    """Record the current instruction (flattened, as ``RegistersRecord`` spells it)."""
    fields = instruction_fields(m)
    ctx["symbol"] = label
    ctx["address"] = fields["address"]
    ctx["bytes"] = fields["bytes"]
    ctx["mnemonic"] = fields["mnemonic"]
    ctx["operands"] = fields.get("operands", "")
    ctx["memory_reference"] = fields.get("memory_reference")


def context_from_lines(lines: list[str]) -> dict[str, Any] | None:
    """A ``Context`` dict from the lines of a register dump, or ``None`` if none is there.

    The instruction kept is the *last* one printed (after a ``g`` that stops twice, the
    current instruction is the last).
    """
    ctx = new_context()
    label: str | None = None
    found = False
    for line in lines:
        if not line.strip():
            continue
        if REGISTER_LINE_RE.match(line):
            add_register_line(line, ctx)
            found = True
            continue
        m = INSTRUCTION_RE.match(line)
        if m is not None:
            set_instruction(ctx, label, m)
            label = None
            found = True
            continue
        lm = match_label(line)
        if lm is not None:
            label = lm[0]
            continue
        unreadable = _UNREADABLE_INSTRUCTION_RE.match(line)
        if unreadable is not None:
            address = addr(unreadable.group("address"))
            ctx.update(symbol=label, address=address, bytes=None, mnemonic=None, operands=None, memory_reference=None)
            label = None
            found = True
            continue
        err = _ERRCODE_RE.match(line)
        if err is not None:
            ctx["registers"]["errcode"] = addr(err.group("value"))
            continue
        stripped = line.strip()
        if stripped.startswith(_NOTE_PREFIXES):
            ctx["notes"].append(stripped)
            continue
        if _FLAGS_RE.fullmatch(stripped) and ctx["registers"]:
            ctx["flags"].extend(stripped.split())
    if not found:
        return None
    return ctx


def finds(raw: str) -> bool:
    """Whether ``parse_registers`` returns a record for ``raw``: a line ``context_from_lines`` counts
    as found (a register line, the current instruction, an unreadable one), at the cost of reading
    up to the first of them (``dispatch.kind_of``)."""
    for line in split_lines(raw):
        if not line.strip():
            continue
        if REGISTER_LINE_RE.match(line) or INSTRUCTION_RE.match(line):
            return True
        if match_label(line) is None and _UNREADABLE_INSTRUCTION_RE.match(line):
            return True
    return False


def parse_registers(command: str, raw: str) -> RegistersRecord | None:
    """``RegistersRecord`` if any register or current instruction was printed."""
    ctx = context_from_lines(split_lines(raw))
    if ctx is None:
        return None
    ctx.update(command=command, raw=raw)
    return RegistersRecord.model_validate(ctx)
