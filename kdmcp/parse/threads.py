"""Threads: user-mode ``~`` lists, kernel ``!thread`` blocks, ``!running``, ``!runaway``, ``!stacks``.

User mode (``~``, ``~*``, ``~.``, ``~N``)::

    .  0  Id: 7a0.5ac Suspend: 1 Teb: 7ffdf000 Unfrozen "name"
          Start: notepad!WinMainCRTStartup (00e131c9)
          Priority: 0  Priority class: 32  Affinity: 1
       0  id: 16.15   Teb 7ffdd000 Unfrozen                  (NT4-era spelling)

Kernel THREAD blocks (``!thread``, and every THREAD block of ``!process``) are read by
``kdmcp.parse.kernel_thread`` (line by line) and ``kdmcp.parse.thread_body`` (in bulk).
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, hexnum, split_lines
from kdmcp.parse.frames import (
    FRAME_RE,
    frame_fields,
)
from kdmcp.parse.kernel_thread import kernel_threads_from_lines, pop_complaints, thread_complaints
from kdmcp.parse.models import ThreadsRecord
from kdmcp.parse.partial import partial_row

# "[.#] N  Id: pid.tid Suspend: n Teb: addr Unfrozen [name] [// comment]"
USER_THREAD_RE = re.compile(
    r"^\s*(?:(?P<mark>[.#])\s*)?(?P<index>\d+)\s+[Ii]d:\s*(?P<pid>[0-9a-fA-F]+)\.(?P<tid>[0-9a-fA-F]+)"
    r"\s+(?:Suspend:\s*(?P<suspend>-?\d+)\s+)?Teb:?\s+(?P<teb>[0-9a-fA-F`]+)"
    r"(?:\s+(?P<frozen>Unfrozen|Frozen))?(?P<rest>.*)$"
)

# A thread line by its start (marker, number, "Id:"), whatever follows: one USER_THREAD_RE does
# not read is kept as a partial thread (kdmcp/parse/partial.py).
_PARTIAL_USER_THREAD_RE = re.compile(
    r"^\s*(?:(?P<mark>[.#])\s*)?(?P<index>\d+)\s+[Ii]d:\s*(?:(?P<pid>[0-9a-fA-F]+)\.(?P<tid>[0-9a-fA-F]+)(?=\s|$))?"
)


def _partial_user_thread(r: re.Match[str], line: str) -> dict[str, Any]:
    read: dict[str, Any] = {"index": int(r.group("index"))}
    if r.group("mark"):
        read["current" if r.group("mark") == "." else "event_thread"] = True
    if r.group("pid"):
        read.update(
            id=f"{r.group('pid').lower()}.{r.group('tid').lower()}",
            process_id="0x" + r.group("pid").lower(),
            thread_id="0x" + r.group("tid").lower(),
        )
    return partial_row(line, **read)


# "      Start: ntdll!DbgUiRemoteBreakin (76fcec3b)"
_START_RE = re.compile(r"^\s+Start:\s*(?P<rest>.*)$")
# its trailing "(00e131c9)"
_START_ADDR_TAIL_RE = re.compile(r"\((?P<addr>[0-9a-fA-F`]+)\)$")
# A start with no symbol: ~* prints the bare address when no module holds it (shellcode
# injected into notepad: "      Start: 000000b1`20870000").
_BARE_START_RE = re.compile(r"(?:0x)?[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?")

# "      Priority: 0  Priority class: 32  Affinity: 1"
_PRIORITY_RE = re.compile(
    r"^\s+Priority:\s*(?P<prio>-?\d+)\s+Priority class:\s*(?P<cls>-?\d+)(?:\s+Affinity:\s*(?P<aff>\S+))?"
)


def user_thread_fields(m: re.Match[str]) -> dict[str, Any]:
    """A ``ThreadInfo`` dict from a ``USER_THREAD_RE`` match."""
    pid, tid = m.group("pid").lower(), m.group("tid").lower()
    t: dict[str, Any] = {
        "index": int(m.group("index")),
        "id": f"{pid}.{tid}",
        "process_id": "0x" + pid,
        "thread_id": "0x" + tid,
        "teb": addr(m.group("teb")),
        "current": m.group("mark") == ".",
        "event_thread": m.group("mark") == "#",
    }
    if m.group("suspend") is not None:
        t["suspend_count"] = int(m.group("suspend"))
    if m.group("frozen"):
        t["frozen"] = m.group("frozen") == "Frozen"
        t["state"] = m.group("frozen")
    rest = m.group("rest").strip()
    if rest:
        comment = ""
        if "//" in rest:
            rest, _, comment = rest.partition("//")
            rest = rest.strip()
        if rest.startswith('"') and rest.endswith('"') and len(rest) >= 2:
            t["name"] = rest[1:-1]
        elif rest:
            t["details"] = {"extra": rest}
        if comment:
            t.setdefault("details", {})["comment"] = comment.strip()
    return t


def parse_user_threads(lines: list[str]) -> list[dict[str, Any]]:
    """Threads of ``~``-style output, with their Start/Priority lines.

    A symbol load may interrupt a ``Start:`` line: the debugger prints its ``*** WARNING`` /
    ``*** ERROR`` lines where the symbol would be, then the symbol and address on a line of
    their own (a ``~*`` of a service without symbols, published in a Portuguese write-up:
    ``Start: *** WARNING: Unable to verify checksum for Service.exe`` ... ``Service+0xc60c
    (0040c60c)``). The start is read from the first line after the messages; the messages
    themselves are the dispatcher's warnings.
    """
    threads: list[dict[str, Any]] = []
    pending = False  # a Start: line held only a symbol-load message
    for line in lines:
        m = USER_THREAD_RE.match(line)
        if m is not None:
            threads.append(user_thread_fields(m))
            pending = False
            continue
        r = _PARTIAL_USER_THREAD_RE.match(line)
        if r is not None:
            threads.append(_partial_user_thread(r, line))
            pending = False
            continue
        if not threads:
            continue
        s = _START_RE.match(line)
        if s is not None:
            rest = s.group("rest").rstrip()
            pending = rest.startswith("***")
            if not pending:
                _fill_user_start(threads[-1], rest)
            continue
        if pending:
            rest = line.strip()
            if rest.startswith("***") or not rest:
                continue
            pending = False
            if not _PRIORITY_RE.match(line):
                _fill_user_start(threads[-1], rest)
                continue
        p = _PRIORITY_RE.match(line)
        if p is not None:
            threads[-1]["priority"] = int(p.group("prio"))
            threads[-1]["priority_class"] = int(p.group("cls"))
            if p.group("aff"):
                threads[-1]["affinity"] = p.group("aff")
    return threads


def _fill_user_start(t: dict[str, Any], rest: str) -> None:
    """A ``Start:`` value: ``symbol (address)``, a bare address (no symbol), or a symbol."""
    tail = _START_ADDR_TAIL_RE.search(rest)
    if tail is not None:
        t["start_address"] = addr(tail.group("addr"))
        rest = rest[: tail.start()].rstrip()
    elif _BARE_START_RE.fullmatch(rest):
        t["start_address"] = addr(rest)
        return
    t["start_symbol"] = rest or None


# --------------------------------------------------------------------------- !running

# "  0  ffdff120  805495a0            ................" / "  1  f87e0120  f87e2e60  f87e1234  ..."
_RUNNING_ROW_RE = re.compile(
    r"^\s*(?P<cpu>\d+)\s+(?P<prcb>[0-9a-fA-F`]{8,17})\s+(?P<cur>[0-9a-fA-F`]{8,17})"
    r"(?:\s+(?P<next>[0-9a-fA-F`]{8,17}))?(?:\s+(?P<flags>[.\w]+))?\s*$"
)
_RUNNING_FIELD_RE = re.compile(r"^\s*(?P<key>System Processors|Idle Processors)\s+(?P<value>.*)$")


def parse_running(command: str, raw: str) -> ThreadsRecord | None:
    """``!running``: one ``ThreadInfo`` per listed processor (its current thread)."""
    threads: list[dict[str, Any]] = []
    fields: dict[str, str] = {}
    for line in split_lines(raw):
        if not line.strip():
            continue
        r = _RUNNING_ROW_RE.match(line)
        if r is not None:
            t: dict[str, Any] = {
                "processor": int(r.group("cpu")),
                "prcb": addr(r.group("prcb")),
                "address": addr(r.group("cur")),
                "state": "RUNNING",
                "frames": [],
            }
            if r.group("next"):
                t["next_thread"] = addr(r.group("next"))
            if r.group("flags"):
                t["details"] = {"flags": r.group("flags")}
            threads.append(t)
            continue
        f = _RUNNING_FIELD_RE.match(line)
        if f is not None:
            fields[f.group("key")] = f.group("value")
            continue
        if line.strip() == "All processors idle.":
            fields["all_idle"] = "true"
            continue
        if threads:
            m = FRAME_RE.match(line)
            if m is not None:
                fr = frame_fields(m)
                if fr is not None:
                    threads[-1]["frames"].append(fr)
    if not threads and not fields:
        return None
    return ThreadsRecord.model_validate({"command": command, "raw": raw, "threads": threads, "fields": fields})


# --------------------------------------------------------------------------- !runaway

# "    8:21dc     0 days 0:00:07.000"
_RUNAWAY_ROW_RE = re.compile(r"^\s*(?P<index>\d+):(?P<tid>[0-9a-fA-F]+)\s+(?P<time>\d+ days? [\d:.]+)\s*$")
_RUNAWAY_SECTIONS = {
    "User Mode Time": "user_time",
    "Kernel Mode Time": "kernel_time",
    "Elapsed Time": "elapsed_time",
}


def parse_runaway(command: str, raw: str) -> ThreadsRecord | None:
    """``!runaway [flags]``: per-thread user/kernel/elapsed times, merged by thread index."""
    by_index: dict[int, dict[str, Any]] = {}
    section = "user_time"
    for line in split_lines(raw):
        stripped = line.strip()
        if stripped in _RUNAWAY_SECTIONS:
            section = _RUNAWAY_SECTIONS[stripped]
            continue
        m = _RUNAWAY_ROW_RE.match(line)
        if m is None:
            continue
        index = int(m.group("index"))
        t = by_index.setdefault(index, {"index": index, "thread_id": "0x" + m.group("tid").lower()})
        t[section] = m.group("time")
    if not by_index:
        return None
    return ThreadsRecord.model_validate({"command": command, "raw": raw, "threads": list(by_index.values())})


# --------------------------------------------------------------------------- !stacks

# "   4.000008  827d0030  Blocked    ntoskrnl!MmZeroPageThread+0x66" (XP), and with the Ticks
# column later versions print between the thread and its state ("Proc.Thread  .Thread  Ticks
# ThreadState Blocker": "   4.000008  fffffa8000cd5660 ffffff8e Blocked    nt!KiSwapContext+0x7a").
# The state is a word, never a hex number, so the Ticks column is never read as the state.
_STACKS_ROW_RE = re.compile(
    r"^\s*(?P<pid>[0-9a-fA-F]+)\.(?P<tid>[0-9a-fA-F]+)\s+(?P<addr>[0-9a-fA-F`]{8,17})"
    r"(?:\s+(?P<ticks>[0-9a-fA-F]+)(?=\s))?\s+(?P<state>(?![0-9a-fA-F]+\s)\w+)\s+(?P<blocker>.*)$"
)
# "                                     [smss.exe]", and with the EPROCESS in later versions:
# "                            [fffffa8000cd5b30 System]"
_STACKS_PROCESS_RE = re.compile(r"^\s+\[(?:(?P<proc>[0-9a-fA-F`]{8,17})\s+)?(?P<image>[^\]]+)\]\s*$")
# continuation frame of !stacks 2: deeply indented lone symbol
_STACKS_CONT_RE = re.compile(r"^\s{20,}(?P<site>\S+)\s*$")


def parse_stacks(command: str, raw: str) -> ThreadsRecord | None:
    """``!stacks``: one thread per row, the blocker (and ``!stacks 2`` frames) as frames."""
    threads: list[dict[str, Any]] = []
    image: str | None = None
    process: str | None = None
    for line in split_lines(raw):
        p = _STACKS_PROCESS_RE.match(line)
        if p is not None:
            image = p.group("image").strip()
            process = addr(p.group("proc")) if p.group("proc") else None
            continue
        m = _STACKS_ROW_RE.match(line)
        if m is not None:
            pid, tid = hexnum(m.group("pid"))[2:], hexnum(m.group("tid"))[2:]
            blocker = m.group("blocker")
            t: dict[str, Any] = {
                "id": f"{pid}.{tid}",
                "process_id": "0x" + pid,
                "thread_id": "0x" + tid,
                "address": addr(m.group("addr")),
                "state": m.group("state"),
                "image": image,
                "details": {"blocker": blocker},
                "frames": [],
            }
            if process is not None:
                t["owning_process"] = process
            if m.group("ticks") is not None:
                t["details"]["ticks"] = m.group("ticks")
            fr = _lone_frame(blocker)
            if fr is not None:
                t["frames"].append(fr)
            threads.append(t)
            continue
        c = _STACKS_CONT_RE.match(line)
        if c is not None and threads:
            fr = _lone_frame(c.group("site"))
            if fr is not None:
                threads[-1]["frames"].append(fr)
    if not threads:
        return None
    return ThreadsRecord.model_validate({"command": command, "raw": raw, "threads": threads})


def _lone_frame(site: str) -> dict[str, Any] | None:
    """A frame made of just a call site (``!stacks``, ``!heap -p -a`` without columns)."""
    m = FRAME_RE.match(site)
    if m is None or m.group("index") or m.group("cols"):
        return None
    return frame_fields(m)


# --------------------------------------------------------------------------- dispatch


def parse_threads(command: str, raw: str) -> ThreadsRecord | None:
    """``~`` forms and ``!thread``: user thread lines or kernel THREAD blocks."""
    lines = split_lines(raw)
    kernel = kernel_threads_from_lines(lines) if "THREAD" in raw else []
    user = parse_user_threads(lines) if not kernel else []
    threads = kernel or user
    if not threads:
        return None
    # the blocks' complaints and any above the first THREAD line, in the order printed: one
    # scan of the (small) output instead of what the readers kept
    pop_complaints(kernel)
    warnings = thread_complaints(raw) if kernel else []
    return ThreadsRecord.model_validate({"command": command, "raw": raw, "threads": threads, "warnings": warnings})
