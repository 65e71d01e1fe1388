"""The bulk THREAD-body reader reads exactly what the line-by-line reader reads.

``fold_kernel_thread_body`` takes a body in the common layout in a few pattern scans and
hands any other body to ``fold_kernel_thread_lines``; the line reader is the definition.
These tests hold the two equal on real ``!process`` output, on the benchmark's, and on
bodies made of every kind of line a THREAD block can hold, in any order.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import kdmcp.parse.processes as processes
from kdmcp.parse import thread_body
from kdmcp.parse.kernel_thread import (
    KERNEL_THREAD_RE,
    fold_kernel_thread_lines,
    kernel_thread_header,
)
from kdmcp.parse.thread_body import fold_kernel_thread_body
from tests.tiers import examples

Corpus = Any  # the session fixture from conftest.py

HEADER = (
    "        THREAD ffff91895309d080  Cid 1e90.1e94  Teb: 000000bb6f2ad000 "
    "Win32Thread: ffff9189523d0fc0 WAIT: (UserRequest) UserMode Non-Alertable"
)


def _snapshot(value: Any) -> Any:
    """A comparable form of a thread dict: models with their field sets."""
    if isinstance(value, BaseModel):
        return (type(value).__name__, sorted(value.model_fields_set), _snapshot(value.__dict__))
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_snapshot(v) for v in value]
    return value


def _both(body: str, header: str = HEADER) -> tuple[Any, Any]:
    m = KERNEL_THREAD_RE.match(header)
    assert m is not None
    bulk, lines = kernel_thread_header(m), kernel_thread_header(m)
    fold_kernel_thread_body(bulk, body)
    fold_kernel_thread_lines(lines, body.split("\n"))
    return _snapshot(bulk), _snapshot(lines)


def _bodies_of(command: str, raw: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(header line, body) of every THREAD block ``parse_processes`` reads in ``raw``."""
    seen: list[tuple[str, str]] = []
    real = processes.fold_kernel_thread_body

    def record(t: dict[str, Any], body: str) -> None:
        seen.append((t["address"], body))
        real(t, body)

    monkeypatch.setattr(processes, "fold_kernel_thread_body", record)
    processes.parse_processes(command, raw)
    monkeypatch.undo()
    return seen


def _common(body: str) -> bool:
    m = KERNEL_THREAD_RE.match(HEADER)
    assert m is not None
    return thread_body._read_common_body(kernel_thread_header(m), body)


def test_benchmark_bodies_read_the_same_and_take_the_bulk_path(
    monkeypatch: pytest.MonkeyPatch, bench_parse: Any
) -> None:
    bodies = _bodies_of("!process 0 7", bench_parse.synth_processes(60_000), monkeypatch)
    assert len(bodies) > 20
    for _, body in bodies:
        assert _common(body), body
        bulk, lines = _both(body)
        assert bulk == lines
        assert len(bulk["frames"]) == 9 and len(bulk["wait_objects"]) == 2


