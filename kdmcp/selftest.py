"""``kd-mcp selftest``: check the real kd.exe/cdb.exe on this machine, and print a report for a bug.

What kd-mcp assumes about the debuggers can only be verified where they run (see
docs/architecture.md, "Known caveats"): that their prompts are recognised, that the ``.echo``
marker ends every command, that a large output arrives whole, that output on a pipe is not held
back in a buffer, and that the console break (Ctrl+Break, with and without a console to share)
breaks in. So this drives the real engine (``SessionManager``/``DebuggerSession``, the same path
the server's tools take) through each of those on the user's own machine, and prints one report
with versions, platform, backend and a figure per check: pasted into an issue, it says what
works there and what does not. ``--simulate`` runs it against the simulator (how it is tested).

Targets: cdb launches a trivial process (this Python, sleeping) unless ``--dump`` names a
minidump; kd needs a target: the KDNET state file (``--state-file``, or the usual place) or
``--dump`` with a kernel dump. A dump cannot run, so break-in and continue are skipped there.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass

from kdmcp import __version__
from kdmcp.console import BackendName, Console, SpawnSpec, open_console
from kdmcp.engine import DumpTarget, KdnetTarget, ProcessTarget, Target, build_plan, simulator_command
from kdmcp.engine.launch import Flavor, kdnet_target
from kdmcp.errors import CheckFailed, DebuggerError, InvalidArgument
from kdmcp.selftest_checks import Check, run_checks

__all__ = ["Variant", "add_arguments", "run_selftest"]

# A process that sits still for as long as any selftest takes, and exists wherever kd-mcp runs.
_IDLE_PROCESS = [sys.executable, "-c", "import time; time.sleep(600)"]

ConsoleFactory = Callable[[SpawnSpec, BackendName], Console]


@dataclass(frozen=True)
class Variant:
    """One way of running the debugger: a console backend, and how the break reaches it."""

    label: str
    backend: BackendName
    factory: ConsoleFactory = open_console


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debugger", choices=["cdb", "kd"],
                        help="which debugger to check (default: cdb if discovery finds it, else kd)")
    parser.add_argument("--debugger-path", metavar="EXE", help="this kd.exe/cdb.exe instead of the one discovery finds")
    parser.add_argument("--dump", metavar="FILE", help="run on this dump (cdb: a minidump, kd: a kernel dump)")
    parser.add_argument("--state-file", metavar="FILE", help="kd: the KDNET state file naming the target")
    parser.add_argument("--config", help="config file (default: KDMCP_CONFIG, then the per-user config)")
    parser.add_argument("--simulate", action="store_true", help="check the simulated debugger (no Windows needed)")
    parser.add_argument("--scenario", help="simulator scenario file (with --simulate)")


def run_selftest(parsed: argparse.Namespace) -> int:
    """Run every check, print the report on stdout; 1 when a check failed (the CLI's error line says how many)."""
    from kdmcp.config import load_config

    config = load_config(parsed.config).config
    flavor = _flavor(parsed, config.debuggers.cdb, config.debuggers.kd)
    debugger, where, version = _debugger(parsed, flavor, getattr(config.debuggers, flavor))
    target = _target(parsed, flavor, config.state_file)
    plan = build_plan(debugger, target, symbol_path=config.symbol_path)
    variants = _variants()
    head = [
        ("kd-mcp", __version__),
        ("python", f"{platform.python_version()} ({platform.python_implementation()}, {sys.executable})"),
        ("platform", f"{platform.platform()} ({sys.platform}, {platform.machine() or 'unknown'})"),
        ("debugger", f"{flavor}: {where}" + (f", file version {version}" if version else "")),
        ("command", plan.display),
        ("backends", ", ".join(v.label for v in variants)),
    ]
    out = sys.stdout
    out.write(f"kd-mcp selftest ({'simulated' if parsed.simulate else 'live'})\n")
    for name, value in head:
        out.write(f"  {name:<9} {value}\n")
    out.write("\n")
    out.flush()
    checks: list[Check] = []
    for n, variant in enumerate(variants):
        for check in run_checks(plan, variant.label, variant.backend, variant.factory, full=n == 0):
            checks.append(check)
            out.write(check.line() + "\n")
            out.flush()
    failed = sum(1 for c in checks if c.ok is False)
    passed = sum(1 for c in checks if c.ok is True)
    skipped = len(checks) - failed - passed
    out.write(f"\nresult: {passed} passed, {failed} failed, {skipped} skipped\n")
    out.flush()
    if failed:
        names = ", ".join(f"{c.name} [{c.variant}]" for c in checks if c.ok is False)
        raise CheckFailed(f"selftest: {failed} of {len(checks)} checks failed: {names}")
    return 0


def _flavor(parsed: argparse.Namespace, cdb_setting: str | None, kd_setting: str | None) -> Flavor:
    if parsed.debugger is not None:
        return "kd" if parsed.debugger == "kd" else "cdb"
    if parsed.simulate:
        return "cdb"
    from kdmcp.discovery import find_debugger

    if find_debugger("cdb", cdb_setting).found or not find_debugger("kd", kd_setting).found:
        return "cdb"
    return "kd"


def _debugger(parsed: argparse.Namespace, flavor: Flavor, setting: str | None) -> tuple[list[str], str, str | None]:
    """The debugger's argv prefix, where it came from, and its file version."""
    from kdmcp.discovery import file_version, find_debugger

    if parsed.simulate:
        argv = simulator_command(flavor, parsed.scenario)
        return argv, "the simulator (" + " ".join(argv) + ")", None
    if parsed.debugger_path is not None:
        path = parsed.debugger_path
        if not os.path.isfile(path):
            raise DebuggerError(f"--debugger-path {path}: no such file")
        return [path], f"{path} (--debugger-path)", file_version(path)
    found = find_debugger(flavor, setting)
    if found.path is None:
        raise DebuggerError(f"{flavor}.exe not found (looked in: {'; '.join(found.looked_in)}); install the "
                            "Debugging Tools for Windows, give --debugger-path, or try --simulate")
    return [found.path], f"{found.path} (from {found.source})", file_version(found.path)


def _target(parsed: argparse.Namespace, flavor: Flavor, state_setting: str | None) -> Target:
    if parsed.dump is not None:
        # Checked under --simulate too: the simulated cdb -z would fail every check instead.
        if not os.path.isfile(parsed.dump):
            raise InvalidArgument(f"--dump {parsed.dump}: no such file", file_problem=True)
        return DumpTarget(path=parsed.dump, kernel=flavor == "kd")
    if flavor == "cdb":
        return ProcessTarget(command_line=_IDLE_PROCESS)
    return _kdnet(parsed, state_setting)


def _kdnet(parsed: argparse.Namespace, state_setting: str | None) -> KdnetTarget:
    """kd's live target: the state file's guest (the simulator's demo guest with --simulate)."""
    from kdmcp.statefile import load_state, resolve_state_path

    path, source = resolve_state_path(parsed.state_file, state_setting)
    if parsed.simulate and source == "default" and not path.exists():
        from kdmcp.server.options import demo_state

        state = demo_state()
    else:
        state = load_state(parsed.state_file, state_setting).state
    return kdnet_target(state.port, state.key, None)


def _variants() -> list[Variant]:
    """The backends to check: the default first (it gets every check), then the other break paths.

    Windows: pipes with a console to share (``os.kill(CTRL_BREAK_EVENT)``) and without one (as
    under a GUI MCP client: the ``ctrl_helper`` attaches to kd's hidden console), plus wexpect
    when installed. POSIX: a pty (``^C``) and pipes (SIGINT to kd's process group).
    """
    if sys.platform != "win32":
        return [Variant("pexpect (pty, ^C)", "pexpect"), Variant("pipe (SIGINT to the process group)", "pipe")]
    from kdmcp.selftest_checks import no_console_factory

    variants = [
        Variant("pipe, shared console (Ctrl+Break by os.kill)", "pipe"),
        Variant("pipe, no console (Ctrl+Break by ctrl_helper)", "pipe", no_console_factory),
    ]
    if importlib.util.find_spec("wexpect") is not None:
        variants.append(Variant("wexpect (hidden console)", "wexpect"))
    return variants
