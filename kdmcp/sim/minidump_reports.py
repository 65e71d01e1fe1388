"""What the simulated ``cdb -z`` reports of a real minidump: ``vertarget``, ``.lastevent``,
``!analyze -v`` -- every figure read from the dump, none canned.

The dump-triage loop asks these three after ``lm``, ``~``, ``.exr -1``, ``.ecxr``, ``r`` and ``k``
(which :mod:`~kdmcp.sim.minidump_target` and :mod:`~kdmcp.sim.minidump_context` answer); the
simulator used to answer them with the canned Windows 10 x64 target whatever the dump held.

- ``vertarget``: :meth:`.MinidumpTarget.system_block`, the same lines cdb's load banner prints
  (OS line, product and suites, build lab, session time from the header, process uptime);
- ``.lastevent``: ``Last event: 620.276c: Access violation - code c0000005 (first/second chance
  not available)`` then ``  debugger time: Mon Feb  6 10:21:09.298 2023 (UTC - 8:00)`` (a real
  Windows minidump's, quoted in ClusterFuzz's stack-analyzer tests);
- ``!analyze -v``: the current user-mode layout of corpus analyze/10 (cdb 10.0.29482), its
  figures from the dump: the exception record as ``.exr -1`` prints it, the exception context
  as ``.ecxr`` prints it (``CONTEXT:  (.ecxr)``, the form a dump's analysis opens with), the
  process name (the module list's main image), the faulting thread, the module and
  ``module+offset`` the faulting address is in (no symbols: what ``ln`` names), the stack ``k``
  walks from the exception context, and the failure bucket built from them.

``!analyze -v`` lines no dump figure backs (the ``Analysis.*`` timings, the failure hash) are
fixed or derived from the bucket, as the kernel world's analysis does.
"""

from __future__ import annotations

import zlib
from pathlib import PureWindowsPath

from kdmcp.sim import minidump_symbols, texts
from kdmcp.sim.minidump_context import Context, DumpContexts
from kdmcp.sim.minidump_inspect import DumpInspector  # ?, ~., |., ln, x, u, dps, d* on expressions
from kdmcp.sim.minidump_target import ACCESS, CODE_NAMES, DumpModule, MinidumpTarget
from kdmcp.sim.scenario import Scenario

__all__ = ["analysis", "answer", "last_event", "version", "vertarget"]

_STARS = "*" * 79
_BANNER = (
    f"{_STARS}\n*{' ' * 77}*\n*                        Exception Analysis                                   *\n"
    f"*{' ' * 77}*\n{_STARS}\n\n"
)
# ERROR_CODE's text: the NTSTATUS message table's (ntstatus.h) for the codes these dumps hold
_MESSAGES = {
    0xC0000005: "The instruction at 0x%p referenced memory at 0x%p. The memory could not be %s.",
    0xC00000FD: "A new guard page for the stack cannot be created.",
    0xC0000409: (
        "The system detected an overrun of a stack-based buffer in this application. This overrun "
        "could potentially allow a malicious user to gain control of this application."
    ),
    0x80000003: "{EXCEPTION}  Breakpoint  A breakpoint has been reached.",
    0xC0000094: "{EXCEPTION}  Integer division by zero.",
    0xC000001D: "{EXCEPTION}  Illegal Instruction  An attempt was made to execute an illegal instruction.",
}
# FAST_FAIL_* codes (winnt.h) a c0000409's first parameter names, as buckets spell them
# ("FAIL_FAST_FATAL_APP_EXIT_c0000409_...": abort() in a CRT built with /GS)
_FAST_FAIL = {
    2: "STACK_COOKIE_CHECK_FAILURE",
    3: "CORRUPT_LIST_ENTRY",
    5: "INVALID_ARG",
    7: "FATAL_APP_EXIT",
    10: "INVALID_SET_OF_CONTEXT",
    37: "GUARD_ICALL_CHECK_FAILURE",
}
_ACCESS_WORD = {0: "READ", 1: "WRITE", 8: "EXECUTE"}
# the analysis engine's own figures (no dump holds them): the kernel world's, for the user engine
_ANALYSIS_KEYS = [
    ("Analysis.CPU.mSec", "421"),
    ("Analysis.Elapsed.mSec", "1287"),
    ("Analysis.IO.Other.Mb", "0"),
    ("Analysis.IO.Read.Mb", "0"),
    ("Analysis.IO.Write.Mb", "0"),
    ("Analysis.Init.CPU.mSec", "156"),
    ("Analysis.Init.Elapsed.mSec", "2093"),
    ("Analysis.Memory.CommitPeak.Mb", "41"),
    ("Analysis.Version.DbgEng", "10.0.26100.1"),
    ("Analysis.Version.Description", "10.2408.27.01 amd64fre"),
    ("Analysis.Version.Ext", "1.2408.27.1"),
]


