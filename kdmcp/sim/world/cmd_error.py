"""``!error Value [Flags]``: decode an error value, in kd and in cdb, from the project's table.

The format is kd's (Debugger Commands, "!error"; corpus exceptions_errors/09.txt and 10.txt)::

    Error code: (Win32) 0x2 (2) - The system cannot find the file specified.
    Error code: (NTSTATUS) 0x2 - STATUS_WAIT_2
    Error code: (NTSTATUS) 0xc0000005 (3221225477) - The instruction at 0x%p referenced memory at 0x%p. ...

"If Flags is set to 1, the error code is read as an NTSTATUS code." A value the table has no
text for gets its name when known (as ``STATUS_WAIT_2`` above), else kd's "Unable to get
error code text" (modelled; not in the corpus). The value is read in kd's default radix (16).
"""

from __future__ import annotations

from kdmcp.parse.error_table import decode
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.registry import command
from kdmcp.sim.world.symbols import ExprError

__all__: list[str] = []

_LABEL = {"win32": "Win32", "ntstatus": "NTSTATUS", "hresult": "HRESULT"}


def _value(text: str) -> int:
    t = text.lower().replace("`", "")
    try:
        value = int(t[2:], 10) if t.startswith("0n") else int(t.removeprefix("0x"), 16)
    except ValueError:
        raise ExprError(text) from None
    return value & 0xFFFFFFFF


@command("!error", modes=("kernel", "user"), summary="decode a Win32 / NTSTATUS / HRESULT value")
def _error(world: World, name: str, args: str) -> str | None:
    parts = args.split()
    if not parts:
        return None
    value = _value(parts[0])
    nt_flag = len(parts) > 1 and parts[1] in ("1", "0x1")
    d = decode(value, "ntstatus" if nt_flag else None)
    if d.message:
        return f"Error code: ({_LABEL[d.kind]}) {hex(value)} ({value}) - {d.message}\n"
    if d.name:
        return f"Error code: ({_LABEL[d.kind]}) {hex(value)} - {d.name}\n"
    return f"Error code: ({_LABEL[d.kind]}) {hex(value)} ({value}) - <Unable to get error code text>\n"
