"""The running user process through the real simulator: ``cdb -p`` with ``bp``, ``g``, the stop,
``p``/``gu`` there, Ctrl+C while it runs; a launch's ``bp app!wmain``. Every expect is bounded."""

from __future__ import annotations

import sys

import pytest
from pexpect.popen_spawn import PopenSpawn

from tests.sim.test_cli import T, reap
from tests.sim.world.helpers import ask, break_in

pytestmark = pytest.mark.process  # starts the simulator (tests/tiers.py)


def test_bp_g_stops_the_worker_at_rtl_allocate_heap(cdb: PopenSpawn) -> None:
    assert ask(cdb, "bp ntdll!RtlAllocateHeap", "0:002> ") == ""
    assert ask(cdb, "bl", "0:002> ") == (
        "     0 e Disable Clear  00007ffc`81a3a7f0     0001 (0001)  0:**** ntdll!RtlAllocateHeap\r\n"
    )
    cdb.sendline("g")
    # cdb's x64 breakpoint stop (corpus misc/05), then the hitting thread's prompt
    cdb.expect_exact(
        "Breakpoint 0 hit\r\nntdll!RtlAllocateHeap:\r\n"
        "00007ffc`81a3a7f0 48895c2408      mov     qword ptr [rsp+8],rbx\r\n0:001> "
    )
    step = ask(cdb, "p", "0:001> ")
    assert step.endswith("ntdll!RtlAllocateHeap+0x5:\r\n00007ffc`81a3a7f5 57              push    rdi\r\n")
    up = ask(cdb, "gu", "0:001> ")
    assert up.endswith("ucrtbase!malloc+0x19:\r\n00007ffc`7f3fa6c9 83e00f          and     eax,0Fh\r\n")
    assert ask(cdb, "bc 0", "0:001> ") == ""
    cdb.sendline("g")
    break_in(cdb)  # Ctrl+C: cdb's break-in thread joins the process
    cdb.expect_exact("ntdll!DbgBreakPoint:\r\n00007ffc`81a986a0 cc              int     3\r\n0:002> ")


def test_a_launch_stops_at_wmain_then_faults() -> None:
    child = PopenSpawn([sys.executable, "-m", "kdmcp.sim", "cdb", "app.exe"], timeout=T)
    try:
        child.expect_exact("0:000> ")
        assert ask(child, "bp app!wmain", "0:000> ") == ""
        child.sendline("g")
        child.expect_exact(
            "Breakpoint 0 hit\r\napp!wmain:\r\n"
            "00007ff7`91d81000 48895c2408      mov     qword ptr [rsp+8],rbx\r\n0:000> "
        )
        child.sendline("g")
        child.expect_exact("Access violation - code c0000005 (first chance)\r\n")
        child.expect_exact("0:000> ")
    finally:
        reap(child)
