"""Decoding a Windows error value without a debugger: NTSTATUS, HRESULT and Win32 codes.

Why a table: a dump (or no session at all) has no ``!error`` to ask, yet an agent still meets
``0xC0000005`` in a bugcheck argument or ``0x80070005`` in a log. The facts come from
[MS-ERREF] "Windows Error Codes" (Microsoft Open Specifications: 2.1 HRESULT, 2.1.2 its
facility values, 2.2 Win32 error codes, 2.3 NTSTATUS values) and the SDK headers
``ntstatus.h`` / ``winerror.h``; the rows live in ``error_table.txt`` beside this module
(``kind<TAB>value<TAB>NAME<TAB>message``). The layouts decoded:

- NTSTATUS (2.3): severity (bits 31-30: success, informational, warning, error), customer
  bit 29, reserved bit 28, facility bits 27-16, code bits 15-0.
- HRESULT (2.1): S (31, failure), R (30), C (29, customer), N (28, an NTSTATUS mapped by
  HRESULT_FROM_NT), X (27), facility bits 26-16, code bits 15-0. ``0x8007xxxx`` is
  HRESULT_FROM_WIN32 of the Win32 error ``xxxx``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["Decoded", "ErrorKind", "decode", "lookup", "parse_value"]

ErrorKind = Literal["ntstatus", "hresult", "win32"]
_SEVERITY = ("success", "informational", "warning", "error")
# [MS-ERREF] 2.1.2 HRESULT facility codes (the common ones)
HRESULT_FACILITIES = {
    0: "NULL",
    1: "RPC",
    2: "DISPATCH",
    3: "STORAGE",
    4: "ITF",
    7: "WIN32",
    8: "WINDOWS",
    9: "SECURITY",
    10: "CONTROL",
    11: "CERT",
    12: "INTERNET",
    13: "MEDIASERVER",
    14: "MSMQ",
    15: "SETUPAPI",
    16: "SCARD",
    17: "COMPLUS",
    19: "URT",
    23: "SXS",
    25: "HTTP",
    32: "BACKGROUNDCOPY",
    36: "WINDOWSUPDATE",
    37: "DIRECTORYSERVICE",
    38: "GRAPHICS",
    39: "SHELL",
    40: "TPM_SERVICES",
    41: "TPM_SOFTWARE",
    49: "FVE",
    50: "FWP",
    51: "WINRM",
    52: "NDIS",
    57: "BCD",
}
# ntstatus.h FACILITY_* values (the common ones)
NTSTATUS_FACILITIES = {
    1: "DEBUGGER",
    2: "RPC_RUNTIME",
    3: "RPC_STUBS",
    4: "IO_ERROR_CODE",
    7: "NTWIN32",
    0x19: "TRANSACTION",
    0x1A: "COMMONLOG",
    0x1C: "FILTER_MANAGER",
    0x20: "DRIVER_FRAMEWORK",
    0x21: "FVE_ERROR_CODE",
    0x22: "FWP_ERROR_CODE",
    0x23: "NDIS_ERROR_CODE",
}
_VALUE_RE = re.compile(r"^(?:(?P<hex>0x[0-9a-f`]+)|(?P<dec>-?\d+|0n\d+)|(?P<bare>[0-9a-f`]+))$", re.IGNORECASE)


@dataclass(frozen=True)
class Decoded:
    """One value read as one kind: its layout, and the table's name and message when it has them."""

    value: int
    kind: ErrorKind
    severity: str
    facility: int
    code: int
    facility_name: str | None = None
    customer: bool = False
    name: str | None = None
    message: str | None = None
    win32: int | None = None  # HRESULT_FROM_WIN32: the Win32 error inside
    ntstatus: int | None = None  # HRESULT_FROM_NT: the NTSTATUS inside

    @property
    def hex(self) -> str:
        return f"0x{self.value:08x}" if self.kind != "win32" else hex(self.value)


@functools.cache
def _table() -> dict[tuple[str, int], tuple[str, str]]:
    rows: dict[tuple[str, int], tuple[str, str]] = {}
    for line in Path(__file__).with_name("error_table.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, value, name, message = [*line.split("\t"), "", ""][:4]
        rows[(kind, int(value, 16))] = (name, message.strip())
    return rows


def lookup(kind: ErrorKind, value: int) -> tuple[str, str] | None:
    """(name, message) of ``value`` as ``kind``; a message may be empty (the header gives none)."""
    return _table().get((kind, value))


def parse_value(text: str) -> int:
    """``0xC0000005``, ``c0000005``, ``-1073741819``, ``5``, ``0n5``: a 32-bit value.

    Bare digits are decimal (Win32 errors are written so, ``ERROR_ACCESS_DENIED`` is 5); a hex
    value needs ``0x`` or a hex letter; a negative number is the int32 kd prints in ``(…)``.
    """
    m = _VALUE_RE.match(text.strip())
    if m is None:
        raise ValueError(f"not a number: {text!r}")
    if m["hex"]:
        value = int(m["hex"].replace("`", ""), 16)
    elif m["dec"]:
        value = int(m["dec"].removeprefix("0n"))
    else:
        value = int(m["bare"].replace("`", ""), 16)
    if not -(1 << 31) <= value < (1 << 32):
        raise ValueError(f"{text!r} does not fit 32 bits")
    return value & 0xFFFFFFFF


def _guess(value: int) -> ErrorKind:
    if value < 0x10000:
        return "win32"
    if (("ntstatus", value)) in _table():
        return "ntstatus"
    if (("hresult", value)) in _table() or value & 0x10000000:
        return "hresult"
    # a failure HRESULT has R (bit 30) clear; 0xC… and 0x4… are NTSTATUS error / informational
    if value >> 30 == 2 and ((value >> 16) & 0x7FF) in HRESULT_FACILITIES and ((value >> 16) & 0x7FF):
        return "hresult"
    return "ntstatus"


def decode(value: int, kind: ErrorKind | None = None) -> Decoded:
    """``value`` decoded as ``kind`` (default: the likeliest reading, as ``!error`` picks one)."""
    value &= 0xFFFFFFFF
    kind = kind or _guess(value)
    known = lookup(kind, value)
    name, message = known if known else (None, None)
    code = value & 0xFFFF
    if kind == "win32":
        return Decoded(
            value, "win32", "error" if value else "success", 7, code, "WIN32", name=name, message=message or None
        )
    if kind == "ntstatus":
        facility = (value >> 16) & 0xFFF
        return Decoded(
            value,
            "ntstatus",
            _SEVERITY[value >> 30],
            facility,
            code,
            NTSTATUS_FACILITIES.get(facility),
            bool(value & 0x20000000),
            name,
            message or None,
        )
    facility = (value >> 16) & 0x7FF
    win32 = code if facility == 7 and value & 0x80000000 and not value & 0x10000000 else None
    ntstatus = value & ~0x10000000 if value & 0x10000000 else None
    if known is None and win32 is not None and (inner := lookup("win32", win32)) is not None:
        name, message = f"HRESULT_FROM_WIN32({inner[0]})", inner[1]
    if known is None and ntstatus is not None and (inner := lookup("ntstatus", ntstatus)) is not None:
        name, message = f"HRESULT_FROM_NT({inner[0]})", inner[1]
    return Decoded(
        value,
        "hresult",
        "error" if value & 0x80000000 else "success",
        facility,
        code,
        HRESULT_FACILITIES.get(facility),
        bool(value & 0x20000000),
        name,
        message or None,
        win32,
        ntstatus,
    )
