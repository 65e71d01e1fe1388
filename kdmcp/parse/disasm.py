"""``u``, ``ub``, ``uf``: disassembly lines and the symbol labels above them.

The instruction grammar is shared with the register parser (``r`` prints the current
instruction the same way), so the patterns live here::

    nt!RtlSubtreePredecessor+0x9:                                   <- label
    fffff802`40d322f9 488b4810        mov     rcx,qword ptr [rax+10h]
       13 fffff800`64521020 4889542410 mov qword ptr [rsp+10h],rdx   <- uf with line numbers
    0033:00007ffe`eeed19b6 f348a7     repe cmps qword ptr [rsi],qword ptr [rdi]
    01001398 889801010000     mov     [eax+0x101],bl          ds:0023:00c87001=??
"""

from __future__ import annotations

import re
from typing import Any, TypeAlias

from kdmcp.parse._text import addr, split_lines, strip_source
from kdmcp.parse.models import DisassemblyRecord, Instruction, MemoryReference

# One instruction line: [uf source line] [selector:]address bytes mnemonic [operands].
INSTRUCTION_RE = re.compile(
    r"""^\s*
    (?:(?P<lineno>\d+)\s+)?                                 # uf: "   13 "
    (?:(?P<seg>[0-9a-fA-F]{4}):)?                           # "0033:" selector prefix
    # a 32/64-bit address, or a 16-bit offset after its segment: a V86-mode or real-mode
    # .trap / r shows "0b4a:0123 cd21  int 21h" (the issue 29 parser sample's class; the form
    # here is reconstructed, segment:offset as kd prints 16-bit addresses)
    (?P<address>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?|(?<=:)[0-9a-fA-F]{4})\s+
    (?P<bytes>(?:[0-9a-fA-F]{2})+|\?\?)\s+
    (?P<mnemonic>[a-zA-Z?][\w?.]*)
    (?:\s+(?P<operands>.*))?$""",
    re.VERBOSE,
)

# A label ("nt!Foo+0x9:", " COMCTL32!Header_Draw :", "mod!f [c:\x.cpp @ 13]:") is read
# with string operations in match_label: a pattern with blank runs on both sides of an
# optional group backtracks cubically on long blank runs.
Label: TypeAlias = "tuple[str, str | None, int | None]"

# Effective-address note kd appends after the operands of the current instruction:
# "ds:ffffffff`00000090=????????????????", "ds:0023:00c87001=??", "ss:00000063`2036f808=00000000".
_MEMREF_RE = re.compile(
    r"\s+(?P<seg>[a-z]{2}):(?:(?P<sel>[0-9a-fA-F]{4}):)?(?P<addr>[0-9a-fA-F`]{4,17})=(?P<value>\S+)$"
)

# Branch/reference target printed in parentheses at the end: "... (fffff802`40d32306)" or
# inside a memory operand, which may come first: "[nvlddmkm+0x6eee88 (fffff801`645aee88)]",
# "byte ptr [SharedUserData+0x308 (00000000`7ffe0308)],1".
_TARGET_RE = re.compile(r"\((?P<target>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?)\)(?:\]|$)")

# A branch to an address without a symbol: the operand is the bare address
# ("je      ffff9d01`69ff0032").
_BARE_TARGET_RE = re.compile(r"[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?")

# What uf prints after a branch that ends a block when no symbols are loaded:
# "je      ffff9d01`69ff0032  Branch". An annotation, not an operand.
_BRANCH_NOTE = "  Branch"

# Prefixes kd prints as a separate word before the real mnemonic.
_PREFIXES = frozenset({"rep", "repe", "repne", "repz", "repnz", "lock"})


