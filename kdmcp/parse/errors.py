"""The debugger's own complaints: recognise, classify, and turn into records or warnings.

kd does not mark errors out of band; it prints a line, sometimes under a caret that points
into the echoed command::

    0:000> ea eip helloworld
                 ^ Quotes required in 'ea eip helloworld'

A command whose whole output is such lines failed (``ErrorRecord``); a command that also
printed what it was asked for succeeded, and the lines become ``warnings`` of its record.
Categories are chosen by what the caller does next (fix the syntax, load symbols, pick
another address...), not by the debugger's wording.
"""

from __future__ import annotations

import re

from kdmcp.parse.models import DebuggerError, ErrorRecord

# Cheap first pass: every diagnostic below contains one of these phrases, and almost all
# start with an upper-case letter or "*": Python's regex engine skips positions whose
# first character cannot start an alternative, so the rarer those characters, the faster
# the scan (~10 ms per MB here). Only hits are classified.
_TRIGGER_RE = re.compile(
    r"\*\*\*|Syntax error|Extra character|Numeric expression|Quotes required|Range error"
    r"|Memory (?:access|read)|Unable to|Cannot read|Could|Bad register|Symbol \S+ not found"
    r"|No (?:type information|export|runnable)|Type information|Operation not|This command"
    r"|The call|Debuggee|GetContextState|Error|ERROR|WARNING|Invalid|Bp expression"
    r"|is not extension gallery"
)

# Optional leading blanks and the caret kd prints under the offending column.
_LEAD = r"^\s*(?:\^\s*)?"

# (category, noise?, pattern). Noise = symbol/unwind chatter that accompanies successful
# output; the rest are failures of the command itself. First match wins.
_CLASSIFIERS: tuple[tuple[str, bool, re.Pattern[str]], ...] = (
    # "*** WARNING: Unable to verify checksum for foo.dll"
    # "*** ERROR: Module load completed but symbols could not be loaded for foo.sys"
    # "*** ERROR: Symbol file could not be found.  Defaulted to export symbols for ntdll.dll -"
    # "*** WARNING: symbols checksum is wrong 0x0000735a 0x00000000 for agpcpq.sys"
    # (may follow the progress dots of a reload on the same line: "..*** WARNING: ...")
    ("symbol_load", True, re.compile(r"^[\s.]*\*\*\* (?:WARNING|ERROR)\b")),
    # "WARNING: Stack unwind information not available. Following frames may be wrong."
    # "WARNING: Frame IP not in any known module. Following frames may be wrong."
    ("unwind", True, re.compile(r"^\s*WARNING: (?:Stack unwind|Frame IP)")),
    # "Unable to enumerate user-mode unloaded modules, Win32 error 0n30"
    ("unloaded_modules", True, re.compile(r"^\s*Unable to enumerate (?:user-mode )?unloaded modules")),
    # "Unable to load image \SystemRoot\system32\foo.sys, Win32 error 0n2"
    ("symbol_load", True, re.compile(r"^\s*Unable to load image\b")),
    # "Bp expression 'foo!bar' could not be resolved, adding deferred bp"
    ("unresolved_symbol", True, re.compile(r"^\s*Bp expression '.*' could not be resolved")),
    # "^ Syntax error in 'xyz'", "Syntax error at '( "c:\dir\", ..."
    ("syntax", False, re.compile(_LEAD + r"Syntax error\b")),
    # "^ Extra character error in 'r rip rip'", "^ Numeric expression missing from '...'"
    ("syntax", False, re.compile(_LEAD + r"(?:Extra character error|Numeric expression missing)\b")),
    # "^ Quotes required in 'ea eip helloworld'"
    ("syntax", False, re.compile(_LEAD + r"Quotes required in\b")),
    # "^ Range error in 'db 0 L-1'"
    ("invalid_argument", False, re.compile(_LEAD + r"Range error\b")),
    # "Memory access error at ')'", "^ Memory access error in 'dd 0'"
    ("memory_access", False, re.compile(_LEAD + r"Memory access error\b")),
    # "Memory read error 00000000" (dt), "Unable to read memory at Address ...",
    # "Cannot read ...", "Could not read process/memory ..."
    (
        "memory_access",
        False,
        re.compile(
            r"^\s*(?:Memory read error\b|Unable to read (?:memory|virtual|\w+ memory)"
            r"|Cannot read\b|Could not read\b)"
        ),
    ),
    # "^ Bad register error in 'r zz'"
    ("bad_register", False, re.compile(_LEAD + r"Bad register error\b")),
    # "Couldn't resolve error at 'foo'"
    ("unresolved_symbol", False, re.compile(_LEAD + r"Couldn't resolve error\b")),
    # dt: "Symbol nt!_FOO not found." ; "No type information found for 'x'"
    (
        "unresolved_symbol",
        False,
        re.compile(r"^\s*(?:Symbol \S+ not found\b|No type information found|Type information missing)"),
    ),
    # "No export analyze found"
    ("no_export", False, re.compile(r"^\s*No export \S+ found")),
    # "!foo is not extension gallery command"
    ("no_export", False, re.compile(r"^\s*\S+ is not extension gallery command")),
    # "^ Operation not supported in current debug session '.dump'"
    ("not_supported", False, re.compile(_LEAD + r"(?:Operation not supported|This command is not supported)")),
    # "The call to LoadLibrary(foo) failed, Win32 error 0n2"
    ("extension_load", False, re.compile(r"^\s*The call to LoadLibrary\(")),
    # "^ No runnable debuggees error in 'g'"
    ("no_target", False, re.compile(_LEAD + r"(?:No runnable debuggees|Debuggee not connected)")),
    # "Unable to get program counter", "GetContextState failed, 0xD0000147"
    (
        "context",
        False,
        re.compile(
            r"^\s*(?:Unable to get (?:program counter|current machine context|thread context)"
            r"|GetContextState failed)"
        ),
    ),
    # '"C:\x\TestScript.js" (line 11 (@ 1)): Error (0x80004005): Syntax error'
    # 'Error: Unable to execute JavaScript script ...'
    (
        "script",
        False,
        re.compile(r'^\s*(?:".*" \(line \d+.*\): Error \(0x[0-9a-fA-F]+\)|Error: Unable to execute)'),
    ),
    # "Could not open dump file [x.dmp], HRESULT 0x80004002",
    # "Could not match Dump File signature - invalid file format",
    # "**** DebugClient cannot open DumpFile - error 80004002"
    (
        "file",
        False,
        re.compile(r"^\s*(?:Could not (?:open|match) dump file|\*+ DebugClient cannot open)", re.IGNORECASE),
    ),
    # "Unable to insert breakpoint 0 at fffff801`1234, Win32 error 0n998"
    ("breakpoint", False, re.compile(r"^\s*Unable to (?:insert|remove|set) breakpoint")),
    # "Invalid parameter passed", "^ Invalid type name"
    ("invalid_argument", False, re.compile(_LEAD + r"Invalid (?:parameter|argument|flags?|type)\b")),
)

