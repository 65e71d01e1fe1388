"""kdmcp/sim/console_io.py: the simulator's wait loop — a Ctrl+C never costs it its input.

A storm of break-in requests once left the simulator with an interrupt counted whose wake-up
byte had already been drained; the next wait blocked reading the empty wake-up pipe, deaf to
input and to every later Ctrl+C (the fault matrix's break-in storm hung about once in five
CI runs). This pins the state that storm produced.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest

from kdmcp.sim.debugger import SimDebugger
from kdmcp.sim.options import parse_args
from kdmcp.sim.scenario import builtin


@pytest.fixture
def sim() -> Iterator[tuple[SimDebugger, int]]:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    debugger = SimDebugger(parse_args(["kd", "-k", "net:port=50000,key=1.2.3.4"]), builtin("default_kd"), in_r, out_w)
    yield debugger, in_w
    for fd in (in_r, in_w, out_r, out_w, debugger._wake_r, debugger._wake_w):
        os.close(fd)


def test_an_interrupt_whose_wake_up_was_drained_does_not_block_input(sim):
    debugger, stdin = sim
    os.write(stdin, b"g\n")
    debugger.interrupts = 1  # counted by the handler; its wake-up byte already consumed
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend([debugger.wait(2.0, True), debugger.wait(2.0, True)]),
                              daemon=True)
    reader.start()
    reader.join(5.0)
    assert seen == ["interrupt", "input"]
    assert debugger.read_line() == "g"


def test_a_stale_wake_up_byte_is_drained_not_spun_on(sim):
    debugger, _ = sim
    os.write(debugger._wake_w, b"!!!")  # wake-ups whose interrupts were already taken
    assert debugger.wait(0.2, False) == "timeout"
    with pytest.raises(BlockingIOError):
        os.read(debugger._wake_r, 1)  # drained: nothing left to spin on
