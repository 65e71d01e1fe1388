"""What ``decode_ioctl`` and ``ioctl_map`` return.

``decode_ioctl`` is pure (no session): its text block is one line, the code and the
``CTL_CODE(...)`` that builds it. ``ioctl_map``'s helper commands (``!drvobj``, ``uf``, ``dd``)
are hidden from its text block -- the map is the point, and the routine's disassembly is long --
but stay readable through ``output_id``. Fields usually absent default to empty/None so
``structuredContent`` leaves them out (docs/results.md, "Economy").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kdmcp.server import models
from kdmcp.server.models import TypedResult
from kdmcp.validation import LazyModel

__all__ = ["DecodeIoctlResult", "IoctlMapResult", "MappedIoctl", "UnresolvedSite", "decode_ioctl_text"]


class DecodeIoctlResult(models.Served):
    """A control code split into CTL_CODE's fields (devioctl.h)."""

    code: str
    device_type: str
    device_type_name: str | None = None
    function: str
    method: str
    access: str
    ctl_code: str
    vendor_device_type: bool = Field(default=False, description="device type 0x8000 and up")
    vendor_function: bool = Field(default=False, description="function 0x800 and up")
    fsctl: bool = Field(default=False, description="FILE_DEVICE_FILE_SYSTEM: an FSCTL")
    name: str | None = Field(default=None, description="a well-known code's header name")

    @classmethod
    def render_text(cls, data: dict[str, Any]) -> str:
        return decode_ioctl_text(data)


def decode_ioctl_text(data: dict[str, Any]) -> str:
    """The text block of ``decode_ioctl``: a header as every result's (no session: what it is), then
    ``0x00222003 = CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, …)``."""
    name = f" {data['name']}" if data.get("name") else ""
    return f"[decoded]\n{data['code']}{name} = {data['ctl_code']}"


class MappedIoctl(LazyModel):
    code: str
    name: str | None = None
    ctl_code: str
    handler: str = Field(description="where the routine goes for it")
    handler_symbol: str | None = None
    how: Literal["compare", "subtract_chain", "binary_search", "jump_table"]
    confidence: Literal["high", "medium"] = Field(description="medium: tracked through a stack slot")
    at: str = Field(description="the branch or jmp that routes it")


class UnresolvedSite(LazyModel):
    at: str
    reason: str


class IoctlMapResult(TypedResult):
    """The codes a driver's IRP_MJ_DEVICE_CONTROL routine routes to a case, from its code."""

    driver: str | None = None
    driver_object: str | None = None
    routine: str | None = Field(default=None, description="the IRP_MJ_DEVICE_CONTROL routine")
    routine_symbol: str | None = None
    handles_ioctls: bool = Field(default=True, description="false: the entry is nt!IopInvalidDeviceRequest")
    note: str | None = None
    codes: list[MappedIoctl] = Field(default_factory=list)
    unresolved: list[UnresolvedSite] = Field(default_factory=list, description="constructs not resolved")
    default: list[str] = Field(default_factory=list, description="where codes no case takes go")
    instructions: int = Field(default=0, description="instructions disassembled (uf)")
    listing_cut: bool = Field(default=False, description="uf's listing was longer than the walk reads")
    truncated_walk: bool = Field(default=False, description="the path budget ran out: the map may miss codes")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        head = f"{data.get('driver') or '?'} IRP_MJ_DEVICE_CONTROL {data.get('routine_symbol') or data.get('routine')}"
        if not data.get("handles_ioctls", True):
            return [f"{head}: {data.get('note')}"]
        lines = [f"{head}: {len(data.get('codes', ()))} codes"] + ([data["note"]] if data.get("note") else [])
        for c in data.get("codes", ()):
            what = f"{c['code']} {c['name']}" if c.get("name") else c["code"]
            how = c["how"] if c["confidence"] == "high" else f"{c['how']}, {c['confidence']}"
            lines.append(f"{what} {c['ctl_code']} -> {c.get('handler_symbol') or c['handler']} ({how})")
        lines += [f"unresolved at {u['at']}: {u['reason']}" for u in data.get("unresolved", ())]
        if data.get("default"):
            lines.append("default: " + ", ".join(data["default"]))
        if data.get("listing_cut"):
            lines.append(f"listing cut at {data['instructions']} instructions: the map may miss codes")
        if data.get("truncated_walk"):
            lines.append("walk truncated: the map may miss codes")
        return lines
