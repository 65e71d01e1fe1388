"""The typed inspection tools (issue 15): each composes kd's own commands from checked arguments
and reads kd's own answers back through the parse layer.

Every argument that reaches kd's command line is checked by its annotation: addresses are
``args.Address`` (no blank, ';' or '"'), a type or symbol name is one word, an expression one
line without ';' or '"' (it would end the command or open a string).

``threads``: ``!process <EPROCESS|-1> 2`` in a kernel (its THREAD lines), ``~`` in a process;
``read_memory``: ``db``/``dd``/``dq``/``dps``/``da``/``du`` with an ``L`` count (a row of ``??``
is kd's unreadable memory: a row marked unreadable, not a failure); ``disassemble``: ``u ADDR
L<count>``; ``evaluate``: ``?`` (MASM) or ``dx``; ``lookup_symbol``: ``x`` / ``ln``;
``read_type``: ``dt [-r<depth>] TYPE ADDRESS``; ``set_symbol_path``: ``.sympath[+]`` then
``.reload``; ``exception``: ``.exr -1``, ``.ecxr``, ``kb`` (user mode); ``decode_error``:
``!error`` at a live prompt, else the shipped table (kdmcp/parse/error_table.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

# The record models are built on the first command, not at start-up (kdmcp.parse's lazy
# attributes; docs/performance.md, "Cold start").
from kdmcp import parse as parsing
from kdmcp.engine import SessionState
from kdmcp.errors import InvalidArgument, KdMcpError
from kdmcp.parse import error_table
from kdmcp.server import typed
from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Call
from kdmcp.server.kind_rules import is_kernel
from kdmcp.server.registry import destroys, reads, tool
from kdmcp.server.tools.inspect.models import (
    DecodeErrorResult,
    DisassembleResult,
    EvaluateResult,
    ExceptionResult,
    FieldNode,
    Instruction,
    LookupResult,
    MemoryResult,
    MemoryRow,
    ReadTypeResult,
    SymbolPathResult,
    SymbolRow,
    ThreadRow,
    ThreadsResult,
)

if TYPE_CHECKING:
    from kdmcp.parse.models import TypeField

__all__ = [
    "decode_error",
    "disassemble",
    "evaluate",
    "exception",
    "lookup_symbol",
    "read_memory",
    "read_type",
    "set_symbol_path",
    "threads",
]

Word = Annotated[
    str,
    Field(
        min_length=1,
        max_length=256,
        pattern=r'^[^\s;"]+$',
    ),
]

# format -> (kd's display command, bytes per L unit)
_MEMORY = {
    "bytes": ("db", 1),
    "dwords": ("dd", 4),
    "qwords": ("dq", 8),
    "pointers": ("dps", 8),
    "ascii": ("da", 1),
    "unicode": ("du", 2),
}


@tool("inspect", reads("List threads"))
def threads(
    call: Call,
    process: Annotated[
        str | None,
        Field(
            description='EPROCESS',
            max_length=24,
            pattern=r"^(?:0x)?[0-9a-fA-F`]{1,20}$",
        ),
    ] = None,
    session_id: SessionId = None,
) -> ThreadsResult:
    """Threads of a process (!process ADDR 2, or ~)."""
    ran = typed.open_session(call.app, session_id, call.owner)
    if not is_kernel(ran.session):
        if process is not None:
            raise InvalidArgument(
                "process applies to kernel targets; a user-mode session lists its own threads (~)",
                session_id=ran.session.session_id,
            )
        listed = ran.read("~", parsing.ThreadsRecord)
        # a ~ row always has its id; the model requires one (a row without would fail validation)
        rows = [
            ThreadRow(id=t.id, index=t.index, state=t.state, teb=t.teb, current=t.current)  # type: ignore[arg-type]
            for t in (listed.threads if listed is not None else [])
        ]
        return typed.serve(ran, ThreadsResult, threads=rows)
    record = ran.read(f"!process {process or -1} 2", parsing.ProcessesRecord)
    procs = record.processes if record is not None else []
    # not a refusal: without kd's current thread, no row is marked current
    here = ran.record("? @$thread", show=False)
    current = here.value if isinstance(here, parsing.ExpressionRecord) else None
    rows = []
    for t in procs[0].threads if procs else []:
        rows.append(
            ThreadRow(
                id=t.cid or t.id,  # type: ignore[arg-type]  # a THREAD line always has its Cid
                address=t.address,
                state=t.state,
                wait_reason=t.wait_reason,
                processor=t.processor,
                current=current is not None and t.address is not None and int(t.address, 16) == int(current, 16),
            )
        )
    return typed.serve(ran, ThreadsResult, process=procs[0].address if procs else None, threads=rows)


@tool("inspect", reads("Read memory"))
def read_memory(
    call: Call,
    address: Address,
    length: Annotated[int, Field(ge=1, le=65536)] = 128,
    format: Annotated[
        Literal["bytes", "dwords", "qwords", "pointers", "ascii", "unicode"],
        Field(),
    ] = "bytes",
    session_id: SessionId = None,
) -> MemoryResult:
    """Read memory (db, dd, dq, dps, da, du)."""
    ran = typed.open_session(call.app, session_id, call.owner)
    name, unit = _MEMORY[format]
    count = max(1, -(-length // unit))
    record = ran.read(f"{name} {address} L{count:#x}", parsing.MemoryRecord)
    rows = []
    for r in record.rows if record is not None else []:
        bad = bool(r.values) and all(set(v) <= {"?"} for v in r.values)
        rows.append(
            MemoryRow(
                address=r.address,
                values=[] if bad else list(r.values),
                text=None if bad else (r.ascii if r.ascii is not None else r.text),
                symbols=list(r.symbols) if any(r.symbols) else [],
                unreadable=bad,
            )
        )
    return typed.serve(ran, MemoryResult, format=format, rows=rows)


@tool("inspect", reads("Disassemble"))
def disassemble(
    call: Call,
    address: Address,
    count: Annotated[int, Field(ge=1, le=1000)] = 16,
    session_id: SessionId = None,
) -> DisassembleResult:
    """Disassemble at an address (u)."""
    ran = typed.open_session(call.app, session_id, call.owner)
    record = ran.read(f"u {address} L{count:#x}", parsing.DisassemblyRecord)
    out, last = [], None
    for i in record.instructions if record is not None else []:
        out.append(
            Instruction(
                address=i.address,
                bytes=i.bytes or None,
                mnemonic=i.mnemonic,
                operands=i.operands or None,
                symbol=i.symbol if i.symbol != last else None,
            )
        )
        last = i.symbol
    return typed.serve(ran, DisassembleResult, instructions=out)


@tool("inspect", reads("Evaluate an expression"))
def evaluate(
    call: Call,
    expression: Annotated[
        str,
        Field(
            min_length=1,
            max_length=512,
            pattern=r'^[^;"\x00-\x1f\x7f]+$',
        ),
    ],
    evaluator: Annotated[Literal["masm", "dx"], Field()] = "masm",
    session_id: SessionId = None,
) -> EvaluateResult:
    """Evaluate an expression (? or dx)."""
    ran = typed.open_session(call.app, session_id, call.owner)
    if evaluator == "masm":
        value = ran.read(f"? {expression}", parsing.ExpressionRecord)
        if value is None:
            raise InvalidArgument(f"{typed.said_by(ran.session)}: {ran.outputs[-1].output.strip()}",
                                  session_id=ran.session.session_id)
        return typed.serve(ran, EvaluateResult, evaluator="masm", value=value.value, decimal=value.decimal)
    record = ran.read(f"dx {expression}", parsing.DataModelRecord)
    text = ran.outputs[-1].output.strip()
    # dx's own complaint is a line of text, not an error record: "Error: Unable to bind name '@$x'"
    if record is None or text.startswith("Error:") or record.warnings:
        raise InvalidArgument(
            f"dx: {text.splitlines()[-1] if text else 'no answer'}", session_id=ran.session.session_id
        )
    children = [c.model_dump(exclude_none=True, exclude_defaults=True) for c in record.children]
    return typed.serve(ran, EvaluateResult, evaluator="dx", value=record.value, type=record.type, children=children)


@tool("inspect", reads("Look up a symbol"))
def lookup_symbol(
    call: Call,
    name: Annotated[Word | None, Field(description='x: nt!NtCreate*')] = None,
    address: Address | None = None,
    session_id: SessionId = None,
) -> LookupResult:
    """Symbols by name (x) or nearest an address (ln)."""
    if (name is None) == (address is None):
        raise InvalidArgument("give name (x, wildcards allowed) or address (ln), not both")
    ran = typed.open_session(call.app, session_id, call.owner)
    record = ran.read(f"x {name}" if name is not None else f"ln {address}", parsing.SymbolsRecord)
    # x and ln print an address and a name on every row, but for ln's exact match printed without a
    # neighbour line (parse/symbols.py: no address); the model requires both, so such a row fails validation
    rows = [
        SymbolRow(address=s.address, name=s.name, offset=s.offset, exact=bool(s.exact))  # type: ignore[arg-type]
        for s in (record.symbols if record is not None else [])
    ]
    return typed.serve(ran, LookupResult, symbols=rows)


def _tree(fields: Sequence[TypeField]) -> list[FieldNode]:
    """``dt -r``'s indented fields (each with its depth) as a tree."""
    roots: list[FieldNode] = []
    stack: list[tuple[int, FieldNode]] = []
    for f in fields:
        node = FieldNode(offset=f.offset, name=f.name, type=f.type, value=f.value if f.value else f.preview)
        while stack and stack[-1][0] >= f.depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((f.depth, node))
    return roots


