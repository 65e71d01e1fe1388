"""The record of the object extensions (``!irp``, ``!drvobj``, ``!pool``, ``!pte``...) and its typed tables."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kdmcp.parse.models.base import RecordBase, StrictModel
from kdmcp.parse.models.parts import Frame

# --------------------------------------------------------------------------- kernel objects


class IrpStackLocation(StrictModel):
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


class DispatchRoutine(StrictModel):
    """One ``[00] IRP_MJ_CREATE  addr  symbol`` row of ``!drvobj ... 2``."""

    index: int
    name: str
    address: str
    symbol: str | None = None


class DeviceStackEntry(StrictModel):
    """One row of ``!devstack``."""

    current: bool = False
    device: str
    driver: str
    extension: str | None = None
    name: str | None = None


class DirectoryEntry(StrictModel):
    """One object of an ``!object`` directory listing."""

    hash: str | None = None
    address: str
    type: str
    name: str


# --------------------------------------------------------------------------- memory: pool, PTEs, heaps
# (read by kdmcp/parse/objects/memory.py and heap.py)


class PoolBlock(StrictModel):
    """One block of ``!pool`` / ``!poolfind``: a header line (``*e1001050 size: 10 previous size:
    10 (Allocated) *ObDi``), a large allocation (``*fffff901400d0000 : large page allocation,
    tag is Gh05, size is 0x1090 bytes``) with the ``Pooltag ...`` line kd prints under it, or a
    Windows 10 ``!poolfind`` row (``ffffda001accb5f0 : tag amda, size     0x140, Nonpaged pool``)."""

    address: str
    size: str
    previous_size: str | None = None  # a large allocation has no pool header, so none is printed
    state: str | None = None  # "Allocated" / "Free"; the Windows 10 !poolfind rows print none
    tag: str | None = None
    contains_address: bool = False  # '*' marker: the block holding the queried address
    large: bool = False  # "large page allocation" (no pool header)
    details: str | None = None  # what follows the tag: "Process: 8507a030", "(Protected)"
    description: str | None = None  # "Pooltag MmSt : <description>, Binary : nt!mm"
    binary: str | None = None
    pool_type: str | None = None  # !poolfind (Windows 10): "Nonpaged pool", "Paged pool"; special pool: "NonPaged"
    data: str | None = None  # special pool: where the caller's bytes start ("data: ffffb98851f06b10")
    partial: bool = False  # a row read only in part (kdmcp/parse/partial.py), whole in ``raw_line``
    raw_line: str | None = None


class PoolTagUsage(StrictModel):
    """One tag row of ``!poolused``: allocations and bytes in nonpaged and paged pool; the verbose
    layout (``!poolused 1``) adds frees and allocs-minus-frees for each pool."""

    tag: str
    nonpaged_allocs: int
    nonpaged_used: int
    paged_allocs: int
    paged_used: int
    nonpaged_frees: int | None = None  # verbose layout only ("Allocs Frees Diff Used")
    nonpaged_diff: int | None = None
    paged_frees: int | None = None
    paged_diff: int | None = None
    description: str | None = None  # from pooltag.txt ("UNKNOWN pooltag 'amda', please update ...")


class PteLevel(StrictModel):
    """One paging level of ``!pte`` (PXE, PPE, PDE, PTE)."""

    level: str
    address: str
    contains: str | None = None
    pfn: str | None = None
    flags: str | None = None
    valid: bool | None = None  # False: kd printed "not valid" in this column; None: neither
    large_page: bool = False  # this entry maps a large page (kd prints "LARGE PAGE pfn N" after its column)
    details: list[str] = Field(default_factory=list)  # "Page has been freed", "Proto: ...", "Transition: ..."


class HeapSummary(StrictModel):
    """One heap of a heap list: a row of the ``!heap -s`` table (``Heap Flags Reserv Commit Virt
    Free List UCR Virt Lock Fast``, sizes in KB) or of the plain ``!heap`` index."""

    heap: str
    index: int | None = None  # "  1:   00250000" (plain !heap)
    flags: str | None = None  # as printed, "08000002"
    reserve_kb: int | None = None
    commit_kb: int | None = None
    virtual_kb: int | None = None
    free_kb: int | None = None
    free_list_length: int | None = None
    ucr_blocks: int | None = None
    virtual_blocks: int | None = None
    lock_contention: str | None = None  # as printed: one published table shows "c" here
    fast_heap: str | None = None  # "LFH"; None when the column is blank
    external_fragmentation_percent: int | None = None  # "External fragmentation  38 % (224 free blocks)"
    external_fragmentation_free_blocks: int | None = None
    virtual_fragmentation_percent: int | None = None  # "Virtual address fragmentation  95 % (19 uncommited ranges)"
    virtual_fragmentation_ranges: int | None = None


class HeapEntry(StrictModel):
    """One heap block. Layouts: ``HEAP_ENTRY Size Prev Flags UserPtr UserSize - state`` rows
    (``!heap -p -a``, ``-flt``, ``-srch``; sizes in heap granules), ``Entry User Heap Segment
    Size PrevSize Flags`` rows (``!heap -l``, ``-x``; sizes in bytes) and ``Address: Prev . Cur
    [flags] - busy (used)`` rows (``!heap -a``; sizes in granules). Sizes are hex as printed."""

    address: str  # the HEAP_ENTRY
    size: str | None = None
    previous_size: str | None = None
    flags: str | None = None  # "[01]" -> "01"; the -l/-x table's words ("busy extra") go to state
    user_pointer: str | None = None
    user_size: str | None = None
    state: str | None = None  # "busy", "free", "busy extra", "free fill"
    heap: str | None = None
    segment: str | None = None
    symbol: str | None = None  # the symbol kd prints under the row (-srch match, -flt "unknown!printable")
    used: str | None = None  # !heap -a "busy (24)": bytes in use, hex as printed
    tag: str | None = None  # !heap -a "tail fill (NTDLL!LDR Database)"
    free_list: bool = False  # !heap -a: the row is in a FreeList[..] listing, not the segment's
    unused: str | None = None  # -x on current engines: the "Unused" column, bytes, hex as printed
    partial: bool = False  # a row read only in part (kdmcp/parse/partial.py), whole in ``raw_line``
    raw_line: str | None = None


class HeapPageBlock(StrictModel):
    """The page-heap block of ``!heap -p -a`` (``DPH_HEAP_BLOCK: VirtAddr VirtSize``)."""

    block: str
    virtual_address: str
    virtual_size: str
    user_address: str | None = None  # a busy block's "UserAddr" (a freed one prints none)
    user_size: str | None = None


class HeapSizeStat(StrictModel):
    """One row of ``!heap -stat -h``: ``size #blocks - total (percent)``, hex counts as numbers."""

    size: int
    blocks: int
    total: int
    percent: float


