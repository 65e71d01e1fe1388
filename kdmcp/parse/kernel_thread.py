"""Kernel THREAD blocks, line by line: ``!thread``, ``!ready``, and every THREAD block of ``!process``::

    THREAD ffff91895309d080  Cid 1e90.1e94  Teb: 000000bb6f2ad000 Win32Thread: ffff... WAIT: (UserRequest) ...
        ffff918953118260  SynchronizationEvent
    Owning Process            ffff9189527e9080       Image:         notepad.exe
    ...
    Child-SP          RetAddr               Call Site
    ffffd48f`777beb10 fffff800`6280c970     nt!KiSwapContext+0x76

``add_kernel_thread_line`` is the definition of a THREAD block's reading; the bulk reader of
``!process`` bodies (``kdmcp.parse.thread_body``) is held equal to it line for line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kdmcp.parse._construct import adopt, trusted
from kdmcp.parse._text import READ_FAILURE_WORDS, addr, hex_token_addr, split_detail
from kdmcp.parse.frames import (
    FAST_FRAME_RE,
    FRAME_RE,
    fast_frame_model,
    frame_fields,
)
from kdmcp.parse.models import Frame, ThreadInfo, WaitObject

# "THREAD <ethread>  Cid <pid>.<tid>  Teb: <teb> Win32Thread: <w32> <STATE>[: (<reason>) <mode> <alertable>]"
# (optional parts spelled "(?:...|)": the same match as "(?:...)?", without the engine's
# general repeat machinery - one of these heads every thread of a !process listing)
KERNEL_THREAD_RE = re.compile(
    r"^\s*THREAD\s+(?P<addr>[0-9a-fA-F`]+)\s+Cid\s+(?P<pid>[0-9a-fA-F]+)\.(?P<tid>[0-9a-fA-F]+)"
    r"(?:\s+Teb:\s+(?P<teb>[0-9a-fA-F`]+)|)(?:\s+Win32Thread:\s+(?P<w32>[0-9a-fA-F`]+)|)"
    r"(?:\s+(?P<state>[A-Z][A-Z]+)|):?\s*(?P<rest>.*)$"
)

# "(UserRequest) UserMode Non-Alertable"
_WAIT_RE = re.compile(r"^\((?P<reason>\w+)\)\s+(?P<mode>\w+)\s+(?P<alert>Non-Alertable|Alertable)")

# "RUNNING on processor 5"
_ON_PROCESSOR_RE = re.compile(r"on processor (?P<cpu>\d+)")

# A wait object under the THREAD header: "    ffff918953118260  SynchronizationEvent"
_WAIT_OBJECT_RE = re.compile(r"^\s+(?P<addr>[0-9a-fA-F`]{8,17})\s+(?P<type>(?![0-9a-fA-F`]+\b)[A-Za-z]\w*)\b")


# "Win32 Start Address notepad!wWinMainCRTStartup (0x00007ff7e2e85a30)" or "... 0x00007ff7e2e85a30"
_START_ADDRESS_RE = re.compile(
    r"^\s*(?:Win32 )?Start Address\s+"
    r"(?:(?P<sym>\S+)\s+\((?P<a1>0x[0-9a-fA-F`]+)\)|(?P<a2>0x[0-9a-fA-F`]+)|(?P<sym2>\S+))"
)

# "Priority 10 BasePriority 8 PriorityDecrement 0 IoPriority 2 PagePriority 5"
_KPRIORITY_RE = re.compile(r"^\s*Priority\s+(?P<prio>-?\d+)\s+BasePriority\s+(?P<base>-?\d+)")

# "Owning Process            ffff9189527e9080       Image:         notepad.exe", and on NT4/2000
# without the image: "Owning Process ffaf5690"
_OWNING_RE = re.compile(r"^\s*Owning Process\s+(?P<proc>\S+)(?:\s+Image:\s+(?P<image>.*)|)$")

# NT4/2000 print the stack pointers on one line: "Initial Sp fec6c000 Current Sp fec6b938"
_INITIAL_SP_RE = re.compile(r"^Initial Sp\s+(?P<initial>\S+)\s+Current Sp\s+(?P<current>\S+)$")

# The first word of an "IRP List:" entry, an IRP address and a colon:
# "    fef29208: (0006,00b8) Flags: 00000884  Mdl: feed8328"
IRP_ENTRY_WORD_RE = re.compile(r"[0-9a-fA-F`]{8,17}:")

# Lines an extension prints inside a THREAD block when it cannot read what it would show:
# "GetUlongFromAddress: unable to read from 00000000" (the XP "!locks -v" of the !locks docs,
# kernel_state/01.txt) and, in a Windows 7 x86 "!thread" of a 0x9F dump published in a write-up,
# "GetPointerFromAddress: unable to read from 833a5850" (above the THREAD line),
# "ffdf0000: Unable to get shared data" and "ReadMemory error: Cannot get
# nt!KeMaximumIncrement value.". Complaints: the record's warnings, never details or IRPs.
_COMPLAINT_LINE_RE = re.compile(
    rf"^[ \t]*((?:[\w`]+: )?{READ_FAILURE_WORDS}[^\n]*|ReadMemory error\b[^\n]*)$",
    re.MULTILINE,
)
# The key under which a THREAD block's reader keeps the complaint lines it met, in order; the
# record's parser pops it (``pop_complaints``) before the block becomes a ``ThreadInfo``, so a
# "!process 0 7" finds its complaints without a scan of the whole output.
COMPLAINTS = "_complaints"


# Text one of those lines holds: output without any is not scanned.
_COMPLAINT_MARKS = ("nable to", "ould not", "annot ", "ailed to", "ReadMemory error")


def thread_complaints(raw: str) -> list[str]:
    """The complaint lines of ``raw`` (see ``_COMPLAINT_LINE_RE``), stripped, in order: for a
    "!thread" (a few blocks), whose complaints may also stand above the THREAD line."""
    if not any(mark in raw for mark in _COMPLAINT_MARKS):
        return []
    return [m.group(1).rstrip() for m in _COMPLAINT_LINE_RE.finditer(raw)]


def pop_complaints(threads: list[dict[str, Any]]) -> list[str]:
    """The complaint lines the readers kept in ``threads`` (removed from them), in order."""
    found: list[str] = []
    for t in threads:
        if COMPLAINTS in t:
            found.extend(t.pop(COMPLAINTS))
    return found


def _keep_complaint(t: dict[str, Any], stripped: str) -> None:
    listed = t.get(COMPLAINTS)
    if listed is None:
        t[COMPLAINTS] = [stripped]
    else:
        listed.append(stripped)


# !ready heads each group of READY threads with the queue and the priority they wait at:
# "Processor 0: Ready Threads at priority 8", "SharedReadyQueue 8147e800: Ready Threads at
# priority 7" (Windows 10); a processor with none says "Processor 2: No threads in READY state".
_READY_GROUP_RE = re.compile(
    r"^\s*(?:Processor (?P<cpu>\d+)|SharedReadyQueue (?P<queue>[0-9a-fA-F`]+)):\s+"
    r"(?:Ready Threads at priority (?P<prio>\d+)|No threads in READY state)"
)

# "THREAD ffffc2895a49f040" alone: !thread on a register or an expression may print only the
# address before the stack.
_BARE_THREAD_RE = re.compile(r"^\s*THREAD\s+(?P<addr>[0-9a-fA-F`]{8,17})$")


def kernel_thread_header(m: re.Match[str]) -> dict[str, Any]:
    """A ``ThreadInfo`` dict from a ``KERNEL_THREAD_RE`` match."""
    address, pid, tid, teb, w32, state, rest = m.group("addr", "pid", "tid", "teb", "w32", "state", "rest")
    pid, tid = pid.lower(), tid.lower()
    cid = f"{pid}.{tid}"
    t: dict[str, Any] = {
        "address": hex_token_addr(address),
        "cid": cid,
        "id": cid,
        "process_id": "0x" + pid,
        "thread_id": "0x" + tid,
        "wait_objects": [],
        "details": {},
        "frames": [],
    }
    if teb:
        t["teb"] = hex_token_addr(teb)
    if w32:
        t["win32_thread"] = hex_token_addr(w32)
    if state:
        t["state"] = state
    rest = rest.strip()
    if rest:
        w = _WAIT_RE.match(rest)
        if w is not None:
            t["wait_reason"], t["wait_mode"], alert = w.group("reason", "mode", "alert")
            t["alertable"] = alert == "Alertable"
        if "on processor" in rest:
            p = _ON_PROCESSOR_RE.search(rest)
            if p is not None:
                t["processor"] = int(p.group("cpu"))
    return t


# First word of a line that can be a frame (or a wait object): an address, a frame
# number, "(Inline", or the "..." of a redacted paste.
_FRAME_START_RE = re.compile(r"[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?$|[0-9a-fA-F]{2,4}$|\(Inline|\.\.\.$")


_new_wait_object = adopt(WaitObject)  # both fields required: the dict is the whole __dict__
_new_kernel_thread = trusted(ThreadInfo)


def _wait_object(m: re.Match[str]) -> WaitObject:
    """A ``WaitObject`` from a ``_WAIT_OBJECT_RE`` match."""
    return wait_object_of(*m.group("addr", "type"))


def wait_object_of(address: str, kind: str) -> WaitObject:
    """A ``WaitObject`` from its address token and type word (plain strings: no validation
    needed)."""
    return _new_wait_object({"address": hex_token_addr(address), "type": kind}, {"address", "type"})


def kernel_thread_model(t: dict[str, Any]) -> ThreadInfo:
    """The ``ThreadInfo`` of a THREAD block read by ``kernel_thread_header`` and the line
    readers: every value is already in validated form (strings, ints, bools, models), so
    it is built without re-validation - ``!process 0 7`` lists thousands of threads."""
    return _new_kernel_thread(t)


def add_kernel_thread_line(t: dict[str, Any], line: str, in_header: bool) -> bool:
    """Fold one line of a THREAD block into ``t``. Returns whether wait objects may follow.

    The definition of a THREAD block's reading: the bulk reader of ``!process`` bodies
    (``_read_common_body``) is held equal to it line for line.
    """
    stripped = line.strip()
    if not stripped:
        return in_header
    first = stripped.split(" ", 1)[0]
    handler = THREAD_LINE_HANDLERS.get(first)
    if handler is not None:
        handler(t, stripped)
        return False
    if in_header:
        w = _WAIT_OBJECT_RE.match(line)
        if w is not None:
            t["wait_objects"].append(_wait_object(w))
            return True
    if _FRAME_START_RE.match(first):
        fast = FAST_FRAME_RE.fullmatch(stripped)
        if fast is not None:  # the common layouts: always a frame with both addresses
            t["frames"].append(fast_frame_model(fast))
            return False
        m = FRAME_RE.match(stripped)
        f = frame_fields(m) if m is not None else None
        if f is not None and (f.get("child_sp") or f.get("child_ebp") or f.get("return_address") or f.get("inline")):
            t["frames"].append(Frame.model_validate(f))  # kept as models, like the fast reader's
            return False
    if first[-1] == ":" and IRP_ENTRY_WORD_RE.fullmatch(first):
        irp_entry(t, stripped)
        return False
    if stripped.startswith("..."):
        return False
    d = split_detail(stripped)
    if d is not None:
        t["details"][d[0]] = d[1]
    return False


def fold_kernel_thread_lines(t: dict[str, Any], lines: list[str]) -> None:
    """The line-by-line reading of a THREAD block's body (see ``fold_kernel_thread_body``)."""
    in_header = True
    for line in lines:
        blank = not line or line.isspace()
        in_header = False if blank else add_kernel_thread_line(t, line.rstrip(), in_header)


