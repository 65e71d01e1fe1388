"""Records of what runs: stacks (``k``, ``~*k``), threads (``~``, ``!thread``...), processes (``!process``, ``|``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kdmcp.parse.models.base import RecordBase, StrictModel
from kdmcp.parse.models.parts import Frame

# --------------------------------------------------------------------------- stack


class ThreadStack(StrictModel):
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


# --------------------------------------------------------------------------- threads / processes


class WaitObject(StrictModel):
    """An object a kernel thread waits on (the lines under a ``THREAD ... WAIT`` header)."""

    address: str
    type: str


class ThreadInfo(StrictModel):
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
    attached_process: str | None = None  # !thread "Attached Process" (None for "N/A")
    attached_image: str | None = None
    wait_start_tick: int | None = None  # !thread "Wait Start TickCount 3492"
    wait_ticks: int | None = None  # its "Ticks: 12": ticks the thread has waited (or run) since
    wait_time: str | None = None  # the same as a time, "(0:00:00:00.187)" -> "0:00:00:00.187"
    context_switches: int | None = None  # !thread "Context Switch Count 10798"
    ideal_processor: int | None = None  # its "IdealProcessor: 2"
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


class ProcessInfo(StrictModel):
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
