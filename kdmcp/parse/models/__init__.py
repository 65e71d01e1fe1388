"""Typed records: what a piece of kd/cdb output *says*, as pydantic models.

The models live in one module per family (``tasks``: stacks, threads, processes; ``data``:
registers, memory, code, types, values; ``images``: modules and symbols; ``objects``: object
extensions; ``diagnosis``: analysis, exceptions, errors; ``session``: breakpoints, target,
events), on the shared ``parts`` and ``base``; this module joins them into the ``Record`` union
the server publishes, and re-exports every model.

Every record carries ``kind`` (the discriminator of the ``Record`` union), the ``command``
it answers, the exact ``raw`` text it was parsed from (nothing is ever dropped) and
``warnings`` (symbol noise and debugger complaints that did not stop the command).

Conventions shared by all records, so callers never guess:

- addresses are strings ``"0x..."``: backtick removed, lower case, digits as printed
  (``00000000`7777cb60`` -> ``"0x000000007777cb60"``);
- offsets inside symbols are canonical hex (``+0x0000010d`` -> ``"0x10d"``);
- data values (memory cells, register contents in ``raw_values``) stay as printed, minus
  backticks, because ``??`` (unreadable) must survive;
- a field the output did not print is ``None`` (or an empty list/dict), never a guess.
"""

from __future__ import annotations

from typing import Annotated, Union, get_args

from pydantic import Field

from kdmcp.parse.models.base import (
    RecordBase,
    StrictModel,
    TextRecord,
)
from kdmcp.parse.models.data import (
    DataModelEntry,
    DataModelRecord,
    DisassemblyRecord,
    ExpressionRecord,
    ListedType,
    LocalsRecord,
    LocalVariable,
    MemoryRecord,
    MemoryRow,
    RegistersRecord,
    TypeDumpRecord,
    TypeField,
    TypeListEntry,
)
from kdmcp.parse.models.diagnosis import (
    AnalysisRecord,
    Bugcheck,
    DebuggerError,
    ErrorCodeRecord,
    ErrorRecord,
    ExceptionRecordRecord,
)
from kdmcp.parse.models.images import (
    Module,
    ModulesRecord,
    SymbolInfo,
    SymbolLoadRecord,
    SymbolPathRecord,
    SymbolsRecord,
    UnloadedModule,
)
from kdmcp.parse.models.objects import (
    CriticalSection,
    DeviceStackEntry,
    DirectoryEntry,
    DispatchRoutine,
    DpcQueueEntry,
    HandleEntry,
    HandleTypeCount,
    HeapEntry,
    HeapPageBlock,
    HeapSizeStat,
    HeapSummary,
    IrpStackLocation,
    LockThread,
    ObjectRecord,
    PageFile,
    PoolBlock,
    PoolTagUsage,
    PteLevel,
    ResourceLock,
)
from kdmcp.parse.models.parts import (
    Context,
    ExceptionInfo,
    Frame,
    Instruction,
    MemoryReference,
    TargetInfo,
)
from kdmcp.parse.models.session import (
    Breakpoint,
    BreakpointsRecord,
    Event,
    EventsRecord,
    TargetRecord,
)
from kdmcp.parse.models.tasks import (
    ProcessesRecord,
    ProcessInfo,
    StackRecord,
    ThreadInfo,
    ThreadsRecord,
    ThreadStack,
    WaitObject,
)

Record = Annotated[
    Union[  # noqa: UP007 - a discriminated union reads best spelled out
        StackRecord,
        RegistersRecord,
        ModulesRecord,
        ProcessesRecord,
        ThreadsRecord,
        AnalysisRecord,
        MemoryRecord,
        DisassemblyRecord,
        BreakpointsRecord,
        TargetRecord,
        TypeDumpRecord,
        ObjectRecord,
        ExceptionRecordRecord,
        ErrorCodeRecord,
        ErrorRecord,
        TextRecord,
        EventsRecord,
        ExpressionRecord,
        SymbolsRecord,
        SymbolPathRecord,
        SymbolLoadRecord,
        LocalsRecord,
        DataModelRecord,
    ],
    Field(discriminator="kind"),
]
"""Any record ``parse`` returns, discriminated by ``kind``."""

# the kinds, in the union's order: read from the union, so the two cannot disagree
RECORD_KINDS: tuple[str, ...] = tuple(model.model_fields["kind"].default for model in get_args(get_args(Record)[0]))

__all__ = [
    "RECORD_KINDS",
    "AnalysisRecord",
    "Breakpoint",
    "BreakpointsRecord",
    "Bugcheck",
    "Context",
    "CriticalSection",
    "DataModelEntry",
    "DataModelRecord",
    "DebuggerError",
    "DeviceStackEntry",
    "DirectoryEntry",
    "DisassemblyRecord",
    "DispatchRoutine",
    "DpcQueueEntry",
    "ErrorCodeRecord",
    "ErrorRecord",
    "Event",
    "EventsRecord",
    "ExceptionInfo",
    "ExceptionRecordRecord",
    "ExpressionRecord",
    "Frame",
    "HandleEntry",
    "HandleTypeCount",
    "HeapEntry",
    "HeapPageBlock",
    "HeapSizeStat",
    "HeapSummary",
    "Instruction",
    "IrpStackLocation",
    "ListedType",
    "LocalVariable",
    "LocalsRecord",
    "LockThread",
    "MemoryRecord",
    "MemoryReference",
    "MemoryRow",
    "Module",
    "ModulesRecord",
    "ObjectRecord",
    "PageFile",
    "PoolBlock",
    "PoolTagUsage",
    "ProcessInfo",
    "ProcessesRecord",
    "PteLevel",
    "Record",
    "RecordBase",
    "RegistersRecord",
    "ResourceLock",
    "StackRecord",
    "StrictModel",
    "SymbolInfo",
    "SymbolLoadRecord",
    "SymbolPathRecord",
    "SymbolsRecord",
    "TargetInfo",
    "TargetRecord",
    "TextRecord",
    "ThreadInfo",
    "ThreadStack",
    "ThreadsRecord",
    "TypeDumpRecord",
    "TypeField",
    "TypeListEntry",
    "UnloadedModule",
    "WaitObject",
]
