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

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


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
    prcb: str | None = None
    next_thread: str | None = None
    user_time: str | None = None
    kernel_time: str | None = None
    elapsed_time: str | None = None
    wait_objects: list[WaitObject] = Field(default_factory=list)
    details: dict[str, str] = Field(default_factory=dict)
    frames: list[Frame] = Field(default_factory=list)
    partial: bool = False  # a row read only in part (kdmcp/parse/partial.py), whole in ``raw_line``
    raw_line: str | None = None

    # Typed readings of three multi-column !thread detail lines, derived from ``details`` on
    # access: ``!process 0 7`` prints them for every one of thousands of threads, and reading
    # them while parsing would cost its hot path several percent (scripts/bench_parse.py).

    @property
    def wait_start_tick(self) -> int | None:
        """``Wait Start TickCount      3492           Ticks: 12 (0:00:00:00.187)`` -> 3492."""
        words = self._detail_words("Wait Start TickCount")
        return int(words[0]) if words and words[0].isdigit() else None

    @property
    def wait_ticks(self) -> int | None:
        """Its ``Ticks: 12``: how long ago the thread last changed state, in clock ticks (a
        Windows 7 dump whose shared data is unreadable prints the tick count alone)."""
        words = self._detail_words("Wait Start TickCount")
        return int(words[2]) if len(words) >= 3 and words[1] == "Ticks:" and words[2].isdigit() else None

    @property
    def wait_time(self) -> str | None:
        """The same as a time, ``(0:00:00:00.187)`` -> ``0:00:00:00.187``; Windows 10 prints
        ``Ticks: 0`` without one for a running thread (the !thread page of the debugger docs)."""
        words = self._detail_words("Wait Start TickCount")
        if len(words) == 4 and words[1] == "Ticks:" and words[3][0] == "(" and words[3][-1] == ")":
            return words[3][1:-1]
        return None

    @property
    def context_switches(self) -> int | None:
        """``Context Switch Count      10798          IdealProcessor: 2`` -> 10798."""
        words = self._detail_words("Context Switch Count")
        return int(words[0]) if words and words[0].isdigit() else None

    @property
    def ideal_processor(self) -> int | None:
        """Its ``IdealProcessor: 2`` (XP prints the count alone)."""
        words = self._detail_words("Context Switch Count")
        ok = len(words) >= 3 and words[1] == "IdealProcessor:" and words[2].isdigit()
        return int(words[2]) if ok else None

    @property
    def attached_process(self) -> str | None:
        """``Attached Process          ffffc509b8884040       Image:         System`` -> the
        EPROCESS (``0x...``); ``None`` for ``N/A`` or when not printed."""
        words = self._detail_words("Attached Process")
        if not words or words[0] == "N/A" or not all(c in _HEX_DIGITS for c in words[0].replace("`", "")):
            return None
        return "0x" + words[0].replace("`", "").lower()

    @property
    def attached_image(self) -> str | None:
        """Its ``Image:`` (``None`` for ``N/A``)."""
        value = self.details.get("Attached Process", "")
        at = value.find("Image:")
        image = value[at + 6 :].strip() if at >= 0 else ""
        return image if image and image != "N/A" else None

    def _detail_words(self, key: str) -> list[str]:
        return self.details.get(key, "").split()


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
    partial: bool = False  # a row read only in part (kdmcp/parse/partial.py), whole in ``raw_line``
    raw_line: str | None = None


class ProcessesRecord(RecordBase):
    """``!process`` with any flags, and user-mode ``|``."""

    kind: Literal["processes"] = "processes"
    processes: list[ProcessInfo] = Field(default_factory=list)