# A detail line the bulk reader takes as it is: blanks, then a first word that starts with a


def _owning(t: dict[str, Any], stripped: str) -> None:
    o = _OWNING_RE.match(stripped)
    if o is not None:
        t["owning_process"] = addr(o.group("proc")) if o.group("proc") != "N/A" else None
        if o.group("image") is not None:
            t["image"] = o.group("image")
    else:
        _detail(t, stripped)


def _start_address(t: dict[str, Any], stripped: str) -> None:
    """``Start Address``: where the thread began (NT4 to XP print it; XP also prints the
    ``Win32 Start Address``). Always kept as printed in ``details["Start Address"]``; it fills
    ``start_symbol``/``start_address`` unless a Win32 start address already did: those fields
    hold the Win32 one whenever it is printed, the routine later ``!thread`` versions print
    alone and user-mode ``~`` calls ``Start:``, whichever of the two lines comes first."""
    s = _START_ADDRESS_RE.match(stripped)
    if s is None:
        _detail(t, stripped)
        return
    t["details"]["Start Address"] = stripped[len("Start Address") :].strip()
    if "start_address" not in t and "start_symbol" not in t:
        _fill_start(t, s)


def _win32_start_address(t: dict[str, Any], stripped: str) -> None:
    """``Win32 Start Address``: the thread's own start routine (see ``_start_address``)."""
    s = _START_ADDRESS_RE.match(stripped)
    if s is None:
        _detail(t, stripped)
        return
    if "start_address" in t or "start_symbol" in t:  # filled by a Start Address line above
        t.pop("start_address", None)
        t.pop("start_symbol", None)
    _fill_start(t, s)


