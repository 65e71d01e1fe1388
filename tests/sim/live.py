"""A simulated kd or cdb in this process, driven event by event (fast tier: no child process).

The debugger's console is /dev/null; what it prints is captured. ``play`` runs what the target
does next while it runs -- the scenario's next scripted event, or the world's next event -- as
the console loop would when its timer fires, without waiting for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from kdmcp.sim.debugger import SimDebugger
from kdmcp.sim.options import parse_args
from kdmcp.sim.scenario import builtin, load
from tests.conftest import scenario

__all__ = ["KDNET", "ctrl_c", "debugger", "play", "run", "until_stop"]

KDNET = ["-k", "net:port=50000,key=1.2.3.4"]


@contextmanager
def debugger(args: list[str], scenario_name: str | None = None) -> Iterator[SimDebugger]:
    """The debugger for ``args`` under fixture scenario ``scenario_name`` (else the built-in),
    stopped: kd connected (its banner read), cdb at its first prompt."""
    null = os.open(os.devnull, os.O_RDWR)
    opts = parse_args(args)
    sc = load(scenario(scenario_name)) if scenario_name else builtin("default_kd" if args[0] == "kd" else "default_cdb")
    sim = SimDebugger(opts, sc, in_fd=null, out_fd=null)
    try:
        sim.capture(sim.start)
        if opts.mode == "kdnet":
            sim.capture(sim.connected)
            sim.state = "broken"
        yield sim
    finally:
        sim.log.close()
        for fd in (null, sim._wake_r, sim._wake_w):
            os.close(fd)


def run(sim: SimDebugger, line: str) -> str:
    """What the debugger prints for one command line at its prompt."""
    return sim.capture(lambda: sim._drive(sim.interpreter.run_line(line)))


def play(sim: SimDebugger) -> str:
    """What the running target prints at its next event (a stop leaves it broken)."""
    assert sim.state == "running", sim.state
    if sim.world_running:
        return sim.capture(sim.play_world)
    event = sim.script.pop(0)
    return sim.capture(lambda: sim.play(event))


def ctrl_c(sim: SimDebugger) -> str:
    """What Ctrl+C brings while the target runs (the console loop's next turn sees it first)."""
    sim.interrupts = 1
    return sim.capture(sim.step)


def until_stop(sim: SimDebugger, limit: int = 10) -> str:
    """What the running target prints until it stops (at most ``limit`` events)."""
    out = ""
    for _ in range(limit):
        out += play(sim)
        if sim.state == "broken":
            return out
    raise AssertionError(out)
