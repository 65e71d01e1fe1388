"""The typed inspection tools' logic (issue 15): each composes kd's own commands from checked
arguments and reads kd's own answers back through the parse layer.

``threads``: ``!process <EPROCESS|-1> 2`` in a kernel (its THREAD lines), ``~`` in a process;
``read_memory``: ``db``/``dd``/``dq``/``dps``/``da``/``du`` with an ``L`` count (a row of ``??``
is kd's unreadable memory: a row marked unreadable, not a failure); ``disassemble``: ``u ADDR
L<count>``; ``evaluate``: ``?`` (MASM) or ``dx``; ``lookup_symbol``: ``x`` / ``ln``;
``read_type``: ``dt [-r<depth>] TYPE ADDRESS``; ``set_symbol_path``: ``.sympath[+]`` then
``.reload``; ``exception``: ``.exr -1``, ``.ecxr``, ``kb`` (user mode); ``decode_error``:
``!error`` at a live prompt, else the shipped table (kdmcp/parse/error_table.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from kdmcp.engine import SessionState
from kdmcp.errors import InvalidArgument, KdMcpError
from kdmcp.parse import error_table
from kdmcp.server import typed
from kdmcp.server.kind_rules import is_kernel
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
    from kdmcp.server.app import KdMcpApp

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

MemoryFormat = Literal["bytes", "dwords", "qwords", "pointers", "ascii", "unicode"]
# format -> (kd's display command, bytes per L unit)
_MEMORY = {
    "bytes": ("db", 1),
    "dwords": ("dd", 4),
    "qwords": ("dq", 8),
    "pointers": ("dps", 8),
    "ascii": ("da", 1),
    "unicode": ("du", 2),
}


def threads(app: KdMcpApp, session_id: str | None, process: str | None, *, owner: str | None) -> ThreadsResult:
    ran = typed.open_session(app, session_id, owner)
    if not is_kernel(ran.session):
        if process is not None:
            raise InvalidArgument(
                "process applies to kernel targets; a user-mode session lists its own threads (~)",
                session_id=ran.session.session_id,
            )
        record = ran.record("~")
        typed.refuse_error(ran, record)
        rows = [
            ThreadRow(id=t.id, index=t.index, state=t.state, teb=t.teb, current=bool(t.current))
            for t in getattr(record, "threads", []) or []
        ]
        return typed.serve(ran, ThreadsResult, threads=rows)
    record = ran.record(f"!process {process or -1} 2")
    typed.refuse_error(ran, record)
    procs = list(getattr(record, "processes", []) or [])
    current = getattr(ran.record("? @$thread", show=False), "value", None)
    rows = []
    for t in procs[0].threads if procs else []:
        rows.append(
            ThreadRow(
                id=t.cid or t.id,
                address=t.address,
                state=t.state,
                wait_reason=getattr(t, "wait_reason", None),
                processor=t.processor,
                current=current is not None and t.address is not None and int(t.address, 16) == int(current, 16),
            )
        )
    return typed.serve(ran, ThreadsResult, process=procs[0].address if procs else None, threads=rows)


def read_memory(
    app: KdMcpApp, session_id: str | None, address: str, length: int, fmt: MemoryFormat, *, owner: str | None
) -> MemoryResult:
    ran = typed.open_session(app, session_id, owner)
    name, unit = _MEMORY[fmt]
    count = max(1, -(-length // unit))
    record = ran.record(f"{name} {address} L{count:#x}")
    typed.refuse_error(ran, record)
    rows = []
    for r in getattr(record, "rows", []) or []:
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
    return typed.serve(ran, MemoryResult, format=fmt, rows=rows)


def disassemble(
    app: KdMcpApp, session_id: str | None, address: str, count: int, *, owner: str | None
) -> DisassembleResult:
    ran = typed.open_session(app, session_id, owner)
    record = ran.record(f"u {address} L{count:#x}")
    typed.refuse_error(ran, record)
    out, last = [], None
    for i in getattr(record, "instructions", []) or []:
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


def evaluate(
    app: KdMcpApp, session_id: str | None, expression: str, evaluator: Literal["masm", "dx"], *, owner: str | None
) -> EvaluateResult:
    ran = typed.open_session(app, session_id, owner)
    if evaluator == "masm":
        record = ran.record(f"? {expression}")
        typed.refuse_error(ran, record)
        if getattr(record, "kind", None) != "expression":
            raise InvalidArgument(f"kd: {ran.outputs[-1].output.strip()}", session_id=ran.session.session_id)
        return typed.serve(ran, EvaluateResult, evaluator="masm", value=record.value, decimal=record.decimal)  # type: ignore[union-attr]
    record = ran.record(f"dx {expression}")
    text = ran.outputs[-1].output.strip()
    if getattr(record, "kind", None) != "data_model" or text.startswith("Error:") or getattr(record, "warnings", None):
        raise InvalidArgument(
            f"dx: {text.splitlines()[-1] if text else 'no answer'}", session_id=ran.session.session_id
        )
    children = [c.model_dump(exclude_none=True, exclude_defaults=True) for c in record.children]  # type: ignore[union-attr]
    return typed.serve(
        ran,
        EvaluateResult,
        evaluator="dx",
        value=getattr(record, "value", None),
        type=getattr(record, "type", None),
        children=children,
    )


def lookup_symbol(
    app: KdMcpApp, session_id: str | None, name: str | None, address: str | None, *, owner: str | None
) -> LookupResult:
    if (name is None) == (address is None):
        raise InvalidArgument("give name (x, wildcards allowed) or address (ln), not both")
    ran = typed.open_session(app, session_id, owner)
    record = ran.record(f"x {name}" if name is not None else f"ln {address}")
    typed.refuse_error(ran, record)
    rows = [
        SymbolRow(address=s.address, name=s.name, offset=s.offset, exact=bool(s.exact))
        for s in getattr(record, "symbols", []) or []
    ]
    return typed.serve(ran, LookupResult, symbols=rows)


def _tree(fields: list[Any]) -> list[FieldNode]:
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


def read_type(
    app: KdMcpApp, session_id: str | None, type_name: str, address: str | None, depth: int, *, owner: str | None
) -> ReadTypeResult:
    ran = typed.open_session(app, session_id, owner)
    line = "dt" + (f" -r{depth}" if depth else "") + f" {type_name}" + (f" {address}" if address else "")
    record = ran.record(line)
    typed.refuse_error(ran, record)
    if getattr(record, "kind", None) != "type_dump":
        raise InvalidArgument(f"kd: {ran.outputs[-1].output.strip() or 'no answer'}", session_id=ran.session.session_id)
    return typed.serve(ran, ReadTypeResult, type_name=type_name, fields=_tree(list(record.fields)))  # type: ignore[union-attr]


def set_symbol_path(
    app: KdMcpApp, session_id: str | None, path: str, append: bool, reload: bool, *, owner: str | None
) -> SymbolPathResult:
    ran = typed.open_session(app, session_id, owner)
    line = (".sympath+ " if append else ".sympath ") + path
    app.enforce_policy(line, owner, ran.session.session_id)  # a srv* path is network_path: denied under standard
    if reload:
        app.enforce_policy(".reload", owner, ran.session.session_id)
    record = ran.record(line)
    typed.refuse_error(ran, record)
    if reload:
        ran.run(".reload")
    return typed.serve(ran, SymbolPathResult, path=getattr(record, "path", None), reloaded=reload)


def exception(app: KdMcpApp, session_id: str | None, *, owner: str | None) -> ExceptionResult:
    ran = typed.open_session(app, session_id, owner)
    if is_kernel(ran.session):
        raise InvalidArgument(
            "exception reads a user-mode process's exception (.exr -1); in a kernel use analyze "
            "or kd_command .bugcheck",
            session_id=ran.session.session_id,
        )
    exr = ran.record(".exr -1")
    typed.refuse_error(ran, exr)
    ran.run(".ecxr")
    stack = ran.record("kb")
    frames = [f.model_dump(exclude_none=True, exclude_defaults=True) for f in getattr(stack, "frames", []) or []]
    return typed.serve(
        ran,
        ExceptionResult,
        code=getattr(exr, "code", None),
        description=getattr(exr, "description", None),
        address=getattr(exr, "address", None),
        symbol=getattr(exr, "symbol", None),
        parameters=list(getattr(exr, "parameters", []) or []),
        frames=frames,
    )


def decode_error(
    app: KdMcpApp, session_id: str | None, code: str, kind: error_table.ErrorKind | None, *, owner: str | None
) -> DecodeErrorResult:
    try:
        value = error_table.parse_value(code)
    except ValueError as exc:
        raise InvalidArgument(f"code: {exc} (0xC0000005, c0000005, -1073741819, 5)") from None
    d = error_table.decode(value, kind)
    fields: dict[str, Any] = {}
    try:
        session = app.session(session_id, owner)
    except KdMcpError:
        if session_id is not None:
            raise
        session = None
    if (
        session is not None
        and session.state == SessionState.broken
        and session.plan.kind not in ("kernel_dump", "user_dump")
    ):
        ran = typed.Ran(app, session, owner)
        record = ran.record(f"!error {value:#x}" + (" 1" if d.kind == "ntstatus" and value < 0x10000 else ""))
        message = getattr(record, "message", None)
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
