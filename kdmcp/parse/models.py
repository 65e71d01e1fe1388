"""Typed records: what a piece of kd/cdb output *says*, as pydantic models.

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

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    """Base for every model here: unknown fields are a bug, not data."""

    model_config = ConfigDict(extra="forbid")


class RecordBase(_Model):
    """Fields every record has."""

    command: str = ""
    raw: str
    warnings: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- shared parts


class Frame(_Model):
    """One stack frame, as ``k*``, ``!thread``, ``STACK_TEXT`` or ``!heap -p -a`` print it."""

    index: int | None = None
    child_sp: str | None = None
    child_ebp: str | None = None
    return_address: str | None = None
    # Tuples, not lists: frames are by far the most numerous record part, and an immutable
    # default spares pydantic a factory call per frame (~25% of a large stack's validation).
    args: tuple[str, ...] = ()
    call_site: str = ""
    module: str | None = None
    function: str | None = None
    offset: str | None = None
    address: str | None = None  # call site that is a bare address ("0x00007ff8`f16ece54")
    source_file: str | None = None
    source_line: int | None = None
    inline: bool = False
    trap_frame: str | None = None  # "(TrapFrame @ ffffd48f`77af9e40)"
    annotations: tuple[str, ...] = ()  # "(FPO: [Non-Fpo])", "(CONV: cdecl)"


class MemoryReference(_Model):
    """The effective-address note kd appends to the current instruction (``ds:...=????``)."""

    segment: str | None = None
    selector: str | None = None
    address: str
    value: str


class Instruction(_Model):
    """One disassembled instruction (``u``, ``uf``, current instruction after ``r``)."""

    address: str
    segment: str | None = None  # "0033" in "0033:00007ffe`eeed19b6"
    bytes: str = ""
    mnemonic: str = ""
    operands: str = ""
    symbol: str | None = None  # the label line it falls under ("nt!Foo+0x9")
    source_file: str | None = None
    source_line: int | None = None  # from the label's "[file @ line]"
    line_number: int | None = None  # uf's leading source-line column
    target: str | None = None  # "(fffff802`40d32306)" branch/reference target
    memory_reference: MemoryReference | None = None


class Context(_Model):
    """A register context: ``r`` output, a trap frame, a context record."""

    registers: dict[str, str] = Field(default_factory=dict)
    raw_values: dict[str, str] = Field(default_factory=dict)  # st0, xmm0, fpcw...: not plain hex
    flags: list[str] = Field(default_factory=list)
    segments: dict[str, str] = Field(default_factory=dict)
    symbol: str | None = None
    address: str | None = None
    bytes: str | None = None
    mnemonic: str | None = None
    operands: str | None = None
    memory_reference: MemoryReference | None = None
    notes: list[str] = Field(default_factory=list)  # "Last set context:", trap-frame NOTE lines


class ExceptionInfo(_Model):
    """An exception as ``.exr`` (or ``EXCEPTION_RECORD`` / an event line) describes it."""

    code: str | None = None
    address: str | None = None
    description: str | None = None
    symbol: str | None = None
    flags: str | None = None
    parameters: list[str] = Field(default_factory=list)
    access: str | None = None  # "read" / "write" / "execute" from "Attempt to read from..."
    access_address: str | None = None
    first_chance: bool | None = None


class TargetInfo(_Model):
    """What ``vertarget`` / ``version`` / ``.time`` / a connect banner say about the target."""

    os: str | None = None
    version_line: str | None = None
    build: int | None = None
    service_pack: str | None = None
    kernel: bool | None = None
    multiprocessor: bool | None = None
    processors: int | None = None
    build_type: str | None = None  # "Free" / "Checked"
    arch: str | None = None
    product: str | None = None
    suite: str | None = None
    build_lab: str | None = None
    machine_name: str | None = None
    kernel_base: str | None = None
    loaded_module_list: str | None = None
    debug_session_time: str | None = None
    uptime: str | None = None
    uptime_seconds: float | None = None
    process_uptime: str | None = None
    kernel_time: str | None = None
    user_time: str | None = None
    debugger_version: str | None = None
    details: dict[str, str] = Field(default_factory=dict)


# --------------------------------------------------------------------------- stack


class ThreadStack(_Model):
    """One thread's section of ``~*k``: the thread header line and its frames."""

    index: int | None = None
    id: str | None = None
    process_id: str | None = None
    thread_id: str | None = None
    teb: str | None = None
    current: bool = False
    header: str = ""
    frames: list[Frame] = Field(default_factory=list)