def _fill_start(t: dict[str, Any], s: re.Match[str]) -> None:
    a = s.group("a1") or s.group("a2")
    if a:
        t["start_address"] = addr(a)
    sym = s.group("sym") or s.group("sym2")
    if sym:
        t["start_symbol"] = sym


def _kernel(t: dict[str, Any], stripped: str) -> None:
    """``Kernel stack not resident.`` (the stack is paged out: a dump holds no frames for the
    thread) is one fact, not the key "Kernel"."""
    if stripped == "Kernel stack not resident.":
        t["details"]["Kernel stack not resident"] = stripped
    else:
        _detail(t, stripped)


def _initial(t: dict[str, Any], stripped: str) -> None:
    """NT4/2000 ``Initial Sp fec6c000 Current Sp fec6b938``: two two-word keys."""
    i = _INITIAL_SP_RE.match(stripped)
    if i is None:
        _detail(t, stripped)
        return
    t["details"]["Initial Sp"] = i.group("initial")
    t["details"]["Current Sp"] = i.group("current")


def _irp_list(t: dict[str, Any], stripped: str) -> None:
    """``IRP List:`` heads the thread's pending IRPs, one per following line (``irp_entry``)."""
    if stripped != "IRP List:":
        _detail(t, stripped)


def irp_entry(t: dict[str, Any], stripped: str) -> None:
    """One IRP of the ``IRP List:`` (``fef29208: (0006,00b8) Flags: 00000884  Mdl: feed8328``),
    kept as printed in ``details["IRP List"]``, one line per IRP. An address and a colon not
    followed by ``(`` is no IRP: a complaint (``ffdf0000: Unable to get shared data``, the
    record's warning) or a detail."""
    if stripped[stripped.find(":") + 1 :].lstrip()[:1] != "(":
        _complaint(t, stripped)
        return
    details = t["details"]
    listed = details.get("IRP List")
    details["IRP List"] = stripped if listed is None else listed + "\n" + stripped


