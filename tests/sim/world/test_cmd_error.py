"""The simulator's ``!error`` in kd and in cdb: kd's format (Debugger Commands, "!error"), parsed
back by ``kdmcp.parse.errorcode``."""

from __future__ import annotations

import pytest

from kdmcp.parse.errorcode import parse_error_code
from kdmcp.sim.world.build import build
from kdmcp.sim.world.commands import answer


@pytest.mark.parametrize("kernel", [True, False])
def test_the_documented_examples(kernel: bool) -> None:
    world = build()
    assert answer(world, "!error 2", kernel=kernel) == (
        "Error code: (Win32) 0x2 (2) - The system cannot find the file specified.\n"
    )
    assert answer(world, "!error 2 1", kernel=kernel) == "Error code: (NTSTATUS) 0x2 - STATUS_WAIT_2\n"
    av = answer(world, "!error 00000000c0000005", kernel=kernel)
    assert av == (
        "Error code: (NTSTATUS) 0xc0000005 (3221225477) - The instruction at 0x%p referenced memory at "
        "0x%p. The memory could not be %s.\n"
    )
    record = parse_error_code("!error 00000000c0000005", av)
    assert record is not None and record.code == "0xc0000005" and record.facility == "NTSTATUS"
    assert answer(world, "!error 80070005", kernel=kernel) == (
        "Error code: (HRESULT) 0x80070005 (2147942405) - General access denied error\n"
    )
