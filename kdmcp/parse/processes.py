"""``!process`` (any address/flags/image filter) and user-mode ``|``.

Kernel block, with THREAD blocks when the flags ask for them::

    PROCESS ffff9189527e9080
        SessionId: 2  Cid: 1e90    Peb: bb6f2ac000  ParentCid: 15e8
        DirBase: 1d822d000  ObjectTable: ffffd80249eb8040  HandleCount: 817.
        Image: notepad.exe
        VadRoot ffff918953a30a20 Vads 285 Clone 0 Private 2175. Modified 340. Locked 2.
            THREAD ffff91895309d080  Cid 1e90.1e94  Teb: ... WAIT: (UserRequest) UserMode Non-Alertable

NT4/2000 spelling (``**** NT ACTIVE PROCESS DUMP ****``) puts Cid/Peb on the PROCESS line
and says ``TableSize`` for the handle count. User mode ``|``::

    #  0 id: 224   name: myprog.exe
     . 2 id: 22c   name: anotherchild.exe
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._construct import trusted
from kdmcp.parse._text import addr, split_detail, split_lines, to_int
from kdmcp.parse.kernel_thread import KERNEL_THREAD_RE, kernel_thread_header, kernel_thread_model, pop_complaints
from kdmcp.parse.models import ProcessesRecord, ProcessInfo
from kdmcp.parse.partial import partial_row
from kdmcp.parse.thread_body import fold_kernel_thread_body

# "PROCESS ffff9189527e9080" [+ old-format fields on the same line]
_PROCESS_RE = re.compile(r"^\s*PROCESS\s+(?P<addr>[0-9a-fA-F`]{8,17})\b(?P<rest>.*)$")

# "Key: value" pairs of the header lines; Image takes the rest of its line.
_PAIR_RE = re.compile(
    r"(?P<key>SessionId|Cid|Peb|ParentCid|DirBase|ObjectTable|HandleCount|TableSize):\s*(?P<value>\S+)"
)
_IMAGE_RE = re.compile(r"^\s*Image:\s*(?P<image>.*)$")

# Detail lines whose key is more than their first word although only one blank follows it
# (NT4/2000 layout): "Working Set Sizes (now,min,max) (3, 50, 345)", and the process's
# mutant with its state, "FB667BBC MutantState Signalled OwningThread 0".
_WORKING_SET_KEY = "Working Set Sizes (now,min,max)"
_MUTANT_RE = re.compile(r"^(?P<addr>[0-9a-fA-F]{8,16})\s+MutantState\s+(?P<state>\S+)\s+OwningThread\s+(?P<owner>\S+)$")


# user mode "|": "[.#] N id: pid [create|attach|child] name: image"
_USER_PROCESS_RE = re.compile(
    r"^\s*(?:(?P<mark>[.#])\s*)?(?P<index>\d+)\s+id:\s*(?P<pid>[0-9a-fA-F]+)\s+(?:(?P<how>\w+)\s+)?name:\s*(?P<name>.*)$"
)

# A "|" row by its start (marker, number, "id:"), whatever follows: one _USER_PROCESS_RE does not
# read is kept as a partial process (kdmcp/parse/partial.py).
_PARTIAL_USER_PROCESS_RE = re.compile(
    r"^\s*(?:(?P<mark>[.#])\s*)?(?P<index>\d+)\s+id:\s*(?:(?P<pid>[0-9a-fA-F]+)(?=\s|$))?"
)

_ADDRESS_KEYS = {"Peb": "peb", "DirBase": "dir_base", "ObjectTable": "object_table"}
_ID_KEYS = {"Cid": "cid", "ParentCid": "parent_cid"}


def _apply_pairs(proc: dict[str, Any], text: str) -> None:
    """Fold the ``Key: value`` pairs of one header line into ``proc``."""
    for m in _PAIR_RE.finditer(text):
        key, value = m.group("key"), m.group("value")
        if key in _ADDRESS_KEYS:
            proc[_ADDRESS_KEYS[key]] = addr(value)
        elif key in _ID_KEYS:
            proc[_ID_KEYS[key]] = "0x" + value.lower()
        elif key == "SessionId":
            proc["session_id"] = value
        elif key == "HandleCount":
            proc["handle_count"] = to_int(value)
        elif key == "TableSize":
            proc["table_size"] = to_int(value)
            proc["handle_count"] = to_int(value)


def parse_processes(command: str, raw: str) -> ProcessesRecord | None:
    """A ``ProcessesRecord``; ``None`` if no PROCESS block or ``|`` row is present.

    The output is cut at its block headers (PROCESS and THREAD lines, found in one scan)
    and each block's body is read as a whole: THREAD bodies, nearly all of a ``!process 0
    7``, by ``fold_kernel_thread_body``; process bodies line by line.
    """
    if "PROCESS" not in raw:
        return _parse_user_processes(command, raw, split_lines(raw))
    # "\n" before the first line lets one pattern find every header; every body ends with one
    text = "\n" + raw.replace("\r\n", "\n") + "\n"
    processes: list[dict[str, Any]] = []
    proc: dict[str, Any] | None = None
    thread: dict[str, Any] | None = None
    body_start = len(text)  # nothing is read before the first PROCESS block
    for start, word in _head_lines(text):
        end = text.find("\n", start)
        line = text[start:end].rstrip()
        p = _PROCESS_RE.match(line) if word == "PROCESS" else None
        t = KERNEL_THREAD_RE.match(line) if p is None and proc is not None else None
        if p is None and t is None:
            continue  # an ordinary line of the current body
        _fold_body(proc, thread, text[body_start:start])
        body_start = end + 1
        if p is not None:
            proc = {"address": addr(p.group("addr")), "details": {}, "threads": []}
            _apply_pairs(proc, p.group("rest"))
            processes.append(proc)
            thread = None
        elif proc is not None and t is not None:
            thread = kernel_thread_header(t)
            proc["threads"].append(thread)
    _fold_body(proc, thread, text[body_start:])
    if not processes:
        return None
    warnings: list[str] = []
    for proc in processes:
        warnings.extend(pop_complaints(proc["threads"]))
        proc["threads"] = [kernel_thread_model(t) for t in proc["threads"]]
    return ProcessesRecord.model_validate(
        {
            "command": command,
            "raw": raw,
            "processes": [_new_process(proc) for proc in processes],
            "warnings": warnings,
        }
    )


def _head_lines(text: str) -> list[tuple[int, str]]:
    """(start, word) of every line of ``text`` whose first word starts with PROCESS or
    THREAD, in order: the lines that may open a block. Found with ``str.find``, a scan
    several times faster than any pattern tried at each of the output's line starts."""
    heads: list[tuple[int, str]] = []
    find, rfind = text.find, text.rfind
    for word in _BLOCK_WORDS:
        at = find(word)
        while at >= 0:
            start = rfind("\n", 0, at) + 1
            if start == at or text[start:at].isspace():
                heads.append((start, word))
            at = find(word, at + len(word))
    heads.sort()
    return heads


