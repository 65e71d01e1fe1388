"""The kernel-object commands through the real simulator (``python -m kdmcp.sim kd``): the
debugger reaches the world for them, and kd's bytes come back over its pipes."""

from __future__ import annotations

import sys

import pexpect
import pytest
from pexpect.popen_spawn import PopenSpawn

pytestmark = pytest.mark.process  # starts the simulator (tests/tiers.py)

T = 10


def test_kd_answers_kernel_objects_from_the_world() -> None:
    kd = PopenSpawn([sys.executable, "-m", "kdmcp.sim", "kd", "-b", "-k", "net:port=50000,key=1.2.3.4"], timeout=T)
    try:
        kd.expect_exact("0: kd> ")
        kd.sendline("!drvobj myfault 2")
        kd.expect_exact("0: kd> ")
        drvobj = kd.before.decode().replace("\r\n", "\n")
        assert "[0e] IRP_MJ_DEVICE_CONTROL              fffff80060da1e00\tmyfault+0x1e00\n" in drvobj
        kd.sendline("!irp ffffe70f2ed94d70")
        kd.expect_exact("0: kd> ")
        irp = kd.before.decode().replace("\r\n", "\n")
        assert " Thread ffffe70f2d53a080:  Irp stack trace.  \n" in irp
        assert "\t\t\tArgs: 00000020 00000020 0x8336a01e 00000000\n" in irp
        kd.sendline("q")
        kd.expect_exact("quit:")
        kd.expect(pexpect.EOF)
    finally:
        if kd.proc.poll() is None:
            kd.proc.kill()
        kd.proc.wait(timeout=T)
        for stream in (kd.proc.stdin, kd.proc.stdout):
            if stream is not None:
                stream.close()
