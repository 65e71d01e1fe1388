"""The typed inspection tools as clients see them (issue 15); their logic is ``inspection.py``.

Every argument that reaches kd's command line is checked here: addresses are ``toolkit.Address``
(no blank, ';' or '"'), a type or symbol name is one word, an expression one line without ';'
or '"' (it would end the command or open a string).
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp_types import CallToolResult
from pydantic import Field

from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Ctx, run_tool
from kdmcp.server.registry import destroys, reads, tool
from kdmcp.server.tools.inspect import logic as inspection
from kdmcp.server.tools.inspect.models import (
    DecodeErrorResult,
    DisassembleResult,
    EvaluateResult,
    ExceptionResult,
    LookupResult,
    MemoryResult,
    ReadTypeResult,
    SymbolPathResult,
    ThreadsResult,
)

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
        description="a symbol or type name, wildcards allowed: nt!NtCreate*",
        min_length=1,
        max_length=256,
        pattern=r'^[^\s;"]+$',
    ),
]


@tool("inspect", reads("List threads"))
async def threads(
    process: Annotated[
        str | None,
        Field(
            description="kernel: an EPROCESS (default: the current one)",
            max_length=24,
            pattern=r"^(?:0x)?[0-9a-fA-F`]{1,20}$",
        ),
    ] = None,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, ThreadsResult]:
    """A process's threads (kernel: !process ADDR 2; user: ~): id, ETHREAD, state, current."""
    return await run_tool(ctx, lambda c: inspection.threads(c.app, session_id, process, owner=c.owner))


@tool("inspect", reads("Read memory"))
async def read_memory(
    address: Address,
    length: Annotated[int, Field(description="bytes to read", ge=1, le=65536)] = 128,
    format: Annotated[
        Literal["bytes", "dwords", "qwords", "pointers", "ascii", "unicode"],
        Field(description="db, dd, dq, dps, da, du"),
    ] = "bytes",
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, MemoryResult]:
    """Memory as rows (db/dd/dq/dps/da/du); unreadable rows are marked, not an error."""
    return await run_tool(
        ctx, lambda c: inspection.read_memory(c.app, session_id, address, length, format, owner=c.owner)
    )


@tool("inspect", reads("Disassemble"))
async def disassemble(
    address: Address,
    count: Annotated[int, Field(description="instructions", ge=1, le=1000)] = 16,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, DisassembleResult]:
    """Instructions from address (u ADDRESS L<count>): address, bytes, mnemonic, operands, symbol."""
    return await run_tool(ctx, lambda c: inspection.disassemble(c.app, session_id, address, count, owner=c.owner))


@tool("inspect", reads("Evaluate an expression"))
async def evaluate(
    expression: Annotated[
        str,
        Field(
            description="MASM (? @rax+8) or dx (@$curprocess.Name)",
            min_length=1,
            max_length=512,
            pattern=r'^[^;"\x00-\x1f\x7f]+$',
        ),
    ],
    evaluator: Annotated[Literal["masm", "dx"], Field(description="masm: ?, a number; dx: a typed value")] = "masm",
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, EvaluateResult]:
    """Evaluate with ? (value, decimal) or dx (value, type, fields)."""
    return await run_tool(ctx, lambda c: inspection.evaluate(c.app, session_id, expression, evaluator, owner=c.owner))


@tool("inspect", reads("Look up a symbol"))
async def lookup_symbol(
    name: Annotated[Word | None, Field(description="x: symbols matching, e.g. nt!NtCreate*")] = None,
    address: Annotated[Address | None, Field(description="ln: the nearest symbols")] = None,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, LookupResult]:
    """Symbols by name (x, wildcards) or nearest to an address (ln, with offsets)."""
    return await run_tool(ctx, lambda c: inspection.lookup_symbol(c.app, session_id, name, address, owner=c.owner))


@tool("inspect", reads("Read a typed structure"))
async def read_type(
    type: Word,
    address: Annotated[Address | None, Field(description="the instance; absent: the layout")] = None,
    depth: Annotated[int, Field(description="dt -r: levels of nested fields", ge=0, le=5)] = 0,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, ReadTypeResult]:
    """dt TYPE ADDRESS as a field tree: offset, name, type, value, children."""
    return await run_tool(ctx, lambda c: inspection.read_type(c.app, session_id, type, address, depth, owner=c.owner))


@tool("commands", destroys("Set the symbol path"))
async def set_symbol_path(
    path: Annotated[
        str,
        Field(
            description="a .sympath list: C:\\sym;srv*C:\\cache*https://...",
            min_length=1,
            max_length=1024,
            pattern=r'^[^\s"\x00-\x1f\x7f]+$',
        ),
    ],
    append: Annotated[bool, Field(description=".sympath+ (add to the path)")] = False,
    reload: Annotated[bool, Field(description="then .reload")] = False,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, SymbolPathResult]:
    """Set or extend the symbol path (.sympath, under the policy), optionally .reload."""
    return await run_tool(
        ctx, lambda c: inspection.set_symbol_path(c.app, session_id, path, append, reload, owner=c.owner)
    )


@tool("inspect", reads("The exception"))
async def exception(session_id: SessionId = None, ctx: Ctx = None) -> Annotated[CallToolResult, ExceptionResult]:
    """User mode: the last exception (.exr -1), its context (.ecxr) and the stack there (kb)."""
    return await run_tool(ctx, lambda c: inspection.exception(c.app, session_id, owner=c.owner))


@tool("inspect", reads("Decode an error code"))
async def decode_error(
    code: Annotated[
        str,
        Field(
            description="0xC0000005, c0000005, -1073741819, 5 (decimal), 0x80070005",
            min_length=1,
            max_length=24,
            pattern=r"^-?(?:0x|0n)?[0-9a-fA-F`]+$",
        ),
    ],
    kind: Annotated[
        Literal["ntstatus", "hresult", "win32"] | None, Field(description="read it as this (default: the likeliest)")
    ] = None,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, DecodeErrorResult]:
    """NTSTATUS/HRESULT/Win32: severity, facility, code, name, message (!error live, else a table)."""
    return await run_tool(ctx, lambda c: inspection.decode_error(c.app, session_id, code, kind, owner=c.owner))
