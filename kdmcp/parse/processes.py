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

from kdmcp.parse._text import addr, split_detail, split_lines, to_int
from kdmcp.parse.models import ProcessesRecord
from kdmcp.parse.threads import KERNEL_THREAD_RE, add_kernel_thread_line, kernel_thread_header

# "PROCESS ffff9189527e9080" [+ old-format fields on the same line]
_PROCESS_RE = re.compile(r"^\s*PROCESS\s+(?P<addr>[0-9a-fA-F`]{8,17})\b(?P<rest>.*)$")

# "Key: value" pairs of the header lines; Image takes the rest of its line.
_PAIR_RE = re.compile(
    r"(?P<key>SessionId|Cid|Peb|ParentCid|DirBase|ObjectTable|HandleCount|TableSize):\s*(?P<value>\S+)"
)
_IMAGE_RE = re.compile(r"^\s*Image:\s*(?P<image>.*)$")


# user mode "|": "[.#] N id: pid [create|attach|child] name: image"
_USER_PROCESS_RE = re.compile(
    r"^\s*(?:(?P<mark>[.#])\s*)?(?P<index>\d+)\s+id:\s*(?P<pid>[0-9a-fA-F]+)\s+(?:(?P<how>\w+)\s+)?name:\s*(?P<name>.*)$"
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
    """A ``ProcessesRecord``; ``None`` if no PROCESS block or ``|`` row is present."""
    lines = split_lines(raw)
    if "PROCESS" not in raw:
        return _parse_user_processes(command, raw, lines)
    processes: list[dict[str, Any]] = []
    proc: dict[str, Any] | None = None
    thread: dict[str, Any] | None = None
    in_header = False
    for line in lines:
        if not line or line.isspace():
            in_header = False
            continue
        if "PROCESS" in line:
            p = _PROCESS_RE.match(line)
            if p is not None:
                proc = {"address": addr(p.group("addr")), "details": {}, "threads": []}
                _apply_pairs(proc, p.group("rest"))
                processes.append(proc)
                thread = None
                continue
        if proc is None:
            continue
        if "THREAD" in line:
            t = KERNEL_THREAD_RE.match(line)
            if t is not None:
                thread = kernel_thread_header(t)
                proc["threads"].append(thread)
                in_header = True
                continue
        if thread is not None:
            in_header = add_kernel_thread_line(thread, line, in_header)
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
            proc["details"][d[0]] = d[1]
    if not processes:
        return None
    return ProcessesRecord.model_validate({"command": command, "raw": raw, "processes": processes})


def _parse_user_processes(command: str, raw: str, lines: list[str]) -> ProcessesRecord | None:
    """User-mode ``|`` rows."""
    processes: list[dict[str, Any]] = []
    for line in lines:
        m = _USER_PROCESS_RE.match(line)
        if m is None:
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