class StackRecord(RecordBase):
    """``k`` and friends. ``~*k`` fills ``threads`` (one per thread) and leaves ``frames`` empty."""

    kind: Literal["stack"] = "stack"
    frames: list[Frame] = Field(default_factory=list)
    threads: list[ThreadStack] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # "*** Stack trace for last set context ..."


# --------------------------------------------------------------------------- registers


class RegistersRecord(RecordBase, Context):
    """``r``, ``r rip``, ``rM``, ``.trap``/``.cxr``, ``~Ns``: a context and current instruction."""

    kind: Literal["registers"] = "registers"


# --------------------------------------------------------------------------- modules


class Module(_Model):
    """One ``lm`` row, plus the verbose block ``lmv`` prints under it."""

    start: str
    end: str
    name: str
    symbol_status: str | None = None  # "deferred", "pdb symbols", "export symbols", "no symbols"...
    symbol_file: str | None = None
    marker: str | None = None  # "T" (timestamp mismatch), "C" (checksum mismatch), "M"...
    image_path: str | None = None
    image_name: str | None = None
    loaded_image_file: str | None = None
    timestamp: str | None = None
    checksum: str | None = None
    image_size: str | None = None
    file_version: str | None = None
    product_version: str | None = None
    company_name: str | None = None
    file_description: str | None = None
    details: dict[str, str] = Field(default_factory=dict)


class UnloadedModule(_Model):
    """A row of the ``Unloaded modules:`` section."""

    start: str
    end: str
    name: str


class ModulesRecord(RecordBase):
    """``lm`` in all its spellings (``lm k``, ``lmv``, ``lmDvm X``, ``lm m pat``...)."""

    kind: Literal["modules"] = "modules"
    modules: list[Module] = Field(default_factory=list)
    unloaded: list[UnloadedModule] = Field(default_factory=list)


# --------------------------------------------------------------------------- threads / processes


class WaitObject(_Model):
    """An object a kernel thread waits on (the lines under a ``THREAD ... WAIT`` header)."""

    address: str
    type: str


class ThreadInfo(_Model):
    """A thread as ``~``, ``!thread``, ``!process``, ``!running``, ``!runaway`` or ``!stacks`` shows it.

    Fields a given command does not print stay ``None``.
    """

    index: int | None = None
    id: str | None = None  # user mode "7a0.5ac" / kernel "Cid 1e90.1e94" -> "1e90.1e94"
    cid: str | None = None
    process_id: str | None = None
    thread_id: str | None = None
    address: str | None = None  # ETHREAD
    teb: str | None = None
    win32_thread: str | None = None
    state: str | None = None  # "WAIT", "RUNNING", "READY", "Unfrozen", "Blocked"...
    wait_reason: str | None = None
    wait_mode: str | None = None
    alertable: bool | None = None
    processor: int | None = None
    suspend_count: int | None = None
    frozen: bool | None = None
    current: bool = False
    event_thread: bool = False  # '#' marker: the thread that caused the last event
    name: str | None = None
    start_symbol: str | None = None
    start_address: str | None = None
    priority: int | None = None
    base_priority: int | None = None
    priority_class: int | None = None
    affinity: str | None = None
    owning_process: str | None = None
    image: str | None = None
    prcb: str | None = None
    next_thread: str | None = None
    user_time: str | None = None
    kernel_time: str | None = None
    elapsed_time: str | None = None
    wait_objects: list[WaitObject] = Field(default_factory=list)
    details: dict[str, str] = Field(default_factory=dict)
    frames: list[Frame] = Field(default_factory=list)


class ThreadsRecord(RecordBase):
    """``~``, ``~*``, ``~N``, ``!thread``, ``!running``, ``!runaway``, ``!stacks``."""

    kind: Literal["threads"] = "threads"
    threads: list[ThreadInfo] = Field(default_factory=list)
    fields: dict[str, str] = Field(default_factory=dict)