def _priority(t: dict[str, Any], stripped: str) -> None:
    p = _KPRIORITY_RE.match(stripped)
    if p is not None:
        t["priority"] = int(p.group("prio"))
        t["base_priority"] = int(p.group("base"))
    t["details"]["Priority"] = stripped[len("Priority") :].strip()


def _user_time(t: dict[str, Any], stripped: str) -> None:
    t["user_time"] = stripped[len("UserTime") :].strip()


def _kernel_time(t: dict[str, Any], stripped: str) -> None:
    t["kernel_time"] = stripped[len("KernelTime") :].strip()


def _not(t: dict[str, Any], stripped: str) -> None:
    if stripped == "Not impersonating":
        t["details"]["Impersonation"] = stripped
    else:
        _detail(t, stripped)


def _detail(t: dict[str, Any], stripped: str) -> None:
    d = split_detail(stripped)
    if d is not None:
        t["details"][d[0]] = d[1]


def stack_header(t: dict[str, Any], stripped: str) -> None:
    """Stack column headers ("Child-SP RetAddr Call Site"): nothing to keep."""


def _complaint(t: dict[str, Any], stripped: str) -> None:
    """A complaint line (``_COMPLAINT_LINE_RE``): the record's warning, not a detail."""
    if _COMPLAINT_LINE_RE.match(stripped) is None:
        _detail(t, stripped)
    else:
        _keep_complaint(t, stripped)


