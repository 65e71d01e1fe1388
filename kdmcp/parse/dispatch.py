"""The one door: ``parse(command, output) -> Record``.

The command names the family (``kb`` -> stack, ``lmvm nt`` -> modules, ``~*k`` -> stack
per thread...); the family parser reads the output; if it finds nothing, the output is
either the debugger's own error (``ErrorRecord``) or something we do not understand
(``TextRecord``). ``parse`` never raises and always keeps the output in ``raw``.
"""

from __future__ import annotations

import gc
import logging
import re
from collections.abc import Callable
from functools import partial
from typing import cast

from kdmcp.command.lexing import Selected, read_selectors
from kdmcp.parse import errors
from kdmcp.parse.analyze import parse_analysis, parse_bugcheck
from kdmcp.parse.breakpoints import parse_breakpoints
from kdmcp.parse.command_list import split_command_list
from kdmcp.parse.context_switch import parse_implicit
from kdmcp.parse.datamodel import parse_data_model
from kdmcp.parse.disasm import parse_disassembly
from kdmcp.parse.errorcode import parse_error_code
from kdmcp.parse.events import parse_events
from kdmcp.parse.exceptions import parse_exception_record
from kdmcp.parse.expressions import parse_expression
from kdmcp.parse.locals import parse_locals
from kdmcp.parse.memory import memory_command, parse_memory
from kdmcp.parse.models import DisassemblyRecord, EventsRecord, Record, RecordBase, TextRecord
from kdmcp.parse.modules import parse_modules
from kdmcp.parse.objects import OBJECT_EXTENSIONS, parse_object
from kdmcp.parse.processes import parse_processes
from kdmcp.parse.registers import finds as finds_registers
from kdmcp.parse.registers import parse_registers
from kdmcp.parse.stack import parse_stack
from kdmcp.parse.symbols import parse_symbol_load, parse_symbol_path, parse_symbols
from kdmcp.parse.target import parse_target
from kdmcp.parse.threads import parse_runaway, parse_running, parse_stacks, parse_threads
from kdmcp.parse.types import parse_type_dump

logger = logging.getLogger(__name__)

Parser = Callable[[str, str], RecordBase | None]


def _run_control(command: str, raw: str) -> RecordBase | None:
    """What a go/step/trace command printed: its events, or a ``registers`` record when the
    output is only the register display (no event line, no banner). ``0:000> pct`` printed
    just that (released set1 registers/n_03): a step that reached its end reports the context
    there, as ``r`` would, and nothing happened to make an event of."""
    record = parse_events(command, raw)
    if (
        isinstance(record, EventsRecord)
        and not record.events
        and record.target is None
        and record.context is not None
        and record.context.registers
    ):
        return parse_registers(command, raw) or record
    return record


# Families chosen by the head of the command. Order matters only where heads overlap
# (kd = memory, not stack; dt/dv/dx before the d* memory table).
_ROUTES: tuple[tuple[re.Pattern[str], Parser], ...] = (
    # k, kb, kv, kn, kp, kP, kc, kL, knL, kbn, "k = ...", "kb 100"   (kd is a memory dump)
    (re.compile(r"^k(?!d\b)[a-zA-Z]*(?=[\s=\d]|$)"), parse_stack),
    # r, r rip, r $t0, rM 0x04, rX, rF
    (re.compile(r"^r[MXFLQ]?(?=\s|$)"), parse_registers),
    (re.compile(r"^\.(?:trap|cxr|ecxr)\b", re.IGNORECASE), parse_registers),
    # go / step / trace, and commands that resume or restart the target
    (
        re.compile(
            r"^(?:[pt][acthr]?|pct|tct|tb|wt|g[hnNuc]?)(?=[\s;]|$)|^\.(?:breakin|reboot|restart|attach|create|detach)\b"
        ),
        _run_control,
    ),
    (re.compile(r"^lm", re.IGNORECASE), parse_modules),
    (re.compile(r"^!process\b", re.IGNORECASE), parse_processes),
    (re.compile(r"^!(?:thread|ready)\b", re.IGNORECASE), parse_threads),
    (re.compile(r"^!running\b", re.IGNORECASE), parse_running),
    (re.compile(r"^!runaway\b", re.IGNORECASE), parse_runaway),
    (re.compile(r"^!stacks\b", re.IGNORECASE), parse_stacks),
    (re.compile(r"^!analyze\b", re.IGNORECASE), parse_analysis),
    (re.compile(r"^\.bugcheck\b", re.IGNORECASE), parse_bugcheck),
    # "dt_IO_STACK_LOCATION addr": kd reads a type name glued to dt (issue 29's parser sample)
    (re.compile(r"^dt(?=[\s/_-]|$)"), parse_type_dump),
    (re.compile(r"^dv(?=[\s/-]|$)"), parse_locals),
    (re.compile(r"^dx(?=[\s/-]|$)"), parse_data_model),
    (re.compile(r"^u[bf]?(?=[\s.]|$)"), parse_disassembly),
    (re.compile(r"^(?:bl|bp|bu|bm|ba|bc|bd|be|bs|bsc)(?=[\s\d\[]|$)"), parse_breakpoints),
    (re.compile(r"^(?:vertarget|version|\.time)\b", re.IGNORECASE), parse_target),
    (re.compile(r"^\.(?:exr|lastevent|jdinfo)\b", re.IGNORECASE), parse_exception_record),
    (re.compile(r"^!(?:error|gle)\b", re.IGNORECASE), parse_error_code),
    (re.compile(r"^\?|^\.formats\b", re.IGNORECASE), parse_expression),
    (re.compile(r"^(?:x|ln)(?=\s|$)"), parse_symbols),
    # .srcpath/.srcfix/.lsrcpath/.exepath answer like .sympath ("Source search path is: ...")
    (re.compile(r"^\.(?:sym(?:path|fix)|l?src(?:path|fix)|exepath)\b", re.IGNORECASE), parse_symbol_path),
    (re.compile(r"^\.(?:process|thread)\b", re.IGNORECASE), parse_implicit),
    (re.compile(r"^(?:\.reload|ld)(?=\s|$)", re.IGNORECASE), parse_symbol_load),
)