class ProcessInfo(_Model):
    """A process block of ``!process`` (kernel) or a row of ``|`` (user mode)."""

    index: int | None = None
    address: str | None = None  # EPROCESS
    session_id: str | None = None
    cid: str | None = None
    peb: str | None = None
    parent_cid: str | None = None
    dir_base: str | None = None
    object_table: str | None = None
    handle_count: int | None = None
    table_size: int | None = None  # NT4/2000 spelling of the handle count
    image: str | None = None
    current: bool = False
    event_process: bool = False
    details: dict[str, str] = Field(default_factory=dict)
    threads: list[ThreadInfo] = Field(default_factory=list)


class ProcessesRecord(RecordBase):
    """``!process`` with any flags, and user-mode ``|``."""

    kind: Literal["processes"] = "processes"
    processes: list[ProcessInfo] = Field(default_factory=list)


# --------------------------------------------------------------------------- analysis


class Bugcheck(_Model):
    """The bugcheck ``!analyze`` names: ``DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)`` and Arg1..Arg4."""

    code: str | None = None
    name: str | None = None
    args: list[str] = Field(default_factory=list)
    arg_descriptions: list[str] = Field(default_factory=list)
    description: str | None = None


class AnalysisRecord(RecordBase):
    """``!analyze -v``, kernel and user mode, pre-2019 and current layouts."""

    kind: Literal["analysis"] = "analysis"
    mode: Literal["kernel", "user"] | None = None
    bugcheck: Bugcheck | None = None
    exception: ExceptionInfo | None = None
    module_name: str | None = None
    image_name: str | None = None
    symbol_name: str | None = None
    process_name: str | None = None
    failure_bucket_id: str | None = None
    failure_id_hash: str | None = None
    faulting_ip: Instruction | None = None
    followup_ip: Instruction | None = None
    faulting_source_file: str | None = None
    faulting_source_line: int | None = None
    stack_command: str | None = None
    stack: list[Frame] = Field(default_factory=list)
    trap_frame: Context | None = None
    key_values: dict[str, str] = Field(default_factory=dict)
    fields: dict[str, str] = Field(default_factory=dict)


# --------------------------------------------------------------------------- memory


class MemoryRow(_Model):
    """One line of a ``d*`` dump."""

    address: str
    segment: str | None = None  # "003b" in "003b:00000030"
    values: list[str] = Field(default_factory=list)
    ascii: str | None = None  # db / dc / dW character column
    text: str | None = None  # da / du string
    symbols: list[str | None] = Field(default_factory=list)  # dps / dqs / dds, aligned with values


class MemoryRecord(RecordBase):
    """``db dw dd dq dp dps dqs dds da du dc dl`` and friends."""

    kind: Literal["memory"] = "memory"
    unit: str = "unknown"  # byte word dword qword pointer ascii unicode float double binary
    rows: list[MemoryRow] = Field(default_factory=list)


# --------------------------------------------------------------------------- disassembly


class DisassemblyRecord(RecordBase):
    """``u``, ``ub``, ``uf``."""

    kind: Literal["disassembly"] = "disassembly"
    instructions: list[Instruction] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- breakpoints


class Breakpoint(_Model):
    """One ``bl`` row."""

    id: int
    enabled: bool
    unresolved: bool = False
    address: str | None = None
    access: str | None = None  # ba: "e" / "r" / "w" / "i"
    size: int | None = None
    pass_count: int | None = None
    initial_pass_count: int | None = None
    thread: str | None = None  # "0:****" (process:thread filter in user mode)
    symbol: str | None = None
    command: str | None = None


class BreakpointsRecord(RecordBase):
    """``bl`` (and the few ``bp``/``bm`` outputs that list what they set)."""

    kind: Literal["breakpoints"] = "breakpoints"
    breakpoints: list[Breakpoint] = Field(default_factory=list)


# --------------------------------------------------------------------------- target


class TargetRecord(RecordBase, TargetInfo):
    """``vertarget``, ``version``, ``.time``."""

    kind: Literal["target"] = "target"


# --------------------------------------------------------------------------- dt


class TypeField(_Model):
    """One ``+0x010 Name : value`` line of ``dt``."""

    offset: str
    name: str
    value: str | None = None  # instance dump ("dt type address")
    type: str | None = None  # layout dump, or the type printed after a pointer value
    depth: int = 0  # nesting under -r
    bitfield: bool = False