_BLOCK_WORDS = ("PROCESS", "THREAD")

# Kernel process blocks hold plain strings and ints, and their threads are models already.
_new_process = trusted(ProcessInfo)


def _fold_body(proc: dict[str, Any] | None, thread: dict[str, Any] | None, body: str) -> None:
    """Fold the lines between two block headers into the block they follow."""
    if thread is not None:
        fold_kernel_thread_body(thread, body)
        return
    if proc is None:
        return
    details = proc["details"]
    # The old layout (NT4 to XP) prints Cid on the PROCESS line itself, so it is known before
    # the body is read; only that layout has the single-blank lines of _nt4_detail.
    old_layout = "cid" in proc
    for piece in body.split("\n"):
        line = piece.rstrip()
        if not line:
            continue
        if "Image:" in line:
            im = _IMAGE_RE.match(line)
            if im is not None:
                proc["image"] = im.group("image")
                continue
        if ": " in line and _PAIR_RE.search(line):
            _apply_pairs(proc, line)
            continue
        d = split_detail(line)
        if d is not None:
            if old_layout:
                _nt4_detail(details, line.strip(), *d)
            else:
                details[d[0]] = d[1]


def _nt4_detail(details: dict[str, str], stripped: str, key: str, value: str) -> None:
    """A detail line of the old layout, split into ``key`` and ``value`` at its first blank
    (or its first gap of two): the single-blank NT4/2000 lines (see ``_WORKING_SET_KEY``) by
    their real keys, any other as split."""
    if key == "Working" and stripped.startswith(_WORKING_SET_KEY):
        details[_WORKING_SET_KEY] = stripped[len(_WORKING_SET_KEY) :].strip()
        return
    m = _MUTANT_RE.match(stripped) if value.startswith("MutantState") else None
    if m is not None:
        details["Mutant"] = m.group("addr")
        details["MutantState"] = m.group("state")
        details["OwningThread"] = m.group("owner")
        return
    details[key] = value


def _parse_user_processes(command: str, raw: str, lines: list[str]) -> ProcessesRecord | None:
    """User-mode ``|`` rows."""
    processes: list[dict[str, Any]] = []
    for line in lines:
        m = _USER_PROCESS_RE.match(line)
        if m is None:
            r = _PARTIAL_USER_PROCESS_RE.match(line)
            if r is not None:
                read: dict[str, Any] = {"index": int(r.group("index")), "current": r.group("mark") == "."}
                read["event_process"] = r.group("mark") == "#"
                if r.group("pid"):
                    read["cid"] = "0x" + r.group("pid").lower()
                processes.append(partial_row(line, **read))
            continue
        proc: dict[str, Any] = {
            "index": int(m.group("index")),
            "cid": "0x" + m.group("pid").lower(),
            "image": m.group("name"),
            "current": m.group("mark") == ".",
            "event_process": m.group("mark") == "#",
        }
        if m.group("how"):
            proc["details"] = {"how": m.group("how")}
        processes.append(proc)
    if not processes:
        return None
    return ProcessesRecord.model_validate({"command": command, "raw": raw, "processes": processes})