# Where a diagnostic can start: every classifier above matches at the head of its line,
# after blanks, a caret or progress dots, on one of these words. A line
# whose head is none of these is never classified, so ``scan`` only looks at lines that
# pass this test (a superset is fine: candidates are still checked with _TRIGGER_RE and
# the classifiers). The one classifier that starts with any word is found by its phrase.
_LINE_HEAD = (
    # blanks (not the line break), taken whole: the head is tried at every line start, and
    # backtracking into the blanks would retry the words below once per blank (a lookahead
    # capture then a backreference is the atomic group of Python < 3.11)
    r"(?=(?P<blanks>[^\S\n]*))(?P=blanks)"
    # a caret (kd points at the bad column), progress dots or "***", a quoted script name
    r"(?:[\^.*\"]"
    r"|WARNING|Unable to|Bp expression|Syntax error|Extra character|Numeric expression"
    r"|Quotes required|Range error|Memory |Cannot read|C(?i:ould)|c(?i:ould)|Bad register|Symbol |No "
    r"|Type information|Operation not|This command|The call|Debuggee|GetContextState|Error|Invalid)"
)
_LINE_HEAD_RE = re.compile(_LINE_HEAD)
# The same after a line break: the literal "\n" lets the engine skip to line starts fast.
_NEXT_LINE_HEAD_RE = re.compile(r"\n" + _LINE_HEAD)
# "!foo is not extension gallery command" (any first word).
_GALLERY_PHRASE = " is not extension gallery"
# A symbol warning printed with no line break after the text before it (cdb on ARM32):
# "01 00a13f68 0f1621f4 App!Foo()+0xbc*** WARNING: Unable to verify checksum for C:\App.exe"
_GLUED_PHRASE = "*** "
# What may precede a "*** WARNING" that opens its line (the symbol_load classifier's "^[\s.]*").
_LINE_OPENING_RE = re.compile(r"[\s.]*")