class TypeDumpRecord(RecordBase):
    """``dt``: a type layout or an instance."""

    kind: Literal["type_dump"] = "type_dump"
    type_name: str | None = None
    instance: bool = False
    preview: str | None = None  # the string line dt prints under _UNICODE_STRING
    fields: list[TypeField] = Field(default_factory=list)


# --------------------------------------------------------------------------- kernel objects


class IrpStackLocation(_Model):
    """One ``[major,minor]`` location of ``!irp``."""

    current: bool = False
    major: str
    minor: str
    flags: str | None = None
    control: str | None = None
    device: str | None = None
    file: str | None = None
    completion_routine: str | None = None
    context: str | None = None
    invoke_on: list[str] = Field(default_factory=list)  # Success Error Cancel
    pending: bool = False
    driver: str | None = None
    completion_symbol: str | None = None
    args: list[str] = Field(default_factory=list)


class DispatchRoutine(_Model):
    """One ``[00] IRP_MJ_CREATE  addr  symbol`` row of ``!drvobj ... 2``."""

    index: int
    name: str
    address: str
    symbol: str | None = None


class DeviceStackEntry(_Model):
    """One row of ``!devstack``."""

    current: bool = False
    device: str
    driver: str
    extension: str | None = None
    name: str | None = None


class DirectoryEntry(_Model):
    """One object of an ``!object`` directory listing."""

    hash: str | None = None
    address: str
    type: str
    name: str


class PoolBlock(_Model):
    """One block line of ``!pool`` / ``!poolfind``."""

    address: str
    size: str
    previous_size: str
    state: str  # "Allocated" / "Free"
    tag: str | None = None
    contains_address: bool = False  # '*' marker: the block holding the queried address


class PteLevel(_Model):
    """One paging level of ``!pte`` (PXE, PPE, PDE, PTE)."""

    level: str
    address: str
    contains: str | None = None
    pfn: str | None = None
    flags: str | None = None


class ObjectRecord(RecordBase):
    """Kernel/user object extensions: ``!irp !drvobj !devobj !devstack !object !pool !pte``
    and the key/value ones (``!teb !peb !pcr !address !irql !apic !vm !locks !handle !heap``).

    ``object_type`` names which; scalar facts are in ``fields``, tables in the typed lists
    or, for the rarer extensions, in ``entries``.
    """

    kind: Literal["object"] = "object"
    object_type: str
    address: str | None = None
    name: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    entries: list[dict[str, str]] = Field(default_factory=list)
    irp_stack: list[IrpStackLocation] = Field(default_factory=list)
    dispatch_routines: list[DispatchRoutine] = Field(default_factory=list)
    devices: list[DeviceStackEntry] = Field(default_factory=list)
    directory: list[DirectoryEntry] = Field(default_factory=list)
    pool_blocks: list[PoolBlock] = Field(default_factory=list)
    pte_levels: list[PteLevel] = Field(default_factory=list)
    frames: list[Frame] = Field(default_factory=list)


# --------------------------------------------------------------------------- exceptions, errors


class ExceptionRecordRecord(RecordBase, ExceptionInfo):
    """``.exr``, ``.lastevent``, ``.jdinfo`` (which adds a context)."""

    kind: Literal["exception_record"] = "exception_record"
    thread: str | None = None
    context: Context | None = None


class ErrorCodeRecord(RecordBase):
    """``!error``: ``Error code: (Win32) 0x2 (2) - The system cannot find the file specified.``;
    ``!gle``: ``LastErrorValue: (Win32) 0x2 (2) - ...`` and ``LastStatusValue: (NTSTATUS) ...``."""

    kind: Literal["error_code"] = "error_code"
    code: str | None = None
    decimal: int | None = None
    facility: str | None = None  # "Win32", "NTSTATUS", "HRESULT"
    message: str | None = None
    # !gle prints the thread's last Win32 error (the fields above) and its last NTSTATUS
    last_status: str | None = None
    last_status_message: str | None = None


class DebuggerError(_Model):
    """One complaint line of the debugger, classified."""

    category: str
    message: str
    line: str
    noise: bool = False  # symbol/unwind chatter that accompanies successful output


