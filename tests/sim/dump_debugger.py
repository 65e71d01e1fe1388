"""A simulated ``cdb -z null_read_av.dmp`` in this process, for tests of what the dump answers."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kdmcp.sim.debugger import SimDebugger
from kdmcp.sim.minidump_target import MinidumpTarget
from kdmcp.sim.options import parse_args
from kdmcp.sim.scenario import builtin

DUMPS = Path(__file__).resolve().parents[2] / "fixtures" / "dumps"


@pytest.fixture
def debugger() -> Iterator[SimDebugger]:
    """The debugger on the real dump, its output captured (``run``); its pipes closed after."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    path = str(DUMPS / "null_read_av.dmp")
    sim = SimDebugger(parse_args(["cdb", "-z", path]), builtin("default_cdb"), in_r, out_w)
    sim.dump = MinidumpTarget(path)
    sim.thread = sim.dump.event_index
    yield sim
    for fd in (in_r, in_w, out_r, out_w, sim._wake_r, sim._wake_w):
        os.close(fd)


def run(sim: SimDebugger, line: str) -> str:
    """What the debugger prints for one command line."""

    def each() -> None:
        for _ in sim.interpreter.run_line(line):
            pass

    return sim.capture(each)


def package(name: str) -> Any:
    """The dump as the ``minidump`` package reads it: the figures the simulator must agree with."""
    from minidump.minidumpfile import MinidumpFile

    logging.disable(logging.CRITICAL)  # its PEB-parsing traceback on small dumps
    try:
        return MinidumpFile.parse_bytes((DUMPS / name).read_bytes())
    finally:
        logging.disable(logging.NOTSET)
