"""Helpers the world's test modules share: a command's answer, and its typed object record; for the
process tier, a command's answer from the simulator on pipes and a break-in."""

from __future__ import annotations

import signal

import pexpect
import pytest
from pexpect.popen_spawn import PopenSpawn

from kdmcp.parse import parse
from kdmcp.parse.models import ObjectRecord
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World

__all__ = ["BREAK_BANNER", "ask", "break_in", "object_record", "run"]

BREAK_BANNER = "Break instruction exception - code 80000003 (first chance)\r\n"


def run(world: World, command: str) -> str:
    """What the world prints for ``command``; the world must answer it."""
    out = answer(world, command)
    assert out is not None, command
    return out


def object_record(command: str, text: str | None) -> ObjectRecord:
    """The object record the parser makes of a world answer."""
    assert text is not None
    record = parse(command, text)
    assert isinstance(record, ObjectRecord), record
    return record


def ask(child: PopenSpawn, line: str, prompt: str) -> str:
    """What the simulator printed for ``line`` before ``prompt`` (each expect bounded by the spawn's timeout)."""
    child.sendline(line)
    child.expect_exact(prompt)
    return child.before.decode()


def break_in(child: PopenSpawn) -> str:
    """Ctrl+C until the break banner comes; returns what the target printed before it.

    A Ctrl+C that reaches the debugger before it has read the ``g`` finds it at its prompt, where
    it is dropped (kd-mcp's break_in asks again each break_retry_s for the same reason), so each
    request's wait is bounded and it asks again."""
    for _ in range(50):
        child.kill(signal.SIGINT)
        if child.expect_exact([BREAK_BANNER, pexpect.TIMEOUT], timeout=0.2) == 0:
            return str(child.before.decode())
    pytest.fail("no break-in after 50 Ctrl+C")