class ErrorRecord(RecordBase):
    """The command failed: the debugger printed only its own error text.

    ``category`` is what a caller acts on: ``syntax``, ``memory_access``, ``bad_register``,
    ``unresolved_symbol``, ``no_export``, ``symbol_load``, ``not_supported``,
    ``extension_load``, ``no_target``, ``context``, ``invalid_argument``, ``script``,
    ``file``.
    """

    kind: Literal["error"] = "error"
    category: str
    message: str
    errors: list[DebuggerError] = Field(default_factory=list)


class TextRecord(RecordBase):
    """Output no parser understood. Kept whole in ``raw``; never an exception."""

    kind: Literal["text"] = "text"


# --------------------------------------------------------------------------- events


class Event(_Model):
    """Something the debugger reported on its own: a connect banner line, a module load,
    an exception, a breakpoint hit, a bugcheck, a verifier stop..."""

    kind: str
    text: str
    code: str | None = None
    description: str | None = None
    first_chance: bool | None = None
    process_id: str | None = None
    thread_id: str | None = None
    breakpoint_id: int | None = None
    start: str | None = None
    end: str | None = None
    name: str | None = None
    details: dict[str, str] = Field(default_factory=dict)


class EventsRecord(RecordBase):
    """Output of go/step commands, ``.breakin``, and the banner before the first prompt."""

    kind: Literal["events"] = "events"
    events: list[Event] = Field(default_factory=list)
    target: TargetInfo | None = None
    context: Context | None = None


# --------------------------------------------------------------------------- smaller families


class ExpressionRecord(RecordBase):
    """``? expr`` (``Evaluate expression: 0 = 00000000``), ``??`` and ``.formats``."""

    kind: Literal["expression"] = "expression"
    value: str | None = None
    decimal: int | None = None
    fields: dict[str, str] = Field(default_factory=dict)


class SymbolInfo(_Model):
    """One ``x`` result or ``ln`` neighbour."""

    address: str | None = None
    name: str
    module: str | None = None
    symbol: str | None = None
    signature: str | None = None
    exact: bool | None = None


class SymbolsRecord(RecordBase):
    """``x`` and ``ln``."""

    kind: Literal["symbols"] = "symbols"
    symbols: list[SymbolInfo] = Field(default_factory=list)


class SymbolPathRecord(RecordBase):
    """``.sympath`` / ``.symfix``: the path and its validation summary."""

    kind: Literal["symbol_path"] = "symbol_path"
    path: str | None = None
    expanded_path: str | None = None
    validation: list[dict[str, str]] = Field(default_factory=list)


class SymbolLoadRecord(RecordBase):
    """``.reload`` and ``ld``: which modules were (re)loaded and the progress printed."""

    kind: Literal["symbol_load"] = "symbol_load"
    modules: list[str] = Field(default_factory=list)
    messages: list[str] = Field(default_factory=list)
    progress_dots: int = 0


class LocalVariable(_Model):
    """One ``dv`` line."""

    name: str
    value: str
    location: str | None = None  # address, "@rcx", or "<unavailable>"
    type: str | None = None
    scope: str | None = None  # "prv local" / "prv param"


class LocalsRecord(RecordBase):
    """``dv``."""

    kind: Literal["locals"] = "locals"
    locals: list[LocalVariable] = Field(default_factory=list)


class DataModelEntry(_Model):
    """One child line of ``dx``."""

    name: str
    value: str | None = None
    type: str | None = None
    depth: int = 1
    links: list[str] = Field(default_factory=list)  # DML link text such as "[Switch To]"


class DataModelRecord(RecordBase):
    """``dx``."""

    kind: Literal["data_model"] = "data_model"
    expression: str | None = None
    value: str | None = None
    type: str | None = None
    children: list[DataModelEntry] = Field(default_factory=list)


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

RECORD_KINDS: tuple[str, ...] = (
    "stack",
    "registers",
    "modules",
    "processes",
    "threads",
    "analysis",
    "memory",
    "disassembly",
    "breakpoints",
    "target",
    "type_dump",
    "object",
    "exception_record",
    "error_code",
    "error",
    "text",
    "events",
    "expression",
    "symbols",
    "symbol_path",
    "symbol_load",
    "locals",
    "data_model",
)