# "!ext.name" / "!name": object extensions.
_EXTENSION_RE = re.compile(r"^!(?:\w+\.)?(?P<name>\w+)")


# Section keys and header lines that only !analyze prints: output pasted without its prompt
# line is still recognised as an analysis.
_ANALYSIS_MARKERS = (
    "FAILURE_BUCKET_ID:",
    "STACK_TEXT:",
    "Bugcheck Analysis",
    "Exception Analysis",
    "FAULTING_IP:",
    "Unknown bugcheck code (",
)


# A stack's column header at the top of pasted output ("ChildEBP RetAddr  Args to Child",
# " # Child-SP          RetAddr           Call Site"): a k* listing pasted without its prompt,
# as a crash report quotes one (released set1 stack/n_09, a prompt-less x86 kb block).
_STACK_HEADER_RE = re.compile(r"^\s*(?:#\s+)?(?:ChildEBP|Child-SP)\s+RetAddr\b")


def _parse_unprompted(command: str, raw: str) -> RecordBase | None:
    """Output with no command: an analysis pasted without its prompt, else events.

    A dump open or a connect to a crashed target ends with the short analysis kd runs on
    its own (``BugCheck D5, {...}`` / ``Probably caused by : ...`` / ``Followup:``). That
    block is a session log: when the debugger reported events or target facts before the
    analysis and the analysis is only that short form, the events reading keeps them, and
    it reads the ``BugCheck`` line as a bugcheck event. A full analysis stays an analysis.
    """
    head = raw[:2048].lstrip("\n").split("\n", 1)[0]
    if _STACK_HEADER_RE.match(head):
        stack = parse_stack(command, raw)
        if stack is not None:
            return stack
    starts = [i for i in (raw.find(marker) for marker in _ANALYSIS_MARKERS) if i >= 0]
    if starts:
        record = parse_analysis(command, raw)
        if record is not None:
            before = raw[: raw.rfind("\n", 0, min(starts)) + 1]
            short_form = record.fields.keys() <= {"Followup"}
            if not (short_form and parse_events(command, before) is not None):
                return record
    return _run_control(command, raw)


def route(command: str) -> Parser | None:
    """The family parser for ``command`` (``None``: no family, the output is text or an error).

    For a command list (``r; k``) the first command chooses: kd prints the outputs one
    after the other and the first one leads.
    """
    cmd = command.strip()
    if ";" in cmd:
        commands = split_command_list(cmd)
        cmd = commands[0] if commands else ""
    if not cmd:
        return _parse_unprompted
    if cmd[0] in "~|":
        return _route_selected(read_selectors(cmd))
    if (cmd[0] == "d" or cmd.startswith(("kd", "!d"))) and memory_command(cmd) is not None:
        return parse_memory
    for pattern, parser in _ROUTES:
        if pattern.match(cmd):
            return parser
    m = _EXTENSION_RE.match(cmd)
    if m is not None and m.group("name").lower() in OBJECT_EXTENSIONS:
        return parse_object
    return None