@tool("inspect", reads("Read a typed structure"))
def read_type(
    call: Call,
    type: Word,
    address: Address | None = None,
    depth: Annotated[int, Field(description='dt -r', ge=0, le=5)] = 0,
    session_id: SessionId = None,
) -> ReadTypeResult:
    """A type's layout or an instance's fields (dt)."""
    ran = typed.open_session(call.app, session_id, call.owner)
    line = "dt" + (f" -r{depth}" if depth else "") + f" {type}" + (f" {address}" if address else "")
    record = ran.read(line, parsing.TypeDumpRecord)
    if record is None:
        raise InvalidArgument(f"{typed.said_by(ran.session)}: {ran.outputs[-1].output.strip() or 'no answer'}",
                             session_id=ran.session.session_id)
    return typed.serve(ran, ReadTypeResult, type_name=type, fields=_tree(record.fields))


@tool("commands", destroys("Set the symbol path"))
def set_symbol_path(
    call: Call,
    path: Annotated[
        str,
        Field(
            min_length=1,
            max_length=1024,
            pattern=r'^[^\s"\x00-\x1f\x7f]+$',
        ),
    ],
    append: Annotated[bool, Field(description='.sympath+')] = False,
    reload: Annotated[bool, Field()] = False,
    session_id: SessionId = None,
) -> SymbolPathResult:
    """Set or extend the symbol path; .reload."""
    app = call.app
    ran = typed.open_session(app, session_id, call.owner)
    line = (".sympath+ " if append else ".sympath ") + path
    # Both lines past the policy before either runs (a network path outside network_roots is
    # refused under standard, or put to the person once: asking.py), and each judged once.
    ran.allow(line)
    if reload:
        ran.allow(".reload")
    record = ran.read(line, parsing.SymbolPathRecord)
    if reload:
        ran.run(".reload")
    return typed.serve(ran, SymbolPathResult, path=record.path if record is not None else None, reloaded=reload)


