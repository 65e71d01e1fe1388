"""cdb's user-mode ``!handle``: the text ntsdexts prints for a process's handles, live or from a dump.

``!handle [Handle [UMFlags [TypeName]]]`` (Microsoft docs, !handle): Handle 0, -1 or omitted is
every handle; UMFlags (default 1) sums 1 the type, 2 the basic information, 4 the name, 8 the
object-specific information; TypeName keeps one type. The text follows ntsdexts' handle.cpp
(the dump implementation, "!handle using the debug engine handle query interface"), whose
format strings the published samples bear out:

- ``Handle %p`` then ``  Type         \\t%s``: a dump's handle at pointer width (corpus
  families/handles/06, ``!handle 0 f event`` on a Windows 10 x64 process dump: ``Handle
  0000000000000008``); a live process's in plain hex (a published Windows 10 x64 WinDbg session,
  "Handles" by i4, 2023-10-24: ``0:000> !handle`` -> ``Handle a4`` / ``  Type         \\tFile``);
- flag 2: ``  Attributes   \\t%#x``, ``  GrantedAccess\\t%#x:``, the standard rights and the
  type's own rights each on a line indented nine blanks (``None`` for no bit),
  ``  HandleCount  \\t%d``, ``  PointerCount \\t%d`` (families/handles/06, 07, 08; i4's
  ``!handle a4 f``: ``ReadControl,Synch`` / ``Write/Add,Append/SubDir/CreatePipe,...``);
- flag 4: ``  Name         \\t%s`` (``<none>`` when unnamed), never for a File (handle.cpp skips
  it; i4's ``!handle a4 f`` on a File has no Name line);
- one handle asked without flag 1 has no type yet: its type's own rights line repeats the
  standard one and a File's name is printed (a published Windows x64 user dump, "WinDbg :
  !handle Command", jumpdollar.blogspot.com, 2014-09-17: ``!handle 10 2`` prints
  ``Delete,ReadControl,WriteDac,WriteOwner,Synch`` twice; its ``!handle 10 8`` is ``No object
  specific information available``, its ``!handle`` lists a handle whose ``Type`` is empty and
  ends ``377 Handles`` with ``None 26`` first in the type table);
- flag 8: ``  Object specific information`` and four-blank-indented lines where the dump holds
  them (families/handles/06-08), else ``  No object specific information available``
  (handle.cpp); a live process: ``  Object Specific Information`` (the docs' ``!handle 8 f``,
  families/handles/02) or ``  No Object Specific Information available`` (i4's ``!handle a4 f``);
- every handle: ``%d Handles``, ``Type           \\tCount`` and ``%-15s\\t%d`` a type, in the
  order of ntsdexts' type table, a type the table lacks counted as ``None`` (i4's summary:
  four IRTimer handles as ``None           \\t4``, ``TpWorkerFactory\\t2``);
- a type asked for: ``%d handles of type %s`` in the table's spelling (families/handles/06:
  ``!handle 0 f event`` ends ``7 handles of type Event``); flags 0 print only that count
  ("!handle 0 0 -- dumps a summary table", handle.cpp);
- ``Unknown type '%s'`` for a name not in the table, and ``Unable to read handle information``
  when a dump holds no handle data (handle.cpp: ``ReadHandleData`` fails without a
  MINIDUMP_HANDLE_DATA_STREAM).

Reconstructed (no published sample): a live process's handle value that names no handle prints
its ``Handle`` line and ``unable to query object information`` for flags 2 and 4, as the dump
code does; a type without a rights table repeats the standard-rights line (handle.cpp's
``DisplayFlags`` leaves its buffer as the previous call wrote it: what jumpdollar's untyped
``!handle 10 2`` shows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["UserHandle", "handle_text"]

_STANDARD = ("Delete", "ReadControl", "WriteDac", "WriteOwner", "Synch", "", "", "", "Sacl", "MaxAllowed", "", "",
             "GenericAll", "GenericExec", "GenericWrite", "GenericRead")  # fmt: skip
_QUERY_MODIFY = ("QueryState", "ModifyState")
# ntsdexts' type table, in its order (the summary's), with each type's own access rights
_TYPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("None", ()),
    ("Event", _QUERY_MODIFY),
    ("Section", ("Query", "MapWrite", "MapRead", "MapExecute", "Extend")),
    ("File", ("Read/List", "Write/Add", "Append/SubDir/CreatePipe", "ReadEA", "WriteEA", "Execute/Traverse",
              "DelChild", "ReadAttr", "WriteAttr")),
    ("Port", ("Connect",)),
    ("Directory", ("Query", "Traverse", "Create", "CreateSubdir")),
    ("SymbolicLink", ("Query",)),
    ("Mutant", ("QueryState",)),
    ("WindowStation", ("EnumDesktops", "ReadAttr", "Clipboard", "CreateDesktop", "WriteAttr", "GlobalAtom",
                       "ExitWindows", "", "Enumerate", "ReadScreen")),
    ("Semaphore", _QUERY_MODIFY),
    ("Key", ("QueryValue", "SetValue", "CreateSubKey", "EnumSubKey", "Notify", "CreateLink")),
    ("Token", ("AssignPrimary", "Duplicate", "Impersonate", "Query", "QuerySource", "AdjustPriv", "AdjustGroup",
               "AdjustDef")),
    ("Process", ("Terminate", "CreateThread", "", "VMOp", "VMRead", "VMWrite", "DupHandle", "CreateProcess",
                 "SetQuota", "SetInfo", "QueryInfo", "SetPort")),
    ("Thread", ("Terminate", "Suspend", "Alert", "GetContext", "SetContext", "SetInfo", "QueryInfo", "SetToken",
                "Impersonate", "DirectImpersonate")),
    ("Desktop", ("ReadObjects", "CreateWindow", "CreateMenu", "HookControl", "JournalRecord", "JournalPlayback",
                 "Enumerate", "WriteObjects", "SwitchDesktop")),
    ("IoCompletion", ("Query", "Modify")),
    ("Channel", ("ReadMessage", "WriteMessage", "Query", "SetInfo")),
    ("Timer", _QUERY_MODIFY),
    ("Job", ("AssignProcess", "SetAttr", "Query", "Terminate", "SetSecAttr")),
    ("WaitablePort", ("Connect",)),
    # the types current cdb adds after the old table (i4's summary lists them in this order)
    ("TpWorkerFactory", ()),
    ("ALPC Port", ()),
    ("WaitCompletionPacket", ()),
)  # fmt: skip
_INDEX = {name: i for i, (name, _) in enumerate(_TYPES)}
_TYPE = 1
_BASIC = 2
_NAME = 4
_SPECIFIC = 8


@dataclass(frozen=True)
class UserHandle:
    """One handle as the debug engine's handle data reports it (MINIDUMP_HANDLE_DESCRIPTOR's fields)."""

    value: int
    type: str
    access: int
    attributes: int = 0
    handle_count: int = 1
    pointer_count: int = 1
    name: str = ""
    info: tuple[str, ...] = ()  # object-specific lines ("Event Type Manual Reset"), none if empty


def _flags(value: int, names: Sequence[str], previous: str) -> str:
    """handle.cpp's ``DisplayFlags``: the named bits joined by commas, ``None`` for no bit; with no
    names for the type the buffer keeps what the previous call wrote."""
    if not value:
        return "None"
    if not names:
        return previous
    shown = [names[i] for i in range(len(names)) if value >> i & 1 and names[i]]
    rest = value >> len(names)
    return ",".join(shown) + ("," if rest else "")


def _one(h: UserHandle | None, value: int, mask: int, live: bool, x64: bool, typed: bool = True) -> str:
    """One handle's block; ``typed``: the type is known before the block (the walk of every
    handle reads it first; one handle asked alone knows it only with flag 1)."""
    head = f"Handle {value:x}\n" if live else f"Handle {value:0{16 if x64 else 8}x}\n"
    if h is None:  # no such handle: the engine's queries fail
        bad = "unable to query object information\n"
        return head + (bad if mask & _BASIC else "") + (bad if mask & _NAME else "")
    out = [head]
    if mask & _TYPE:
        out.append(f"  Type         \t{h.type}\n")
    index = _INDEX.get(h.type, 0) if typed or mask & _TYPE else 0
    if mask & _BASIC:
        rights = _TYPES[index][1]
        standard = _flags(h.access >> 16, _STANDARD, "")
        attributes = f"{h.attributes:#x}" if h.attributes else "0"  # C's %#x prints 0 bare
        out += [f"  Attributes   \t{attributes}\n", f"  GrantedAccess\t{h.access:#x}:\n",
                f"         {standard}\n", f"         {_flags(h.access & 0xFFFF, rights, standard)}\n",
                f"  HandleCount  \t{h.handle_count}\n", f"  PointerCount \t{h.pointer_count}\n"]  # fmt: skip
    if mask & _NAME and _TYPES[index][0] != "File":
        out.append(f"  Name         \t{h.name or '<none>'}\n")
    if mask & _SPECIFIC:
        if h.info:
            out.append("  Object Specific Information\n" if live else "  Object specific information\n")
            out += [f"    {line}\n" for line in h.info]
        else:
            out.append("  No Object Specific Information available\n" if live
                       else "  No object specific information available\n")
    return "".join(out)


def handle_text(handles: Sequence[UserHandle] | None, args: str, evaluate: Callable[[str], int], *, live: bool,
                x64: bool = True) -> str:
    """``!handle args`` over ``handles`` (``None``: a dump without handle data); ``evaluate``
    reads the handle and flags expressions (it raises the debugger's expression error)."""
    words = args.split(maxsplit=2)
    value = evaluate(words[0]) if words else 0
    mask = evaluate(words[1]) if len(words) > 1 else _TYPE
    wanted: int | None = None
    if len(words) > 2:
        name = words[2].strip()
        wanted = next((i for i, (t, _) in enumerate(_TYPES) if i and t.lower() == name.lower()), None)
        if wanted is None:
            return f"Unknown type '{name}'\n"
    if handles is None:
        return "Unable to read handle information\n"
    silent = mask == 0
    if value not in (0, (1 << 64) - 1, (1 << 32) - 1):  # one handle
        found = next((h for h in handles if h.value == value), None)
        return "" if silent else _one(found, value, mask, live, x64, typed=False)
    out: list[str] = []
    counts: dict[int, int] = {}
    matches = 0
    for h in sorted(handles, key=lambda h: h.value):
        index = _INDEX.get(h.type, 0)
        if wanted is not None and index != wanted:
            continue
        counts[index] = counts.get(index, 0) + 1
        matches += 1
        if not silent:
            out.append(_one(h, h.value, mask, live, x64))
    if wanted is not None:
        out.append(f"{matches} handles of type {_TYPES[wanted][0]}\n")
    else:
        out.append(f"{len(handles)} Handles\nType           \tCount\n")
        out += [f"{_TYPES[i][0]:<15}\t{n}\n" for i, n in sorted(counts.items())]
    return "".join(out)
