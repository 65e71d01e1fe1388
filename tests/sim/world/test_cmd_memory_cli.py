"""The world's memory commands through the real simulator (``python -m kdmcp.sim kd``): a byte
written with ``eb`` is what the next ``db`` and ``u`` show, on kd's pipes and ``\\r\\n`` lines."""

from __future__ import annotations

import sys

import pytest
from pexpect.popen_spawn import PopenSpawn

from tests.sim.test_cli import KDNET, T, reap

pytestmark = pytest.mark.process  # starts the simulator (tests/tiers.py)


def test_eb_then_db_and_u_through_the_simulator() -> None:
    kd = PopenSpawn([sys.executable, "-m", "kdmcp.sim", "kd", "-b", *KDNET], timeout=T)
    try:
        kd.expect_exact("0: kd> ")
        kd.sendline("eb @rip 90")
        kd.expect_exact("0: kd> ")
        assert kd.before == b""
        kd.sendline("db @rip L2")
        kd.expect_exact("0: kd> ")
        assert kd.before.decode() == "fffff800`62a05c20  90 c3" + " " * 44 + ".." + "\r\n"
        kd.sendline("u @rip L1")
        kd.expect_exact("0: kd> ")
        assert kd.before.decode() == "nt!DbgBreakPointWithStatus:\r\nfffff800`62a05c20 90              nop\r\n"
        kd.sendline("q")
    finally:
        reap(kd)
