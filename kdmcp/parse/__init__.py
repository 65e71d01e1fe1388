"""Pure text-to-record parsing of kd/cdb output (no I/O).

``parse(command, output)`` turns what the debugger printed after one command into a typed
record (discriminated by ``kind``); ``parse_transcript(text)`` splits a console transcript
into prompt/command/output blocks and parses each. ``match_prompt`` recognises the
debugger's input prompt (used by the engine to detect completion).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kdmcp.parse.prompt import PROMPT_PATTERN, Prompt, match_prompt

if TYPE_CHECKING:
    from kdmcp.parse.dispatch import kind_of, parse, route
    from kdmcp.parse.models import (
        RECORD_KINDS,
        AnalysisRecord,
        Breakpoint,
        BreakpointsRecord,
        Bugcheck,
        Context,
        DataModelRecord,
        DebuggerError,
        DisassemblyRecord,
        ErrorCodeRecord,
        ErrorRecord,
        Event,
        EventsRecord,
        ExceptionInfo,
        ExceptionRecordRecord,
        ExpressionRecord,
        Frame,
        Instruction,
        LocalsRecord,
        MemoryRecord,
        MemoryRow,
        Module,
        ModulesRecord,
        ObjectRecord,
        ProcessesRecord,
        ProcessInfo,
        Record,
        RecordBase,
        RegistersRecord,
        StackRecord,
        SymbolLoadRecord,
        SymbolPathRecord,
        SymbolsRecord,
        TargetInfo,
        TargetRecord,
        TextRecord,
        ThreadInfo,
        ThreadsRecord,
        TypeDumpRecord,
    )
    from kdmcp.parse.transcript import Block, parse_transcript

# The engine and the simulator import kdmcp.parse.prompt / .command_list at start-up; the
# record models and ~150 patterns cost a quarter of a second to build, so everything but
# the prompt is imported on first use.
_LAZY: dict[str, str] = {
    "parse": "kdmcp.parse.dispatch",
    "kind_of": "kdmcp.parse.dispatch",
    "route": "kdmcp.parse.dispatch",
    "Block": "kdmcp.parse.transcript",
    "parse_transcript": "kdmcp.parse.transcript",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name, "kdmcp.parse.models" if name in __all__ else None)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "PROMPT_PATTERN",
    "RECORD_KINDS",
    "AnalysisRecord",
    "Block",
    "Breakpoint",
    "BreakpointsRecord",
    "Bugcheck",
    "Context",
    "DataModelRecord",
    "DebuggerError",
    "DisassemblyRecord",
    "ErrorCodeRecord",
    "ErrorRecord",
    "Event",
    "EventsRecord",
    "ExceptionInfo",
    "ExceptionRecordRecord",
    "ExpressionRecord",
    "Frame",
    "Instruction",
    "LocalsRecord",
    "MemoryRecord",
    "MemoryRow",
    "Module",
    "ModulesRecord",
    "ObjectRecord",
    "ProcessInfo",
    "ProcessesRecord",
    "Prompt",
    "Record",
    "RecordBase",
    "RegistersRecord",
    "StackRecord",
    "SymbolLoadRecord",
    "SymbolPathRecord",
    "SymbolsRecord",
    "TargetInfo",
    "TargetRecord",
    "TextRecord",
    "ThreadInfo",
    "ThreadsRecord",
    "TypeDumpRecord",
    "kind_of",
    "match_prompt",
    "parse",
    "parse_transcript",
    "route",
]