def answer(t: MinidumpTarget, view: DumpContexts, command: str, thread: int, sc: Scenario) -> str | None:
    """The report ``command`` asks for, or what :class:`~kdmcp.sim.minidump_inspect.DumpInspector`
    answers; ``None``: neither."""
    words = command.split()
    low = [w.lower() for w in words]
    if low == ["vertarget"]:
        return vertarget(t)
    if low == ["version"]:
        canned = sc.response_for("version")
        return version(t, canned.text if canned is not None else "")
    if low == [".lastevent"]:
        return last_event(t)
    if low == ["!analyze", "-v"]:
        return analysis(t, view, thread)
    if (symbols := minidump_symbols.answer(t, command)) is not None:  # .sympath, .reload
        return symbols
    return DumpInspector(t, view, thread).answer(command)


def version(t: MinidumpTarget, canned: str) -> str:
    """``version``: the dump's target block and what it is (``User mini dump: c:\\notepad.dmp``,
    the system description ``||`` prints in Microsoft's multiple-dump-files walkthrough), then
    the debugger's own part of the scenario's answer (from its ``Microsoft (R) Windows Debugger``
    line on)."""
    _target, banner, debugger = canned.partition("Microsoft (R) Windows Debugger")
    return t.system_block() + f"User mini dump: {t.path}\n\n" + banner + debugger


def vertarget(t: MinidumpTarget) -> str:
    """``vertarget`` on a user dump: the banner's system lines (cdb prints the same block)."""
    return t.system_block()


def last_event(t: MinidumpTarget) -> str:
    """``.lastevent``: the stored exception as the load banner names it, and the debugger's
    time. A dump written without an exception has no event: cdb's wording for that is not in a
    published transcript; ``<no event>`` is reconstructed, and no exception is invented."""
    if t.exception is None:
        return f"Last event: <no event>\n  debugger time: {texts.timestamp()}\n"
    code = t.exception.ExceptionRecord.ExceptionCode_raw
    name = CODE_NAMES.get(code, "Unknown exception")
    return (
        f"Last event: {t.pid:x}.{t.exception.ThreadId:x}: {name} - code {code:08x} "
        "(first/second chance not available)\n"
        f"  debugger time: {texts.timestamp()}\n"
    )


# ---------------------------------------------------------------------- !analyze -v


def _module_at(t: MinidumpTarget, address: int) -> DumpModule | None:
    return next((m for m in t.modules if m.base <= address < m.end), None)


def _image(module: DumpModule) -> str:
    """IMAGE_NAME: the module's file name (``crashme.exe``)."""
    return PureWindowsPath(module.path).name


def _hash(bucket: str) -> str:
    """A FAILURE_ID_HASH-shaped GUID derived from the bucket (the same bucket, the same hash)."""
    h = "".join(f"{zlib.crc32(f'{bucket}{i}'.encode()):08x}" for i in range(4))
    return f"{{{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}}}"