def instruction_fields(m: re.Match[str]) -> dict[str, Any]:
    """The ``Instruction`` fields of an ``INSTRUCTION_RE`` match (as a dict: cheap to build)."""
    mnemonic = m.group("mnemonic")
    operands = m.group("operands") or ""
    if mnemonic.lower() in _PREFIXES and operands:
        word, _, rest = operands.partition(" ")
        mnemonic = f"{mnemonic} {word}"
        operands = rest.strip()
    fields: dict[str, Any] = {
        "address": addr(m.group("address")),
        "bytes": m.group("bytes").lower(),
        "mnemonic": mnemonic,
    }
    if m.group("seg"):
        fields["segment"] = m.group("seg").lower()
    if m.group("lineno"):
        fields["line_number"] = int(m.group("lineno"))
    if operands:
        ref = _MEMREF_RE.search(operands)
        if ref is not None:
            fields["memory_reference"] = MemoryReference(
                segment=ref.group("seg"),
                selector=ref.group("sel"),
                address=addr(ref.group("addr")),
                value=ref.group("value").replace("`", ""),
            )
            operands = operands[: ref.start()].rstrip()
        if operands.endswith(_BRANCH_NOTE):
            operands = operands[: -len(_BRANCH_NOTE)]
        operands = operands.rstrip()
        targets = _TARGET_RE.findall(operands)
        if targets:
            fields["target"] = addr(targets[-1])
        elif _BARE_TARGET_RE.fullmatch(operands):
            fields["target"] = addr(operands)
        fields["operands"] = operands
    return fields


def match_label(line: str, colon: bool = True) -> Label | None:
    """(symbol, source file, source line) of a label line, or ``None``.

    Guarded against ordinary ``Key:`` lines: the symbol must look like one (``!``, ``+0x``,
    or a single non-alphabetic token). ``colon=False`` accepts the colon-less labels of
    ``FAULTING_IP`` / ``FOLLOWUP_IP``.
    """
    s = line.strip()
    if s.endswith(":"):
        s = s[:-1].rstrip()
    elif colon:
        return None
    if not s or s[0] in ":[":
        return None
    # an inlined frame names the function it is inlined in after its own label (cdb 10.0.10586,
    # MozillaSecurity/FuzzManager's cdb-4b-crashlog.txt): "js!JSObject::is+0x2 [inlined in
    # js!JSObject::allocKindForTenure+0x9]:"; the label is the inlined function's
    head, inlined, _ = s.partition(" [inlined in ")
    if inlined:
        s = head
    sym, file, lineno = strip_source(s)
    if not sym or "[" in sym:
        return None
    if "!" in sym or "+0x" in sym or (" " not in sym and not sym.isalpha()):
        return sym, file, lineno
    return None


def parse_disassembly(command: str, raw: str) -> DisassemblyRecord | None:
    """Instructions with the label each falls under; ``None`` if there are none."""
    instructions: list[dict[str, Any]] = []
    labels: list[str] = []
    symbol: str | None = None
    source_file: str | None = None
    source_line: int | None = None
    for line in split_lines(raw):
        if not line.strip():
            continue
        m = INSTRUCTION_RE.match(line)
        if m is not None:
            fields = instruction_fields(m)
            fields["symbol"] = symbol
            if source_file is not None:
                fields["source_file"] = source_file
                fields["source_line"] = source_line
            instructions.append(fields)
            continue
        label = match_label(line)
        if label is not None:
            symbol, source_file, source_line = label
            labels.append(symbol)
    if not instructions:
        return None
    return DisassemblyRecord.model_validate(
        {"command": command, "raw": raw, "instructions": instructions, "labels": labels}
    )


def parse_instruction_pair(label_line: str | None, line: str) -> Instruction | None:
    """An instruction (with its label) from two lines, as FAULTING_IP / FOLLOWUP_IP print it."""
    m = INSTRUCTION_RE.match(line)
    if m is None:
        return None
    fields = instruction_fields(m)
    if label_line is not None:
        label = match_label(label_line, colon=False)
        if label is not None:
            fields["symbol"], source_file, source_line = label
            if source_file is not None:
                fields["source_file"] = source_file
                fields["source_line"] = source_line
    return Instruction.model_validate(fields)