# Caret lines: "             ^ Quotes required in ..." -> message without the caret.
_CARET_RE = re.compile(r"^\s*\^\s*")


def classify_line(line: str) -> DebuggerError | None:
    """Classify one output line as a debugger diagnostic, or ``None`` if it is not one."""
    for category, noise, pattern in _CLASSIFIERS:
        if pattern.match(line):
            message = _CARET_RE.sub("", line).strip() if not noise else line.strip()
            return DebuggerError(category=category, message=message, line=line, noise=noise)
    return None


def scan(raw: str) -> list[DebuggerError]:
    """All diagnostic lines of ``raw``, in order. Linear in ``len(raw)``.

    A line is classified when it contains a trigger phrase. Every classifier is anchored
    at the start of its line, so only lines whose head can start one (``_LINE_HEAD``) are
    looked at: one C-level scan for line breaks instead of a search at every upper-case
    letter of a large output.
    """
    found: list[tuple[int, DebuggerError]] = []  # (line start, diagnostic)
    candidates = [0] if _LINE_HEAD_RE.match(raw) else []
    candidates += [m.start() + 1 for m in _NEXT_LINE_HEAD_RE.finditer(raw)]
    at = raw.find(_GALLERY_PHRASE)
    if at >= 0:
        extra: set[int] = set()
        while at >= 0:
            extra.add(raw.rfind("\n", 0, at) + 1)
            at = raw.find(_GALLERY_PHRASE, at + 1)
        candidates = sorted(extra.union(candidates))
    find = raw.find
    trigger = _TRIGGER_RE.search
    for start in candidates:
        end = find("\n", start)
        if end < 0:
            end = len(raw)
        line = raw[start:end].rstrip("\r")
        if trigger(line) is None:
            continue
        diag = classify_line(line)
        if diag is not None:
            found.append((start, diag))
    # a one-character search runs at memchr speed, ~20x faster than one for the phrase
    if "*" in raw and _GLUED_PHRASE in raw:
        found += _glued_warnings(raw)
        found.sort(key=_line_start)  # stable: on one line, the diagnostic that opens it first
    return [diag for _, diag in found]


def _line_start(item: tuple[int, DebuggerError]) -> int:
    return item[0]


def _glued_warnings(raw: str) -> list[tuple[int, DebuggerError]]:
    """(line start, diagnostic) of every ``*** WARNING``/``*** ERROR`` that does not open its
    line (those are found by ``scan``'s line heads): the symbol complaint kd printed straight
    after other text. Its ``line`` is the whole line; its message is the complaint alone."""
    found: list[tuple[int, DebuggerError]] = []
    find = raw.find
    at = find(_GLUED_PHRASE)
    while at >= 0:
        if raw.startswith(("WARNING", "ERROR"), at + len(_GLUED_PHRASE)):
            start = raw.rfind("\n", 0, at) + 1
            if _LINE_OPENING_RE.fullmatch(raw, start, at) is None:
                # glued; the rest of its line is the complaint (at most one per line: linear)
                end = find("\n", at)
                if end < 0:
                    end = len(raw)
                diag = classify_line(raw[at:end].rstrip("\r"))
                if diag is not None:
                    found.append((start, diag.model_copy(update={"line": raw[start:end].rstrip("\r")})))
                at = end
        at = find(_GLUED_PHRASE, at + 1)
    return found


def is_noise(diag: DebuggerError) -> bool:
    """True for symbol/unwind chatter that does not mean the command failed."""
    return diag.noise


def warnings_of(diags: list[DebuggerError]) -> list[str]:
    """The warning strings a successful record carries."""
    return [d.message for d in diags]


def error_record(command: str, raw: str, diags: list[DebuggerError]) -> ErrorRecord | None:
    """An ``ErrorRecord`` if the output carries any diagnostic, else ``None``.

    Used only when no family parser understood the output: then a diagnostic is the
    answer. The first real failure names the category; symbol noise only if alone.
    """
    if not diags:
        return None
    hard = [d for d in diags if not is_noise(d)]
    first = hard[0] if hard else diags[0]
    return ErrorRecord(
        command=command,
        raw=raw,
        category=first.category,
        message=first.message,
        errors=diags,
        warnings=[d.message for d in diags if is_noise(d)],
    )


def looks_like_error_line(text: str) -> bool:
    """True if ``text`` is a failure line (not noise); used to tell output that landed on
    a prompt line (pipes, ``.scriptload``) from a typed command."""
    diag = classify_line(text)
    return diag is not None and not is_noise(diag)
