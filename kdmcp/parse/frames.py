"""The stack-frame line grammar, shared by ``k*``, ``!thread``/``!process``, ``STACK_TEXT``.

Every layout kd uses is "optional frame number, a few address-like columns, optional
``: args :``, then the call site and its annotations"::

    00 00000000`77732ef5 : 00000000`00000000 ... : ntdll!LdrpDoDebuggerBreak+0x30     (kb, no Child-SP)
    03 ffffd48f`77af9b40 fffff800`62c75328     : ffffd48f`77af9ec0 ... : nt!IofCallDriver+0x55
    00 00000055`5f8fdb78 00007ff9`9bc1f6f4     ntdll!NtWriteFile                      (k)
    00 0133fb7c 00891145 00000001 00000004 0133fd4c Project1!AddValues1 (FPO: [Non-Fpo]) (CONV: cdecl)
     009fdd0c 71a32520 COMCTL32!_chkstk+0x25                                          (old x86 k)
    01 (Inline Function) --------`-------- Wdf01000!FxDriverDeviceAdd::Invoke+0x30 [x.hpp @ 61]
    (Inline) --------     -------- -------- -------- Freeimage_test!FreeImage_test+0x13
    ... : nt!DbgBreakPointWithStatus ...                                             (doc-redacted)

So one pattern splits a line into (index, columns, call site); the columns are then read
by position (child SP/EBP, return address, arguments), and the call site is peeled of its
annotations (``[file @ line]``, ``(FPO: ...)``, ``(TrapFrame @ ...)``).
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._construct import adopt, field_defaults
from kdmcp.parse._text import addr, split_lines, split_symbol, strip_source
from kdmcp.parse.frame_params import split_params
from kdmcp.parse.models import Frame
from kdmcp.parse.partial import partial_row

# A column token: an address (8 or 8`8 hex digits), a placeholder for an inline frame's
# missing address ("--------`--------", "(Inline Function)"), the ":" around kb/kv
# arguments, or the "..." authors use to elide columns.
_COLUMN = (
    r"(?:[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?|--------(?:`--------)?"
    r"|\(Inline(?: Function)?\)|:|\.\.\.)"
)

FRAME_RE = re.compile(
    r"^\s*(?:(?P<index>[0-9a-fA-F]{2,4})\s+(?=\S))?"  # frame number (kn, kb, kv...)
    r"(?P<cols>(?:" + _COLUMN + r"\s+)*)"  # address-like columns
    r"(?P<site>\S.*)$"  # call site and annotations (lines arrive right-stripped)
)

# A call site that is plainly a symbol or code address: "mod!func", "mod+0x12", "0x...".
_SYMBOLISH_RE = re.compile(r"^(?:[^\s!]*![^\s]|[^\s+]*\+(?:0x)?[0-9a-fA-F]+\b|0x[0-9a-fA-F`]+\b|<Unloaded)")

# Trailing annotations kd appends to a call site.
_ANNOTATION_RE = re.compile(
    r"(?P<note>\((?:FPO|CONV|TrapFrame|Inline|Exception|Kernel|Frame)\b[^()]*\)|\[No function listed\.\])$"
)
# x64 prints "(TrapFrame @ ffffd48f`77af9e40)" on its own; x86 inside the frame's FPO data:
# "nt!KiSystemServicePostCall (FPO: [0,3] TrapFrame @ ae12bc14)".
_TRAPFRAME_RE = re.compile(r"TrapFrame @ (?P<addr>[0-9a-fA-F`]+)\)$")

# An x86 kb/kv row that prints no call site ends in its third argument:
# "8013ed5c 801263ba 00000000 00000000 e12ab000" (Microsoft docs, bug check 0xA example).
_LONE_COLUMN_RE = re.compile(r"[0-9a-fA-F]{8}")

# A symbol warning kd printed on the same line as a frame, with no line break before it:
# "...AllocLocal_DivideByZero()+0xbc*** WARNING: Unable to verify checksum for C:\x.exe"
# (cdb on ARM32). The warning itself is found by ``errors.scan``.
_GLUED_WARNING = "*** "

# Fast path for the layouts that make up nearly all of a large capture (k/kn/kv/kb on x64,
# k/kb on x86, !thread stacks): no annotations, no source note, a plain symbol. A line that
# does not match exactly goes through FRAME_RE and the general reader below.
# Optional parts are spelled "(?:...|)" rather than "(?:...)?" (the same match, tried in
# the same order) and addresses "8`8|8" rather than "8(?:`8)?": Python's engine runs these
# without its general repeat machinery, a third faster on every frame line.
_A16 = r"(?:[0-9a-f]{8}`[0-9a-f]{8}|[0-9a-f]{8})"
# a bare-address call site, padded or not (see _text.BARE_ADDRESS_RE): "0x00007ff8`eed7a104", "0x12e"
_BARE = r"0x[0-9a-f]{8}`[0-9a-f]{8}|0x[0-9a-f]{1,16}"
# A module call site; never a lone 8-digit hex word, which is a column (see _LONE_COLUMN_RE).
_MODULE_SITE = r"(?![0-9a-f]{8}(?![A-Za-z0-9_.$!+-]))(?P<module>[A-Za-z0-9_.$-]+)"
FAST_FRAME = (
    r"(?:(?P<index>[0-9a-f]{2,4}) |)"  # frame number
    r"(?P<child>" + _A16 + r") (?P<ret>" + _A16 + r") +"  # Child-SP/ChildEBP, RetAddr
    # kb/kv arguments between colons (x64), or up to four 32-bit ones (x86 kb)
    r"(?::(?P<args> " + _A16 + r" " + _A16 + r" " + _A16 + r" " + _A16 + r"|(?: " + _A16 + r")+) : "
    r"|(?P<xargs>(?:[0-9a-f]{8} ){1,4})|)"
    # call site: a bare address, or module[!function][+0xoffset]
    r"(?P<site>(?P<bare>" + _BARE + r")"
    r"|" + _MODULE_SITE + r"(?:!(?P<function>[A-Za-z0-9_:~<>$@?.]+)|)(?:\+0x(?P<offset>[0-9a-f]+)|))"
    r"(?: \(TrapFrame @ (?P<trap>" + _A16 + r")\)|)"
)
FAST_FRAME_RE = re.compile(FAST_FRAME)
# The same, as whole lines of a larger text: lets frames_from_text find them in one C-level
# scan instead of a Python loop over lines.
_FAST_FRAME_LINE_RE = re.compile(r"^[ \t]*" + FAST_FRAME + r"[ \t]*\r?$", re.MULTILINE)

# The x64 "Child-SP  RetAddr  Call Site" layout of !thread/!process stacks alone, as whole
# lines with their line breaks, groups in FAST_FRAME's order (child, ret, site, bare, module,
# function, offset, trap). A line it matches is split exactly as FAST_FRAME splits it (the
# alternatives it leaves out - a frame number, arguments - cannot match such a line), and
# ``findall`` over a stack yields tuples without a match object per frame.
CHILD_SP_ROW_RE = re.compile(
    r"^[ \t]*(?P<child>[0-9a-f]{8}`[0-9a-f]{8}) (?P<ret>" + _A16 + r") +"
    r"(?P<site>(?P<bare>" + _BARE + r")"
    r"|" + _MODULE_SITE + r"(?:!(?P<function>[A-Za-z0-9_:~<>$@?.]+)|)(?:\+0x(?P<offset>[0-9a-f]+)|))"
    r"(?: \(TrapFrame @ (?P<trap>" + _A16 + r")\)|)[ \t]*\n",
    re.MULTILINE,
)

# A frame line by its start (a frame number and the first address column, or an x64 address
# column alone), whatever follows: one that does not read whole is kept as a partial frame.
_PARTIAL_FRAME_RE = re.compile(
    r"^\s*(?:(?P<index>[0-9a-fA-F]{2,4})\s+(?P<col>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?)"
    r"|(?P<col64>[0-9a-fA-F]{8}`[0-9a-fA-F]{8}))(?=\s|$)"
)

# kP continuation: at most this many parameter lines, and never across the next frame line.
_MAX_CONTINUATION = 16
_NEW_FRAME_RE = re.compile(r"(?:[0-9a-fA-F]{2,4} )?[0-9a-fA-F]{8}[` ]")

# Header lines of the various k layouts.
STACK_HEADER_RE = re.compile(r"^\s*(?:#\s+)?(?:Child-?SP|ChildEBP|RetAddr|Memory\s+Child)|Call Site\s*$")


def _read_columns(cols: str) -> tuple[str | None, str | None, list[str], bool]:
    """(child, return address, args, inline) from the column text."""
    tokens = cols.replace("(Inline Function)", "(Inline)").split()
    inline = False
    if ":" in tokens:
        groups: list[list[str]] = [[]]
        for tok in tokens:
            if tok == ":":
                groups.append([])
            else:
                groups[-1].append(tok)
        pre = groups[0]
        args = groups[1] if len(groups) > 1 else []
    else:
        pre = tokens[:2]
        args = tokens[2:]
    child: str | None = None
    ret: str | None = None
    if len(pre) >= 2:
        child, ret = pre[0], pre[1]
    elif len(pre) == 1:
        ret = pre[0]
    if child is not None and child.startswith("("):
        inline = True
        child = None
    if child is not None and (child.startswith("-") or child == "..."):
        child = None
    if ret is not None and (ret.startswith("-") or ret == "..." or ret.startswith("(")):
        if ret.startswith("("):
            inline = True
        ret = None
    clean_args = [a for a in args if not a.startswith("-") and a != "..."]
    return child, ret, clean_args, inline


def frame_fields(m: re.Match[str], child_sp_column: bool = False) -> dict[str, Any] | None:
    """A ``Frame`` dict from a ``FRAME_RE`` match, or ``None`` if the line is not a frame.

    ``child_sp_column``: the stack's header names the first column ``Child-SP`` (see
    ``names_child_sp``), so an 8-digit value there is a stack pointer, not an EBP.
    """
    cols = m.group("cols")
    site = m.group("site")
    n_addr = 0
    if cols:
        for tok in cols.split():
            if tok[0] not in ":.":
                n_addr += 1
    if not (n_addr >= 2 or _SYMBOLISH_RE.match(site)) or site.endswith(":"):
        return None
    index_text = m.group("index")
    child, ret, args, inline = _read_columns(cols) if cols else (None, None, [], False)
    frame: dict[str, Any] = {}
    if index_text is not None:
        frame["index"] = int(index_text, 16)
    if child is not None:
        if len(child) == 8 and not child_sp_column:
            frame["child_ebp"] = addr(child)
        else:
            frame["child_sp"] = addr(child)
    if ret is not None:
        frame["return_address"] = addr(ret)
    if args:
        frame["args"] = [addr(a) for a in args]
    if inline or "(Inline" in site:
        frame["inline"] = True
    if n_addr >= 2 and _LONE_COLUMN_RE.fullmatch(site):
        frame["args"] = [*frame.get("args", []), addr(site)]
        frame["call_site"] = ""
        return frame
    frame.update(site_fields(site))
    return frame


def site_fields(site: str) -> dict[str, Any]:
    """The call-site part of a ``Frame``: symbol split, source, annotations."""
    frame: dict[str, Any] = {}
    glued = site.find(_GLUED_WARNING)
    if glued > 0 and site.startswith(("WARNING", "ERROR"), glued + len(_GLUED_WARNING)):
        site = site[:glued]
    if site.endswith(" ..."):
        site = site[:-4].rstrip()
    site, source_file, source_line = strip_source(site)
    annotations: list[str] = []
    site = site.rstrip()
    while site.endswith((")", "]")):
        a = _ANNOTATION_RE.search(site)
        if a is None:
            break
        annotations.append(a.group("note"))
        site = site[: a.start()].rstrip()
    if annotations:
        annotations.reverse()
        frame["annotations"] = annotations
        for note in annotations:
            t = _TRAPFRAME_RE.search(note)
            if t is not None:
                frame["trap_frame"] = addr(t.group("addr"))
        if site.endswith(" ..."):
            site = site[:-4]
    site = site.strip()
    if source_file is not None:
        frame["source_file"] = source_file
        frame["source_line"] = source_line
    frame["call_site"] = site
    module, function, offset, address = split_symbol(site)
    if module is not None:
        frame["module"] = module
    if function is not None:
        function, params = split_params(function)
        frame["function"] = function
        if params is not None:
            frame["params"] = params
    if offset is not None:
        frame["offset"] = offset
    if address is not None:
        frame["address"] = address
    return frame


def _fast_frame(stripped: str, child_sp_column: bool = False) -> Frame | None:
    """The common layouts, read straight from one exact match (about 4x faster)."""
    m = FAST_FRAME_RE.fullmatch(stripped)
    if m is None:
        return None
    return fast_frame_model(m, child_sp_column)


# A Frame's __dict__ before anything is read, and the builder that adopts a filled copy.
_FRAME_DEFAULTS = field_defaults(Frame)
_new_frame = adopt(Frame)


def fast_frame_model(m: re.Match[str], child_sp_column: bool = False) -> Frame:
    """The ``Frame`` of a ``FAST_FRAME_RE`` / ``_FAST_FRAME_LINE_RE`` match (hot path: one
    unpacking of the groups, no lookups by name); ``child_sp_column`` as in ``frame_fields``.

    Every value is already in validated form (``str``, ``int``, ``tuple[str, ...]``), so the
    instance is built directly instead of through ``Frame.model_validate``.
    """
    index, child, ret, args, xargs, site, bare, module, function, offset, trap = m.groups()
    frame = _FRAME_DEFAULTS.copy()
    frame["return_address"] = "0x" + ret.replace("`", "")
    frame["call_site"] = site
    if len(child) == 8 and not child_sp_column:
        frame["child_ebp"] = "0x" + child
        given = {"return_address", "call_site", "child_ebp"}
    else:
        frame["child_sp"] = "0x" + child.replace("`", "")
        given = {"return_address", "call_site", "child_sp"}
    if index is not None:
        frame["index"] = int(index, 16)
        given.add("index")
    if args is not None:
        # " ffffd48f`77af9ec0 00000000`00000001" -> ("0xffffd48f77af9ec0", "0x0000000000000001")
        frame["args"] = tuple(args.replace("`", "").replace(" ", " 0x").split())
        given.add("args")
    elif xargs is not None:
        frame["args"] = tuple(["0x" + a for a in xargs.split()])
        given.add("args")
    if bare is not None:
        frame["address"] = bare.replace("`", "")
        given.add("address")
    else:
        frame["module"] = module
        given.add("module")
        if function is not None:
            frame["function"] = function
            given.add("function")
        if offset is not None:
            frame["offset"] = "0x" + (offset.lstrip("0") or "0")
            given.add("offset")
    if trap is not None:
        frame["trap_frame"] = "0x" + trap.replace("`", "")
        frame["annotations"] = ("(TrapFrame @ " + trap + ")",)
        given.update(("trap_frame", "annotations"))
    return _new_frame(frame, given)


def child_sp_frame(row: tuple[str, str, str, str, str, str, str, str]) -> Frame:
    """The ``Frame`` of a ``CHILD_SP_ROW_RE.findall`` row: what ``fast_frame_model`` makes of
    the same line (``findall`` gives ``""`` for a group that took no part, and no group that
    takes part can be empty)."""
    child, ret, site, bare, module, function, offset, trap = row
    given = {"child_sp", "return_address", "call_site"}
    if bare:
        address: str | None = bare.replace("`", "")
        given.add("address")
        module_: str | None = None
        function_: str | None = None
        offset_: str | None = None
    else:
        address = None
        module_ = module
        given.add("module")
        function_ = function or None
        if function:
            given.add("function")
        offset_ = "0x" + (offset.lstrip("0") or "0") if offset else None
        if offset:
            given.add("offset")
    trap_frame: str | None = None
    annotations: tuple[str, ...] = ()
    if trap:
        trap_frame = "0x" + trap.replace("`", "")
        annotations = ("(TrapFrame @ " + trap + ")",)
        given.update(("trap_frame", "annotations"))
    fields = {
        "index": None,
        "child_sp": "0x" + child.replace("`", ""),
        "child_ebp": None,
        "return_address": "0x" + ret.replace("`", ""),
        "args": (),
        "call_site": site,
        "module": module_,
        "function": function_,
        "offset": offset_,
        "address": address,
        "source_file": None,
        "source_line": None,
        "inline": False,
        "trap_frame": trap_frame,
        "annotations": annotations,
        "params": None,
        "partial": False,
        "raw_line": None,
    }
    return _new_frame(fields, given)


def names_child_sp(text: str) -> bool:
    """Whether the stack header in ``text`` names its first column ``Child-SP``.

    The column is named by the header, not by the width of its values: ARM32 ``k`` prints
    8-digit stack pointers under `` # Child-SP RetAddr  Call Site``, x86 ``k`` 8-digit frame
    pointers under ``ChildEBP RetAddr``. The first header wins (one ``k`` output has one).
    """
    sp = text.find("Child-SP")
    return sp >= 0 and text.find("ChildEBP", 0, sp) < 0


def frames_from_lines(
    lines: list[str], start: int = 0, stop: int | None = None, child_sp_column: bool | None = None
) -> list[dict[str, Any] | Frame]:
    """All frame lines in ``lines[start:stop]`` (common-layout ones built as ``Frame``
    instances, the others as dicts); other lines are skipped.

    ``kP`` prints a frame's parameters on the following lines, closing the parenthesis
    before ``+0x..``; such a frame is re-joined before it is read. ``child_sp_column`` as in
    ``frame_fields``; by default, what the lines' own stack header says.
    """
    end = len(lines) if stop is None else stop
    if child_sp_column is None:
        child_sp_column = names_child_sp("\n".join(lines[start:end]))
    frames: list[dict[str, Any] | Frame] = []
    i = start
    match = FRAME_RE.match
    while i < end:
        line = lines[i]
        i += 1
        stripped = line.strip()
        if not stripped:
            continue
        fast = _fast_frame(stripped, child_sp_column)
        if fast is not None:
            frames.append(fast)
            continue
        m = match(line)
        if m is None:
            continue
        site = m.group("site")
        if site.count("(") > site.count(")"):
            # kP: "MyApp!main(" / "int argc = 0n1, " / "char ** argv = 0x...)+0x5 [x.cpp @ 12]"
            parts = [line.rstrip()]
            j = i
            depth = site.count("(") - site.count(")")
            while j < end and depth > 0 and j - i < _MAX_CONTINUATION:
                nxt = lines[j].strip()
                if _NEW_FRAME_RE.match(nxt):
                    break
                parts.append(nxt)
                depth += nxt.count("(") - nxt.count(")")
                j += 1
            if depth <= 0:
                joined = parts[0] + " ".join(parts[1:])
                m2 = match(joined)
                if m2 is not None:
                    f = frame_fields(m2, child_sp_column)
                    if f is not None:
                        frames.append(f)
                        i = j
                        continue
        f = frame_fields(m, child_sp_column)
        if f is not None:
            frames.append(f)
            continue
        p = _PARTIAL_FRAME_RE.match(line)
        if p is not None:
            frames.append(_partial_frame(p, line, child_sp_column))
    return frames


def _partial_frame(p: re.Match[str], line: str, child_sp_column: bool) -> dict[str, Any]:
    """A frame line whose rest did not read (kdmcp/parse/partial.py): its number and first column."""
    read: dict[str, Any] = {"call_site": ""}
    if p.group("index"):
        read["index"] = int(p.group("index"), 16)
    col = p.group("col") or p.group("col64")
    read["child_ebp" if len(col) == 8 and not child_sp_column else "child_sp"] = addr(col)
    return partial_row(line, **read)


def frames_from_text(text: str) -> list[dict[str, Any] | Frame]:
    """All frames in ``text``: common-layout lines found in one scan (and built as ``Frame``
    instances), the rest (headers, annotated or inline frames, ``kP`` continuations) read
    line by line into dicts."""
    frames: list[dict[str, Any] | Frame] = []
    append = frames.append
    sp = names_child_sp(text)
    pos = 0
    for m in _FAST_FRAME_LINE_RE.finditer(text):
        start = m.start()
        if start > pos:
            gap = text[pos:start]
            if not gap.isspace():
                frames.extend(frames_from_lines(split_lines(gap), child_sp_column=sp))
        append(fast_frame_model(m, sp))
        pos = m.end()
    if pos < len(text):
        tail = text[pos:]
        if not tail.isspace():
            frames.extend(frames_from_lines(split_lines(tail), child_sp_column=sp))
    return frames