# --------------------------------------------------------------------------- handles and locks
# (!handle, !locks: kernel ERESOURCEs and user-mode critical sections)


class HandleEntry(StrictModel):
    """One handle of ``!handle``.

    Kernel mode prints a table row (``0044: Object: ffffc38e2ff24e20  GrantedAccess: 0012019f
    (Protected) (Inherit) (Audit) Entry: ffffa08f5b1ff110``) and, with flag 2, the object block
    under it; user mode prints a ``Handle 8`` block of blank- or tab-aligned ``Key value`` lines.
    """

    handle: str  # "0x0044" (kernel, 4+ digits as printed) / "0x8" (user mode)
    free: bool = False  # "0000: free handle, Entry address e1002000, Next Entry fffffffe"
    process: str | None = None  # the PROCESS whose table holds the row (kernel)
    object: str | None = None
    type: str | None = None
    type_address: str | None = None
    granted_access: str | None = None  # "0x0012019f" / "0x1f0003"
    access_rights: list[str] = Field(default_factory=list)  # user mode: "Synch", "QueryState", ...
    flags: list[str] = Field(default_factory=list)  # kernel: "Protected", "Inherit", "Audit"
    attributes: str | None = None  # user mode "Attributes    0", as printed
    entry: str | None = None  # the handle table entry ("Entry:", "Entry address")
    next_entry: str | None = None  # free handles: "Next Entry fffffffe"
    object_header: str | None = None
    handle_count: int | None = None
    pointer_count: int | None = None
    directory_object: str | None = None
    name: str | None = None  # None also for user mode's "Name <none>"
    object_info: list[str] = Field(default_factory=list)  # "Object Specific Information" lines
    # ...and what those lines say, for the types ntsdexts decodes (user mode, flag 8):
    event_type: str | None = None  # "Event Type Manual Reset" -> "Manual Reset" / "Auto Reset"
    state: str | None = None  # "Event is Set" / "Event is Waiting", "Mutex is Free" / "Mutex is Owned"
    owner: str | None = None  # "Mutant Owner 2dd8.23a0": the owner's pid.tid, hex as printed
    semaphore_count: int | None = None  # "Semaphore Count 0"
    semaphore_limit: int | None = None  # "Semaphore Limit 1"
    partial: bool = False  # a row read only in part (kdmcp/parse/partial.py), whole in ``raw_line``
    raw_line: str | None = None