# First word of a THREAD-block line -> what to do with it.
THREAD_LINE_HANDLERS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "Owning": _owning,
    "Win32": _win32_start_address,
    "Start": _start_address,
    "Kernel": _kernel,
    "Initial": _initial,
    "IRP": _irp_list,
    "Priority": _priority,
    "UserTime": _user_time,
    "KernelTime": _kernel_time,
    "Not": _not,
    "Child-SP": stack_header,
    "ChildEBP": stack_header,
    "#": stack_header,
    "Memory": stack_header,
    # complaints (see _COMPLAINT_LINE_RE): a first word no detail line of a THREAD block has
    "GetUlongFromAddress:": _complaint,
    "GetPointerFromAddress:": _complaint,
    "ReadMemory": _complaint,
    "Unable": _complaint,
    "Could": _complaint,
    "Cannot": _complaint,
    "Failed": _complaint,
}


def kernel_threads_from_lines(lines: list[str]) -> list[dict[str, Any]]:
    """Every THREAD block in ``lines`` (``!thread``, ``!ready``, ``!process`` without process
    headers). A ``!ready`` group header applies to the THREAD lines that follow it."""
    threads: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    group: re.Match[str] | None = None
    in_header = False
    for line in lines:
        if not line or line.isspace():
            in_header = False
            continue
        if "THREAD" in line:
            m = KERNEL_THREAD_RE.match(line)
            if m is not None:
                current = kernel_thread_header(m)
                if group is not None:
                    _join_ready_group(current, group)
                threads.append(current)
                in_header = True
                continue
            b = _BARE_THREAD_RE.match(line)
            if b is not None:
                current = {"address": hex_token_addr(b.group("addr")), "wait_objects": [], "details": {}, "frames": []}
                threads.append(current)
                in_header = True
                continue
        if "Ready Threads" in line or "No threads in READY" in line:
            g = _READY_GROUP_RE.match(line)
            if g is not None:
                # a group ends the thread before it; "No threads in READY state" heads no group
                group = g if g.group("prio") is not None else None
                current = None
                continue
        if current is not None:
            in_header = add_kernel_thread_line(current, line, in_header)
    return threads


def _join_ready_group(t: dict[str, Any], group: re.Match[str]) -> None:
    """Give a ``!ready`` thread its group's priority and ready queue (a processor's, unless
    the THREAD line names the processor itself, or the shared queue's address)."""
    t["priority"] = int(group.group("prio"))
    cpu, queue = group.group("cpu", "queue")
    if cpu is not None:
        t.setdefault("processor", int(cpu))
    else:
        t["details"]["SharedReadyQueue"] = queue
