"""What the typed inspection tools return (issue 15): threads, memory rows, instructions, values,
symbols, type trees, the symbol path, the exception and decoded error values.

Fields usually absent default to ``None``/``False``/empty so ``structuredContent`` leaves them
out (docs/results.md, "Economy"); the raw output beside them says the rest.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kdmcp.server import models
from kdmcp.server.models import TypedResult
from kdmcp.validation import LazyModel

__all__ = [
    "DecodeErrorResult",
    "DisassembleResult",
    "EvaluateResult",
    "ExceptionResult",
    "FieldNode",
    "Instruction",
    "LookupResult",
    "MemoryResult",
    "MemoryRow",
    "ReadTypeResult",
    "SymbolPathResult",
    "SymbolRow",
    "ThreadRow",
    "ThreadsResult",
]


class ThreadRow(LazyModel):
    id: str = Field(description="pid.tid (Cid)")
    address: str | None = Field(default=None, description="kernel: the ETHREAD")
    index: int | None = Field(default=None, description="user mode: the ~ number")
    state: str | None = None
    wait_reason: str | None = None
    processor: int | None = None
    teb: str | None = None
    current: bool = False


class ThreadsResult(TypedResult):
    process: str | None = Field(default=None, description="kernel: the EPROCESS listed")
    threads: list[ThreadRow] = Field(default_factory=list)


class MemoryRow(LazyModel):
    address: str
    values: list[str] = Field(default_factory=list)
    text: str | None = Field(default=None, description="db: the character column; da/du: the string")
    symbols: list[str | None] = Field(default_factory=list, description="pointers: dps's symbol per value")
    unreadable: bool = Field(default=False, description="kd printed ?? for the whole row")


class MemoryResult(TypedResult):
    format: str
    rows: list[MemoryRow] = Field(default_factory=list)

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        bad = sum(1 for r in data.get("rows", []) if r.get("unreadable"))
        return [f"{bad} unreadable rows"] if bad else []


class Instruction(LazyModel):
    address: str
    bytes: str | None = None
    mnemonic: str
    operands: str | None = None
    symbol: str | None = Field(default=None, description="the symbol line above it (given where it changes)")


class DisassembleResult(TypedResult):
    instructions: list[Instruction] = Field(default_factory=list)


class EvaluateResult(TypedResult):
    evaluator: str
    value: str | None = None
    decimal: int | None = None
    type: str | None = Field(default=None, description="dx: the value's type")
    children: list[dict[str, Any]] = Field(default_factory=list, description="dx: the value's fields")


class SymbolRow(LazyModel):
    address: str
    name: str
    offset: str | None = None
    exact: bool = False


class LookupResult(TypedResult):
    symbols: list[SymbolRow] = Field(default_factory=list)


class FieldNode(LazyModel):
    offset: str
    name: str
    type: str | None = None
    value: str | None = None
    children: list[FieldNode] = Field(default_factory=list)


class ReadTypeResult(TypedResult):
    type_name: str
    fields: list[FieldNode] = Field(default_factory=list)


class SymbolPathResult(TypedResult):
    path: str | None = None
    reloaded: bool = False


class ExceptionResult(TypedResult):
    code: str | None = None
    description: str | None = None
    address: str | None = None
    symbol: str | None = None
    parameters: list[str] = Field(default_factory=list)
    frames: list[dict[str, Any]] = Field(default_factory=list)


class DecodeErrorResult(models.Served):
    """A decoded value: its layout always; name and message from ``!error`` or the shipped table."""

    code: str = Field(description="the value in hex")
    decimal: int = Field(description="as a signed 32-bit number")
    kind: str = Field(description="ntstatus, hresult or win32")
    severity: str
    facility: int
    facility_name: str | None = None
    customer: bool = False
    name: str | None = None
    message: str | None = None
    win32: int | None = Field(default=None, description="HRESULT_FROM_WIN32: the Win32 error inside")
    ntstatus: str | None = Field(default=None, description="HRESULT_FROM_NT: the NTSTATUS inside")
    source: str = Field(description="!error (the live debugger) or table ([MS-ERREF], ntstatus.h, winerror.h)")
    session_id: str | None = None
    output: str | None = Field(default=None, description="!error's line, when it was asked")

    @classmethod
    def render_text(cls, data: dict[str, Any]) -> str:
        return decode_error_text(data)


def decode_error_text(data: dict[str, Any]) -> str:
    """The text block of ``decode_error``: a header, what the code is, then its layout (no JSON)."""
    head = "[" + " ".join(p for p in (data.get("session_id"), f"from {data['source']}") if p) + "]"
    what = f"{data['code']} ({data['decimal']}) {data['kind']}"
    if data.get("name") or data.get("message"):
        what += f" {data.get('name') or ''}: {data.get('message') or ''}".rstrip(": ")
    layout = [f"severity {data['severity']}", f"facility {data['facility']}"
              + (f" ({data['facility_name']})" if data.get("facility_name") else "")]
    if data.get("customer"):
        layout.append("customer bit set")
    if "win32" in data:
        layout.append(f"HRESULT_FROM_WIN32 of Win32 error {data['win32']}")
    if "ntstatus" in data:
        layout.append(f"HRESULT_FROM_NT of NTSTATUS {data['ntstatus']}")
    return "\n".join([head, what, ", ".join(layout)])
