"""The suite's two tiers: a fast tier that starts no process and opens no listener, and the process tier.

A module whose tests start processes (the simulator, the server over stdio, the CLI, Node) or
listen on a socket (the HTTP listener) says so with ``pytestmark = pytest.mark.process``;
``pytest -m "not process"`` runs the fast tier alone (parse, command reader, policy, state
machine, config, the server through its in-memory client), in seconds.

The tier is enforced, not trusted: while an unmarked test runs (its fixtures' setup and
teardown included, so a session fixture cannot start one either), every way Python starts a
process, and ``socket.listen``, raise :class:`ProcessInFastTier`. A test that forgets its mark
fails, and says why.
"""

from __future__ import annotations

import os
import pty
import socket
import subprocess
from collections.abc import Generator
from typing import Any

import pytest

PROCESS_MARK = "process"


class ProcessInFastTier(AssertionError):
    """A test outside the process tier tried to start a process."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{PROCESS_MARK}: the test starts processes (the process tier); the fast tier is -m 'not process'"
    )


def _refuse(what: str) -> Any:
    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise ProcessInFastTier(
            f"{what}: this test is in the fast tier, which starts no process; "
            f"mark its module with pytestmark = pytest.mark.{PROCESS_MARK}"
        )

    return refused


# Every door to a new process: subprocess (and asyncio/anyio, which use it), pexpect/ptyprocess
# (pty.fork / os.forkpty), multiprocessing and bare forks, and os.posix_spawn; and a listener.
_DOORS: tuple[tuple[Any, str], ...] = (
    (subprocess.Popen, "_execute_child"),
    (socket.socket, "listen"),
    (os, "fork"),
    (os, "forkpty"),
    (pty, "fork"),
    *((os, name) for name in ("posix_spawn", "posix_spawnp") if hasattr(os, name)),
)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    if item.get_closest_marker(PROCESS_MARK) is not None:
        return (yield)
    saved = [(owner, name, getattr(owner, name)) for owner, name in _DOORS if hasattr(owner, name)]
    for owner, name, _ in saved:
        setattr(owner, name, _refuse(f"{getattr(owner, '__name__', owner)}.{name}"))
    try:
        return (yield)
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
