"""``decode_ioctl`` and ``ioctl_map`` called directly (the tool function is the logic): a code
decoded with no session, and kd's answer without a dispatch table refused in kd's words."""

from __future__ import annotations

import pytest

from kdmcp.errors import InvalidArgument
from kdmcp.server.call import Call
from kdmcp.server.tools.ioctl.control_codes import decode_ioctl, ioctl_map
from kdmcp.server.tools.sessions.kdnet import start_kd
from tests.server.helpers import CANARY_KEY, make_app


def test_decode_ioctl_needs_no_session() -> None:
    app = make_app()
    try:
        d = decode_ioctl(Call(app, None), "0x222003")
        assert d.ctl_code == "CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, METHOD_NEITHER, FILE_ANY_ACCESS)"
        with pytest.raises(InvalidArgument, match=r"^code: .* \(0x222003, 222003h, 0n2236419\)$"):
            decode_ioctl(Call(app, None), "xyz")
    finally:
        app.shutdown()


@pytest.mark.process
def test_an_unknown_driver_is_refused_with_kds_first_line() -> None:
    app = make_app()
    try:
        sid = start_kd(Call(app, None), 50000, CANARY_KEY, None, None, True, None).session_id
        # kd: "Driver object nosuchdriver 2 not found" -- plain text, no error record
        with pytest.raises(InvalidArgument, match=r"^kd: Driver object nosuchdriver 2 not found$"):
            ioctl_map(Call(app, None), "nosuchdriver", session_id=sid)
        got = ioctl_map(Call(app, None), "pci", session_id=sid)
        assert got.handles_ioctls is False and got.command == "!drvobj pci 2"
    finally:
        app.shutdown()