def test_corpus_bodies_read_the_same(corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    bulk_read = 0
    total = 0
    for name in corpus.names():
        for block in corpus.blocks(name):
            if not block.command.startswith("!process") or "THREAD" not in block.output:
                continue
            for _, body in _bodies_of(block.command, block.output.replace("\r\n", "\n") + "\n", monkeypatch):
                bulk, lines = _both(body)
                assert bulk == lines, f"{name}: {body[:200]!r}"
                total += 1
                bulk_read += _common(body)
    assert total >= 5
    assert bulk_read >= total // 2  # real output is mostly in the common layout


# Every kind of line a THREAD body holds, the usual ones and the odd ones.
_LINES = [
    "            ffff918953118260  SynchronizationEvent",
    "            ffff9189`52d83d80  QueueObject",
    "            ffff918953118260  1234",
    "        Not impersonating",
    "        Impersonation token:  ffffd8024a19c770 (Level Impersonation)",
    "        DeviceMap                 ffffd80247fe8cf0",
    "        Owning Process            ffff9189527e9080       Image:         notepad.exe",
    "        Owning Process            N/A       Image:         N/A",
    "        Attached Process          N/A            Image:         N/A",
    "        Wait Start TickCount      3492           Ticks: 12 (0:00:00:00.187)",
    "        Context Switch Count      10798          IdealProcessor: 2",
    "        UserTime                  00:00:00.140",
    "        KernelTime                00:00:00.328",
    "        Win32 Start Address 0x00007ff7e2e85a30",
    "        Win32 Start Address notepad!wWinMainCRTStartup (0x00007ff7e2e85a30)",
    "        Start Address nt!KiStartSystemThread (0xfffff8006291c5a0)",
    "        Stack Init ffffd48f777bffd0 Current ffffd48f777bead0",
    "        Base ffffd48f777c0000 Limit ffffd48f777ba000 Call 0000000000000000",
    "        Priority 10 BasePriority 8 PriorityDecrement 0 IoPriority 2 PagePriority 5",
    "        Child-SP          RetAddr               Call Site",
    "         # Child-SP          RetAddr               Call Site",
    "        ChildEBP RetAddr  Args to Child",
    "        Memory  Child-SP          RetAddr               Call Site",
    "        Saved Child-SP  ffffd48f`777beb10",
    "        Child-SP\tRetAddr  Call Site",
    "        ffffd48f`777beb10 fffff800`6280c970     nt!KiSwapContext+0x76",
    "        ffffd48f`777bfdd0 00007ff8`eed7a104     nt!KiSystemServiceCopyEnd+0x25 (TrapFrame @ ffffd48f`777bfe40)",
    "        000000bb`6f17e2d8 00000000`00000000     0x00007ff8`eed7a104",
    "        00 ffffd48f`77af9b40 fffff800`62c75328     : ffffd48f`77af9ec0 ffff9189`4ed94d70 "
    "00000000`00000001 fffff800`00000000 : nt!IofCallDriver+0x55",
    "        0133fb7c 00891145 00000001 00000004 0133fd4c Project1!AddValues1 (FPO: [Non-Fpo])",
    "        01 (Inline Function) --------`-------- Wdf01000!FxDriverDeviceAdd::Invoke+0x30 [x.hpp @ 61]",
    "        MyApp!main(",
    "        int argc = 0n1)+0x5",
    "        ... elided by the author ...",
    "        (Inline Function) nt!Foo+0x1",
    "        deadbeef something",
    "        ab  cd",
    "        THREAD is not a header here",
    "        Stack unavailable.",
    "        Key:  value:  more",
    "        Lonely",
    "\tTabbed  line",
    "        Trailing blanks   ",
    "        Odd\x0cspace here",
    "        NBSP\xa0inside  value",
    "",
    "   ",
    # seen in published output the corpus lacks (Windows 2000 to 10 !thread / !process)
    "        Kernel stack not resident.",
    "        IRP List:",
    "            fef29208: (0006,00b8) Flags: 00000884  Mdl: feed8328",
    "            ffffe001d429e580: (0006,02c8) Flags: 000008b4  Mdl: 00000000",
    "        Owning Process ffaf5690",
    "        Initial Sp fec6c000 Current Sp fec6b938",
    "        Win32 Start Address WinDBG!`string' (0x01006ae0)",
    "        000000ee`6d37c580 00000000`00000000     0x12e",
    "        000000ee`6d37c580 00000000`00000000 : 00000000`00000000 00000000`00000000 "
    "00000000`00000080 00000000`00000000 : 0x12e",
    "        0012fb30 7e3799d8 0x2d0036",
    "        ae12bbf8 77d12740 000000c0 a738d040 0000000a nt!KiSystemServicePostCall (FPO: [0,3] TrapFrame @ ae12bc14)",
    # complaints inside a THREAD block (XP !locks -v docs; a Windows 7 x86 !thread write-up)
    "GetUlongFromAddress: unable to read from 00000000",
    "\tffdf0000: Unable to get shared data",
    "\tReadMemory error: Cannot get nt!KeMaximumIncrement value.",
    "        Unable to read memory at fffff800`00000000",
]


_ANY_LINE = st.text(max_size=40).map(lambda s: s.replace("\n", " "))


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_LINES), _ANY_LINE), max_size=24))
def test_any_body_reads_the_same(lines: list[str]) -> None:
    body = "".join(line + "\n" for line in lines)
    bulk, by_line = _both(body)
    assert bulk == by_line


def test_the_common_layout_takes_the_bulk_path() -> None:
    """Not vacuous: the usual body (wait objects, details, stack) is read in bulk."""
    usual = [_LINES[i] for i in (0, 1, 3, 5, 6, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19)]
    usual += [line for line in _LINES if line.startswith("        ffffd48f`") or line.startswith("        000000bb`")]
    body = "".join(line + "\n" for line in usual) + "\n"
    assert _common(body)
    bulk, _ = _both(body)
    assert len(bulk["frames"]) == 3 and len(bulk["wait_objects"]) == 2
    assert bulk["owning_process"] == "0xffff9189527e9080" and bulk["priority"] == 10