def _problem(code: int, params: list[int]) -> tuple[str, str | None]:
    """(the bucket's problem class, AV.Type): ``NULL_POINTER_READ`` for a read below 64 KiB
    (the null page range Windows never maps), ``INVALID_POINTER_WRITE`` above it, ..."""
    if code == 0xC0000005 and len(params) >= 2 and params[0] in _ACCESS_WORD:
        word = _ACCESS_WORD[params[0]]
        if word == "EXECUTE":
            return "BAD_INSTRUCTION_PTR", "Execute"
        kind = "NULL_POINTER" if params[1] < 0x10000 else "INVALID_POINTER"
        return f"{kind}_{word}", word.capitalize()
    if code == 0xC00000FD:
        return "STACK_OVERFLOW", None
    if code == 0xC0000409:
        return "FAIL_FAST_" + _FAST_FAIL.get(params[0] if params else -1, "UNKNOWN"), None
    if code == 0x80000003:
        return "BREAKPOINT", None
    return "APPLICATION_FAULT", None


def _os_facts(t: MinidumpTarget) -> list[tuple[str, str]]:
    """OS_VERSION, BUILDLAB_STR, OSPLATFORM_TYPE, OSNAME from the system info and build lab
    (``17763.1.x86fre.rs5_release.180914-1434``: version 10.0.17763.1, branch rs5_release)."""
    major, minor = t.version
    parts = t.build_string.split(".")
    revision = parts[1] if len(parts) > 3 and parts[0].isdigit() and parts[1].isdigit() else "0"
    facts = [("OS_VERSION", f"{major}.{minor}.{t.build}.{revision}")]
    if len(parts) > 3 and parts[0].isdigit():
        facts.append(("BUILDLAB_STR", parts[3]))
    os_name = t.os_name()
    facts += [("OSPLATFORM_TYPE", "x64" if t.x64 else "x86"), ("OSNAME", os_name)]
    return facts


def _key_values(pairs: list[tuple[str, str]]) -> str:
    body = "".join(f"    Key  : {k}\n    Value: {v}\n\n" for k, v in pairs)
    return f"KEY_VALUES_STRING: 1\n\n{body}\n"


def _stack_text(view: DumpContexts, ctx: Context, thread: int) -> str:
    """STACK_TEXT: the frames ``k`` walks from ``ctx`` on ``thread``'s stack, in the analysis'
    columns -- x86 ``ChildEBP RetAddr`` and three arguments (corpus analyze/10:
    ``0019f1d4 100aa414     06700ff8 0019fcd4 0019f30c FreeImaged!FreeImage_HasPixels+0x15``),
    x64 ``Child-SP RetAddr : four arguments : site`` (corpus analyze/02)."""
    t = view.t
    frames, _scanned = view.walk(ctx, t.threads[thread].stack)
    rows = []
    for f in frames:
        site = view.where(f.ip) or f"0x{f.ip:x}"
        cells = " ".join(t.addr(a or 0) for a in f.args)
        middle = f": {cells} :" if t.x64 else cells
        rows.append(f"{t.addr(f.child)} {t.addr(f.ret)}     {middle} {site}\n")
    return "".join(rows)