@tool("inspect", reads("The exception"))
def exception(call: Call, session_id: SessionId = None) -> ExceptionResult:
    """User mode: the last exception and its stack."""
    ran = typed.open_session(call.app, session_id, call.owner)
    if is_kernel(ran.session):
        raise InvalidArgument(
            "exception reads a user-mode process's exception (.exr -1); in a kernel use analyze "
            "or kd_command .bugcheck",
            session_id=ran.session.session_id,
        )
    exr = ran.read(".exr -1", parsing.ExceptionRecordRecord)
    ran.run(".ecxr")
    stack = ran.record("kb")  # not a refusal: no stack there, no frames
    frames = (
        [f.model_dump(exclude_none=True, exclude_defaults=True) for f in stack.frames]
        if isinstance(stack, parsing.StackRecord)
        else []
    )
    return typed.serve(
        ran,
        ExceptionResult,
        code=exr.code if exr is not None else None,
        description=exr.description if exr is not None else None,
        address=exr.address if exr is not None else None,
        symbol=exr.symbol if exr is not None else None,
        parameters=list(exr.parameters) if exr is not None else [],
        frames=frames,
    )


@tool("inspect", reads("Decode an error code"))
def decode_error(
    call: Call,
    code: Annotated[
        str,
        Field(
            min_length=1,
            max_length=24,
            pattern=r"^-?(?:0x|0n)?[0-9a-fA-F`]+$",
        ),
    ],
    kind: Annotated[
        Literal["ntstatus", "hresult", "win32"] | None, Field()
    ] = None,
    session_id: SessionId = None,
) -> DecodeErrorResult:
    """Decode an NTSTATUS/HRESULT/Win32 code."""
    try:
        value = error_table.parse_value(code)
    except ValueError as exc:
        raise InvalidArgument(f"code: {exc} (0xC0000005, c0000005, -1073741819, 5)") from None
    d = error_table.decode(value, kind)
    fields: dict[str, Any] = {}
    try:
        session = call.app.session(session_id, call.owner)
    except KdMcpError:
        if session_id is not None:
            raise
        session = None
    if (
        session is not None
        and session.state == SessionState.broken
        and session.plan.kind not in ("kernel_dump", "user_dump")
    ):
        ran = typed.Ran(call.app, session, call.owner)
        record = ran.record(f"!error {value:#x}" + (" 1" if d.kind == "ntstatus" and value < 0x10000 else ""))
        # the message of !error's record; kd's complaint instead (an error record: "No export error
        # found") is taken as the message too
        message = record.message if isinstance(record, (parsing.ErrorCodeRecord, parsing.ErrorRecord)) else None
        fields = {
            "source": "!error",
            "session_id": session.session_id,
            "output": ran.outputs[-1].output.strip() or None,
        }
        if message and "Unable to get error code text" not in message:
            fields["message"] = message
    signed = value - (1 << 32) if value & 0x80000000 else value
    return DecodeErrorResult(
        **{
            "code": d.hex,
            "decimal": signed,
            "kind": d.kind,
            "severity": d.severity,
            "facility": d.facility,
            "facility_name": d.facility_name,
            "customer": d.customer,
            "name": d.name,
            "message": d.message,
            "win32": d.win32,
            "ntstatus": f"0x{d.ntstatus:08x}" if d.ntstatus is not None else None,
            "source": "table",
            **fields,
        }
    )
