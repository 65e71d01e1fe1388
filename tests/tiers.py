"""The suite's two tiers: a fast tier that starts no process and opens no listener, and the process tier.

A module whose tests start processes (the simulator, the server over stdio, the CLI, Node) or
listen on a socket (the HTTP listener) says so with ``pytestmark = pytest.mark.process``;
``pytest -m "not process"`` runs the fast tier alone (parse, command reader, policy, state
machine, config, the server through its in-memory client), in seconds. The process tier also
holds the odd in-process test too slow for the fast tier (a whole corpus run through the
simulator), marked the same way, the reason beside its mark.

The tier is enforced, not trusted: while an unmarked test runs (its fixtures' setup and
teardown included, so a session fixture cannot start one either), every way Python starts a
process, and ``socket.listen``, raise :class:`ProcessInFastTier`. A test that forgets its mark
fails, and says why.

Hypothesis has a profile per tier run. A property names its count for the whole suite,
``@settings(max_examples=examples(400))``: the count under the ``suite`` profile (hypothesis's
default counts, no deadline), which ``pytest`` (the whole suite, as CI runs it) loads. ``pytest -m
"not process"``, the fast tier run alone, loads the ``fast`` profile: every count scaled to a
quarter (``FAST_EXAMPLES`` of hypothesis's 100), at least ``MIN_EXAMPLES``.
``--hypothesis-profile=suite`` runs the fast tier at full counts; ``--hypothesis-profile=fast``,
any run at a quarter. Neither has a deadline: no test times itself.
"""

from __future__ import annotations

import os
import pty
import socket
import subprocess
import sys
from collections.abc import Generator
from typing import Any

import pytest

PROCESS_MARK = "process"


FAST_TIER_ALONE = f"not {PROCESS_MARK}"  # the -m expression that runs the fast tier alone
FAST_PROFILE = "fast"
SUITE_PROFILE = "suite"  # hypothesis's default counts, no deadline
DEFAULT_EXAMPLES = 100  # hypothesis's own max_examples: its "default" profile's
FAST_EXAMPLES = 25  # the fast profile's: a quarter of every property's count
MIN_EXAMPLES = 10


class ProcessInFastTier(AssertionError):
    """A test outside the process tier tried to start a process."""


def fast_tier_alone(config: pytest.Config) -> bool:
    """``-m "not process"``: the fast tier and nothing else (spaces aside)."""
    return " ".join((config.option.markexpr or "").split()) == FAST_TIER_ALONE


def examples(full: int) -> int:
    """A property's example count in this run: ``full`` under hypothesis's default profile (the
    whole suite), in proportion under another (a quarter under ``fast``), but not under ``MIN_EXAMPLES``
    (nor over ``full`` for that).

    Read when the test module is imported, after :func:`pytest_configure` loaded the profile."""
    from hypothesis import settings

    return max(min(full, MIN_EXAMPLES), full * settings.default.max_examples // DEFAULT_EXAMPLES)


@pytest.hookimpl(tryfirst=True)  # before hypothesis's plugin loads a --hypothesis-profile
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{PROCESS_MARK}: the test starts processes, or is too slow for the fast tier (the process tier); "
        "the fast tier is -m 'not process'"
    )
    requested = config.getoption("--hypothesis-profile", None)  # None too without hypothesis's plugin
    from hypothesis import settings

    # No wall-clock deadline in any profile: hypothesis's 200 ms per example is a timed assertion,
    # and on a loaded 2-core machine a property of pure code failed on it (DeadlineExceeded).
    settings.register_profile(SUITE_PROFILE, deadline=None)
    settings.register_profile(FAST_PROFILE, max_examples=FAST_EXAMPLES, deadline=None)
    if requested is None:
        settings.load_profile(FAST_PROFILE if fast_tier_alone(config) else SUITE_PROFILE)


def pytest_report_header(config: pytest.Config) -> str | None:
    if "hypothesis" not in sys.modules:
        return None
    from hypothesis import settings

    name, count = settings.get_current_profile_name(), settings.default.max_examples
    return f"hypothesis profile {name!r} (tests/tiers.py): {count} examples where the default has {DEFAULT_EXAMPLES}"


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