def analysis(t: MinidumpTarget, view: DumpContexts, thread: int) -> str:
    """``!analyze -v`` of the dump: its stored exception, or (none stored) the current thread."""
    if t.exception is None:
        return _without_exception(t, view, thread)
    r = t.exception.ExceptionRecord
    code = r.ExceptionCode_raw
    params = [int(p) for p in list(r.ExceptionInformation)[: r.NumberParameters]]
    fault = int(r.ExceptionAddress)
    event = t.event_index
    module = _module_at(t, fault)
    problem, av_type = _problem(code, params)
    if module is not None:
        offset = fault - module.base
        symbol, module_name, image = f"{module.name}+{offset:x}", module.name, _image(module)
    else:
        offset, symbol, module_name, image = 0, t.addr(fault), "Unknown_Module", "Unknown_Image"
    process = PureWindowsPath(t.image).name
    bucket = f"{problem}_{code:x}_{image}!Unknown"
    keys = [("AV.Type", av_type)] if av_type else []
    keys += [
        *_ANALYSIS_KEYS,
        ("Failure.Bucket", bucket),
        ("Failure.Exception.Code", f"{code:#x}"),
        ("Failure.Exception.IP.Address", f"{fault:#x}"),
        ("Failure.Exception.IP.Module", module_name),
        ("Failure.Exception.IP.Offset", f"{offset:#x}"),
        ("Failure.Hash", _hash(bucket)),
        ("Failure.ProblemClass.Primary", problem),
    ]
    exc = view.exception_context()
    context = ""
    stack = ""
    if exc is not None:
        # .ecxr's registers, then the analysis puts the thread's own scope back
        context = f"CONTEXT:  (.ecxr)\n{view.registers(exc)}Resetting default scope\n\n"
        stack = _stack_text(view, exc, event)
    lines = [
        _BANNER,
        _key_values(keys),
        f"FILE_IN_CAB:  {PureWindowsPath(t.path).name}\n\n",
        context,
        "EXCEPTION_RECORD:  (.exr -1)\n",
        t.exception_record(),
        "\n",
        f"FAULTING_THREAD:  {t.exception.ThreadId:x}\n\n",
        f"PROCESS_NAME:  {process}\n\n",
    ]
    if code == 0xC0000005 and len(params) >= 2 and params[0] in ACCESS:
        what = {0: "READ", 1: "WRITE", 8: "EXECUTE"}[params[0]]
        lines.append(f"{what}_ADDRESS:  {t.addr(params[1], tick=False)} \n\n")
    message = _MESSAGES.get(code, "<Unable to get error code text>")
    lines.append(f"ERROR_CODE: (NTSTATUS) {code:#x} - {message}\n\n")
    lines.append(f"EXCEPTION_CODE_STR:  {code:x}\n\n")
    lines += [f"EXCEPTION_PARAMETER{i + 1}:  {t.addr(p, tick=False)}\n\n" for i, p in enumerate(params[:4])]
    lines += [
        _trailer(t, stack, f"~{event}s; .ecxr ; kb", symbol, module_name, image, bucket),
    ]
    return "".join(lines)


def _trailer(t: MinidumpTarget, stack: str, stack_command: str, symbol: str, module_name: str, image: str,
             bucket: str) -> str:
    """The analysis from STACK_TEXT on: the same keys, in the same order, with or without an exception."""
    return "".join([
        "STACK_TEXT:  \n",
        stack,
        "\n\n",
        f"STACK_COMMAND: {stack_command}\n\n",
        f"SYMBOL_NAME:  {symbol}\n\n",
        f"MODULE_NAME: {module_name}\n\n",
        f"IMAGE_NAME:  {image}\n\n",
        f"FAILURE_BUCKET_ID:  {bucket}\n\n",
        *(f"{k}:  {v}\n\n" for k, v in _os_facts(t)),
        f"FAILURE_ID_HASH:  {_hash(bucket)}\n\n",
        "Followup:     MachineOwner\n---------\n\n",
    ])


def _without_exception(t: MinidumpTarget, view: DumpContexts, thread: int) -> str:
    """A dump written without an exception (a snapshot, not a crash): no exception record, no
    ERROR_CODE; the analysis names the current thread's stack and the module its pc is in.
    The layout is reconstructed from the exception case (no published analysis of such a dump),
    the bucket ``APPLICATION_FAULT_<image>!Unknown`` the generic user-mode class."""
    process = PureWindowsPath(t.image).name
    stack = ""
    symbol, module_name, image, offset = "Unknown", "Unknown_Module", "Unknown_Image", 0
    if thread < len(t.threads):
        ctx = view.current(thread)
        stack = _stack_text(view, ctx, thread)
        module = _module_at(t, ctx.ip)
        if module is not None:
            offset = ctx.ip - module.base
            symbol, module_name, image = f"{module.name}+{offset:x}", module.name, _image(module)
    bucket = f"APPLICATION_FAULT_{image}!Unknown"
    keys = [*_ANALYSIS_KEYS, ("Failure.Bucket", bucket), ("Failure.Hash", _hash(bucket))]
    return "".join(
        [
            _BANNER,
            _key_values(keys),
            f"FILE_IN_CAB:  {PureWindowsPath(t.path).name}\n\n",
            f"PROCESS_NAME:  {process}\n\n",
            _trailer(t, stack, f"~{thread}s; kb", symbol, module_name, image, bucket),
        ]
    )