class HandleTypeCount(StrictModel):
    """One row of user-mode ``!handle``'s summary (``6 Handles`` / ``Type  Count``)."""

    type: str
    count: int


class LockThread(StrictModel):
    """One ``Threads:`` item of kernel ``!locks``: ``ff688da0-01<*>`` (``<*>``: an owner),
    ``80ed0023-01<*> *** Actual Thread 80ed0020`` (the entry holds an offset pointer)."""

    thread: str
    count: int  # the owner count after the dash, hex as printed ("-01")
    owner: bool = False
    actual_thread: str | None = None


class ResourceLock(StrictModel):
    """One ERESOURCE of kernel ``!locks``: ``Resource @ 0x80e97620    Shared 4 owning threads``
    or ``Resource @ nt!PiEngineLock (0xfffff8019cd8a380)    Exclusively owned``."""

    resource: str
    symbol: str | None = None
    state: str  # "Shared" / "Exclusively owned" / "Available"
    owners: int | None = None  # "Shared N owning threads"
    contention_count: int | None = None
    shared_waiters: int | None = None  # "NumberOfSharedWaiters = N"
    exclusive_waiters: int | None = None  # "NumberOfExclusiveWaiters = N"
    threads: list[LockThread] = Field(default_factory=list)
    waiting_exclusive: list[str] = Field(default_factory=list)  # "Threads Waiting On Exclusive Access:"


class CriticalSection(StrictModel):
    """One critical section of user-mode ``!locks`` (ntsdexts) or ``!critsec``:
    ``CritSec ntdll!LdrpLoaderLock+0 at 00007ff9d241f4f8`` and its ``Key  value`` lines."""

    symbol: str | None = None  # "ntdll!LdrpLoaderLock+0", "SMTPSVC+66a30"
    address: str
    waiter_woken: str | None = None  # "No" / "Yes" (absent in the Windows 2000-era layout)
    lock_count: int | None = None
    recursion_count: int | None = None
    owning_thread: str | None = None  # the owner's thread id, hex as printed ("0x7ec")
    entry_count: int | None = None
    contention_count: int | None = None
    locked: bool = False  # "*** Locked"


class PageFile(StrictModel):
    """One paging file of ``!vm``: ``Page File: \\??\\C:\\pagefile.sys`` (or ``No Name for Paging
    File``) and its ``Current:``/``Free Space:``/``Minimum:``/``Maximum:`` sizes, in Kb."""

    name: str | None = None
    current_kb: int | None = None
    free_kb: int | None = None
    minimum_kb: int | None = None
    maximum_kb: int | None = None


class DpcQueueEntry(StrictModel):
    """One DPC of ``!pcr``'s ``DpcQueue:``: the KDPC, its routine, the queue it is on and the
    routine's symbol. x86 (docs): ``DpcQueue:  0x80168ee0 0x80100d04 ntoskrnl!KiTimerExpiration``;
    x64 Windows 10/11 (DebugPrivilege's ``0: kd> !pcr 4``) adds ``[Normal]`` and prints each
    further DPC on an indented line of its own."""

    dpc: str
    routine: str
    type: str | None = None  # "Normal" (the x64 layout's bracket), None when not printed
    symbol: str | None = None


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
    pool_usage: list[PoolTagUsage] = Field(default_factory=list)
    pte_levels: list[PteLevel] = Field(default_factory=list)
    heap_summaries: list[HeapSummary] = Field(default_factory=list)
    heap_entries: list[HeapEntry] = Field(default_factory=list)
    heap_page_blocks: list[HeapPageBlock] = Field(default_factory=list)
    heap_stats: list[HeapSizeStat] = Field(default_factory=list)
    frames: list[Frame] = Field(default_factory=list)
    # !handle, !locks
    handles: list[HandleEntry] = Field(default_factory=list)
    handle_types: list[HandleTypeCount] = Field(default_factory=list)
    resources: list[ResourceLock] = Field(default_factory=list)
    critical_sections: list[CriticalSection] = Field(default_factory=list)
    # !vm
    page_files: list[PageFile] = Field(default_factory=list)
    # !pcr
    dpc_queue: list[DpcQueueEntry] = Field(default_factory=list)
