"""What a stop is, when kd does not say it in a reason line; what runs on its own at a stop.

The machine (``machine.py``) reads kd's event lines; these are the rules for the rest, each from
real sessions in fixtures/sessions/:

- A stop with no reason line is named by where it is (its location line): cdb's exit-process and
  exit-thread stops at ``ntdll!NtTerminateProcess+0x14`` (aiblog-cdb-attach-exit, sincon-cdb-lab0;
  ``+0xa`` on Windows 8.1: msmania-cdb-launch-exit, msmania-cdb-ccli-exit -- any offset counts),
  kd's module-load stops at ``nt!DebugService2+0x5`` (sxe ld on Windows 10; ``+0x8``, "brk
  #0xF000", on ARM64: geocausa-kd-arm64-unload-logopen) and at
  ``nt!DbgLoadImageSymbols+0x47`` / ``winload!DbgLoadImageSymbols+0x44`` (Windows 7 and its boot
  debugger: ioctlfuzzer-kd-logopen).
  An ``sxe ud`` stop stops there too, after its "Unload module X at BASE" line, which names it
  (the machine keeps the module event right before the stop as its reason: geocausa-kd-arm64-
  unload-logopen, "Unload module qccamsecureisp8380.sys at fffff803`7c6d0000" /
  "nt!DebugService2+0x8:").
- After a first-chance exception that stops, cdb prints its notice or the registers; any other line
  next means cdb only reported it and the target went on (aiblog-cdb-attach-exit) -- a location
  naming an exit or a load too: the next stop is that event's.
- An event filter or a breakpoint whose command string resumes the target (``sxe -c "kP 20; g" eh``,
  ``bp X "dt ...; g"``) prints that command's output after the event line and no prompt
  (skullbonez-cdb-launch): the output is the stop's, not the target's DbgPrint.
"""

from __future__ import annotations

import re

from kdmcp.engine.step_stop import stop_line

__all__ = ["AutoCommands", "exception_stopped", "location_kind"]

_LOCATION_KINDS: tuple[tuple[bytes, str], ...] = (
    (b"ntdll!NtTerminateProcess+", "process_exit"), (b"ntdll!ZwTerminateProcess+", "process_exit"),
    (b"ntdll!NtTerminateThread+", "thread_exit"), (b"ntdll!ZwTerminateThread+", "thread_exit"),
    (b"!DebugService2+", "module_load"), (b"!DbgLoadImageSymbols+", "module_load"),
)

_EXCEPTION_STOP_LINES = (b"First chance exceptions are reported", b"This exception may be expected",
                         b"*** WARNING", b"*** ERROR", b"*** Unable")


def exception_stopped(text: bytes, *, event_next: bool) -> bool | None:
    """Whether the exception line just before ``text`` stopped the target, from the first whole line
    of ``text``: cdb's first-chance notice or a stop's register/location lines say it stopped; any
    other line (target output) says cdb only reported it. None while that line is not whole yet;
    ``event_next``: an event line follows ``text`` (so it went on, if ``text`` has no line)."""
    for raw in text.split(b"\n")[:-1]:
        line = raw.strip(b" \t\r\x03")
        if line:
            # A location that names another event's stop (an exit, a load) is that stop's: cdb's own
            # first-chance stops print their notice first (corpus exceptions_errors/05, 16, 18;
            # aiblog-cdb-attach-exit, msmania-cdb-seh-second-chance), an exit stop only its place.
            return line.startswith(_EXCEPTION_STOP_LINES) or (stop_line(line) and location_kind(line) is None)
    return False if event_next else None


def location_kind(location: bytes) -> str | None:
    """The event a stop at ``location`` (its ``module!symbol+0x..:`` line first) is, if its place says."""
    first = location.split(b"\n", 1)[0]
    if first.startswith(b"ntdll!"):
        return next((kind for prefix, kind in _LOCATION_KINDS[:4] if first.startswith(prefix)), None)
    return next((kind for needle, kind in _LOCATION_KINDS[4:] if needle in first), None)


# sx codes (docs: "Controlling Exceptions and Events") for the events the machine reports
_SX_EXCEPTIONS = {"av": 0xC0000005, "eh": 0xE06D7363, "ch": 0xC0000008, "dz": 0xC0000094, "c000008e": 0xC000008E,
                  "sov": 0xC00000FD, "ii": 0xC000001D, "gp": 0x80000001, "ip": 0xC0000006, "isc": 0xC000001E,
                  "sse": 0x80000004, "ssec": 0x80000004, "vcpp": 0x406D1388, "wkd": 0xC0000374, "wob": 0xC0000420,
                  "dm": 0x80000002, "bpe": 0x80000003, "cce": 0x40010005, "cc": 0x40010005}
_SX_EVENTS = {"ld": "module_load", "ud": "module_unload", "et": "thread_exit", "epr": "process_exit"}
# sxe/sxd/sxn/sxi [-c "cmd"] [-c2 "cmd"] [-h] event
_SX_RE = re.compile(r'(?:^|;)\s*sx[edni]\s+(?P<args>(?:-c2?\s+"(?:[^"\\]|\\.)*"\s+|-h\s+)*)(?P<event>[\w*]+)')
_SX_C_RE = re.compile(r'-c\s+"(?P<cmd>(?:[^"\\]|\\.)*)"')
# bp/bu/bm/ba ... "cmds": a breakpoint with a command string
_BP_RE = re.compile(r'(?:^|;)\s*b[pum](?P<id>\d*)\b[^"]*"(?P<cmd>(?:[^"\\]|\\.)*)"')
_RESUMES_RE = re.compile(r"(?:^|;)\s*(?:g|gc|gn|gh)\s*(?:;|$)")


class AutoCommands:
    """Event filters and breakpoints whose command strings resume the target, learned from the
    commands kd-mcp sent: after such an event, what kd prints until the next event or prompt is that
    command's output."""

    def __init__(self) -> None:
        self.exceptions: set[int] = set()  # exception codes
        self.events: set[str] = set()  # module_load, module_unload, thread_exit, process_exit
        self.breakpoints: set[int | None] = set()  # ids (None: one set without an explicit id)

    def learn(self, command: str) -> None:
        """Note what ``command`` (a line kd-mcp sent) sets."""
        if "sx" not in command and '"' not in command:  # no event filter, no command string: nothing set
            return
        for m in _SX_RE.finditer(command):
            c = _SX_C_RE.search(m.group("args"))
            resumes = c is not None and _RESUMES_RE.search(c.group("cmd")) is not None
            event = m.group("event").lower()
            code = _SX_EXCEPTIONS.get(event)
            if code is None and re.fullmatch(r"(?:0x)?[0-9a-f]{8}", event):
                code = int(event, 16)
            if code is not None:
                (self.exceptions.add if resumes else self.exceptions.discard)(code)
            elif event in _SX_EVENTS:
                (self.events.add if resumes else self.events.discard)(_SX_EVENTS[event])
        for m in _BP_RE.finditer(command):
            if _RESUMES_RE.search(m.group("cmd")):
                self.breakpoints.add(int(m.group("id")) if m.group("id") else None)

    def resumes_after(self, kind: str, code: str | None, number: int | None) -> bool:
        """Whether a command string runs (and resumes the target) after this event line."""
        if kind == "exception" and code is not None:
            return int(code, 16) in self.exceptions
        if kind == "breakpoint":
            return number in self.breakpoints or (None in self.breakpoints and bool(self.breakpoints))
        return kind in self.events