def _route_selected(selected: Selected) -> Parser | None:
    """The family for a command behind selectors, read by the one command reader.

    kd reads ``~ 3 k``, ``~~[1a4] kb``, ``|~[1a4] lm`` and ``|1 ~2 k`` as the command after
    the prefixes, run for the selected thread (a processor, in kernel mode), process or
    system ("Thread Syntax", "Process Syntax", "System Syntax"); the policy, the engine and
    the simulator read them through :func:`kdmcp.command.lexing.read_selectors`, and so does
    the parser, so a line routes by the command the others saw. Only what a selector does
    on its own is decided here, by the last prefix: nothing after it lists the threads or
    processes, ``s`` switches to one.
    """
    rest = selected.command.strip()
    last = selected.selectors[-1]
    if selected.executes:
        # "~Thread e CommandString": the command string is whole commands, routed as a line
        # (one with no command in it, "~*e" or "~*e ;", runs nothing: no family).
        sub = route(rest) if split_command_list(rest) else None
    elif not rest:
        return parse_threads if last.kind == "thread" else parse_processes
    elif rest == "s" or rest.startswith("s "):
        # "~s": the thread (processor) switched to prints its context; "|s"/"||s" print events.
        return parse_registers if last.kind == "thread" else parse_events
    elif last.kind == "thread" and len(rest) == 1 and rest in "fumn":
        return None  # ~f/~u/~n/~m: freeze, unfreeze, suspend, resume: no output worth a record
    else:
        sub = route(rest)
    if sub is parse_stack:
        # "~*k": a stack per thread ("~*", "All threads in the process"), headed by each thread.
        threads = [s for s in selected.selectors if s.kind == "thread"]
        return partial(parse_stack, per_thread=bool(threads) and threads[-1].id == "*")
    return sub


# Above this size the cyclic garbage collector is paused while parsing: a large capture
# allocates hundreds of thousands of short-lived dicts and strings (none cyclic), and the
# collector's repeated passes over them cost 30-40% of the parse time. The previous state
# is restored afterwards (a caller that disabled GC itself keeps it disabled).
_GC_PAUSE_THRESHOLD = 256 * 1024


def parse(command: str, output: str) -> Record:
    """Parse ``output`` (what the debugger printed after ``command``, up to the next prompt).

    Returns a typed record whose ``raw`` is ``output`` unchanged. Never raises: an
    unexpected failure inside a family parser yields a ``TextRecord`` with a warning.
    """
    pause = len(output) > _GC_PAUSE_THRESHOLD and gc.isenabled()
    if pause:
        gc.disable()
    try:
        return _parse(command, output)
    except Exception as exc:  # the contract is "never an exception, never a lost byte"
        logger.debug("parser failed for %r", command, exc_info=True)
        return TextRecord.model_construct(
            kind="text", command=command, raw=output, warnings=[f"parser error: {type(exc).__name__}"]
        )
    finally:
        if pause:
            gc.enable()


# Family parsers that can say cheaply, and exactly, whether they will return a record (and so of
# which kind it is) without building it: ``kind_of``'s shortcut.
_FINDS: dict[Parser, tuple[str, Callable[[str], bool]]] = {parse_registers: ("registers", finds_registers)}


def kind_of(command: str, output: str) -> str:
    """``parse(command, output).kind``, cheaply where the family parser can tell (``_FINDS``): for a
    caller that needs only the kind (kd_command's text says ``unparsed`` for ``text``, and no
    more of the record). Anything else is parsed."""
    parser = route(command.strip())
    found = _FINDS.get(parser) if parser is not None else None
    if found is not None and found[1](output):
        return found[0]
    return parse(command, output).kind


def _parse(command: str, output: str) -> Record:
    cmd = command.strip()
    diags = errors.scan(output)
    parser = route(cmd)
    record = parser(cmd, output) if parser is not None else None
    if record is None:
        err = errors.error_record(cmd, output, diags)
        if err is not None:
            return err
        return TextRecord(command=cmd, raw=output)
    if isinstance(record, DisassemblyRecord) and all(i.mnemonic == "???" for i in record.instructions):
        # "92c915cd ??  ???" then "^ Memory access error in 'u win32k!NtUserSendInput'": u read
        # nothing, and said why (released set1 exceptions_errors/n_04); the error is the answer
        err = errors.error_record(cmd, output, diags)
        if err is not None:
            return err
    if diags:  # the family parser's own warnings (lines only it knows are complaints) stay
        scanned = errors.warnings_of(diags)
        seen = set(scanned)
        record.warnings = scanned + [w for w in record.warnings if w not in seen]
    return cast("Record", record)
