"""Session states and the events the debugger reports on its own (not as command output)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kdmcp.session_state import SessionState
from kdmcp.validation import LazyModel

__all__ = ["EVENT_TEXT_LIMIT", "DebuggerEvent", "EventKind", "SessionState"]

EventKind = Literal[
    "connected",
    "client_connected",  # a debugging client joined the session's server (share_session)
    "waiting_for_target",
    "break_in",
    "breakpoint",
    "exception",  # code, first_chance; stopped says whether the target stopped there or went on
    "bugcheck",  # stays the stop's reason through the "Break instruction exception" kd prints after it
    # the target stopped with no reason line: a step (p/t), a return (gu) or g ADDRESS ended
    # there; the text is the new location and its instruction (engine/step_stop.py)
    "step",
    # cdb's "ModLoad:" lines (while the debuggee runs and at its start), "Last event: Load module"
    # (an sx filter's .lastevent), a stop at nt!DebugService2+0x5 (kd's sxe ld): module, base, end
    "module_load",
    "module_unload",  # "Unload module X at BASE", "Last event: Unload module"
    # cdb's exit-process stop (at ntdll!NtTerminateProcess+0x14), "Last event: ... Exit process",
    # or the first "No runnable debuggees": the debuggee is gone
    "process_exit",
    "thread_exit",  # an exit-thread stop (sxe et: at ntdll!NtTerminateThread), "Exit thread"
    "reboot",
    "reconnecting",
    "transport_lost",
    "dbgprint",
    "exited",
]

EVENT_TEXT_LIMIT = 4096


class DebuggerEvent(LazyModel):
    """Something the target or debugger did, with where its text sits in the session output."""

    seq: int
    kind: EventKind
    text: str
    offset: int
    end_offset: int
    time_unix: float
    during_command: bool = False
    breakpoint: int | None = None
    code: str | None = None  # bugcheck or exception code, "0x..." lower case
    truncated: bool = False
    first_chance: bool | None = Field(
        default=None, description="exceptions: first chance (true) or second (false); null where kd does not say")
    # Set when the prompt that ends the stop arrives (the newest reason-capable event of the run), so
    # an exception the target handled or a module it loaded while running stays false.
    stopped: bool = Field(default=False, description="this event was the stop's reason; false: the target went on")
    module: str | None = Field(default=None, description="module events: the image as kd names it")
    base: str | None = Field(default=None, description="module events: its base address")
    module_end: str | None = Field(default=None, description="module_load from ModLoad: where the image ends")
    note: str | None = Field(default=None, description="what the event means for the session")
