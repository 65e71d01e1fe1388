"""Scenario files: which target the simulator pretends to be and how it answers.

A scenario names the target (OS build, architecture, processors, the KDNET key and port it
accepts), the canned response of each command (text modelled on real transcripts, plus fault
knobs), and the script of what happens while the target runs after ``g``. Files live under
``fixtures/scenarios/``; the built-in defaults ship inside the package (``data/``) so an
installed ``kd-mcp`` can simulate with no checkout.

The schema is stdlib dataclasses read by :mod:`~kdmcp.sim.schema`, not pydantic models: the
simulator is a program every test starts many times, and pydantic's import alone costs it a
quarter of a second of its start-up; the checks are the same (unknown keys refused, types,
choices and bounds), and an error names the key, as the CLI reports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml

from kdmcp.sim.schema import ScenarioError, bounded, read

__all__ = ["Connect", "Response", "RunEvent", "Scenario", "ScenarioError", "Target", "WorldConfig", "builtin", "load"]


@dataclass
class Target:
    """The simulated machine, as kd's connect banner and ``vertarget`` describe it."""

    os_name: str = "Windows 10"
    build: int = 19041
    build_lab: str = "19041.1.amd64fre.vb_release.191206-1406"
    arch: Literal["x64", "x86", "arm64"] = "x64"
    processors: int = bounded(4, ge=1, le=64)
    ip: str = "127.0.0.2"
    kernel_base: str = "fffff800`62600000"
    ps_loaded_module_list: str = "fffff800`6322a230"
    break_symbol: str = "nt!DbgBreakPointWithStatus"
    break_address: str = "fffff800`62a05c20"


@dataclass
class Connect:
    """Which KDNET settings the target accepts and how long connecting takes."""

    key: str | None = None  # None: any well-formed key
    port: int | None = None  # None: any port
    delay_ms: int = bounded(30, ge=0)


@dataclass
class Response:
    """A canned command response and its fault knobs.

    ``text`` is printed as-is (newlines become the console's line ends). ``bulk_mb`` appends
    that many MB of generated ``dq``-style lines; ``binary_hex`` appends raw bytes (invalid
    UTF-8, NULs) that YAML text cannot hold; ``die_after_bytes`` prints only that much and
    then exits with ``exit_code`` (a debugger crash mid-output); ``hang`` never prints a
    prompt — ``soft`` until Ctrl+C, ``hard`` forever; ``latency_ms`` delays the answer.
    ``effect`` makes the command change the target like a go-class command would.
    """

    text: str = ""
    bulk_mb: float = bounded(0.0, ge=0, le=4096)
    binary_hex: str = ""
    latency_ms: int = bounded(0, ge=0)
    hang: Literal["soft", "hard"] | None = None
    die_after_bytes: int | None = bounded(None, ge=0)
    exit_code: int = 3
    effect: Literal["go", "reboot", "bugcheck", "transport_loss"] | None = None


@dataclass
class RunEvent:
    """Something the target does while running, ``after_ms`` after the previous event.

    ``dbgprint`` prints ``text`` and keeps running (``newline: false`` prints it without the
    line end a text lacks, so what follows -- the next stop's banner or prompt -- is glued to
    it, as a driver's ``DbgPrint("...")`` without ``\\n`` leaves kd's console);
    ``breakpoint``/``bugcheck``/``exception`` stop the target (banner, location, prompt; a
    bugcheck's ``processor`` is the one that crashed, and the prompt moves there: ``1: kd>``);
    ``reboot`` restarts it; ``transport_loss`` makes KDNET give up; ``exit`` ends the debugger
    with ``exit_code``.
    """

    kind: Literal["dbgprint", "breakpoint", "bugcheck", "reboot", "transport_loss", "exit"]
    after_ms: int = bounded(0, ge=0)
    text: str = ""
    newline: bool = True
    breakpoint: int = 0
    processor: int | None = bounded(None, ge=0, le=63)
    bugcheck_code: int = 0x0A
    bugcheck_args: list[int] = field(default_factory=lambda: [0, 2, 0, 0xFFFFF80062A1B2C3])
    exit_code: int = 0


@dataclass
class WorldConfig:
    """The simulated machine behind the prompt (kdmcp/sim/world, docs/simulator.md)."""

    enabled: bool = True  # False: only the scenario's responses answer (a phrasebook target)
    seed: int = bounded(0, ge=0)
    # What a launched cdb program does after g (kdmcp/sim/world/user_program.py): "fault" runs
    # into its access violation; "exits" loads a DLL, throws and catches a C++ exception,
    # unloads the DLL, lets its worker thread exit, and ends.
    program: Literal["fault", "exits"] = "fault"


@dataclass
class Scenario:
    """Everything the simulator needs to play one target."""

    name: str = "default"
    target: Target = field(default_factory=Target)
    connect: Connect = field(default_factory=Connect)
    reboot_delay_ms: int = bounded(100, ge=0)
    reconnect_after_loss_ms: int | None = None
    # The first N break-in requests (Ctrl+C) while the target runs get no answer, as when a
    # KDNET break packet is lost on the wire: a client has to ask again.
    lost_break_ins: int = bounded(0, ge=0)
    # kd prints "KDTARGET: Refreshing KD connection" before the first stop after each connect
    # (real sessions: set1 connect/a_13, misc/a_12, exceptions_errors/a_14).
    refresh_kd_connection: bool = False
    # Script played after each go, cycling from the start; empty: run until Ctrl+C.
    on_go: list[RunEvent] = field(default_factory=list)
    responses: dict[str, Response] = field(default_factory=dict)
    world: WorldConfig = field(default_factory=WorldConfig)
    # Responses of the other built-in scenario to merge under these (so a fixture can say
    # only what differs from the default kd target).
    extends: Literal["default_kd", "default_cdb"] | None = None

    def response_for(self, command: str) -> Response | None:
        """The canned response for ``command``: exact, then case-insensitive, then none.

        kd's commands are case-insensitive for the command word but not for arguments (a
        symbol ``nt!KiSystemStartup``), so the exact form wins when both exist.
        """
        key = " ".join(command.split())
        if key in self.responses:
            return self.responses[key]
        lowered = key.lower()
        for name, response in self.responses.items():
            if name.lower() == lowered:
                return response
        return None


def _load_yaml(text: str) -> Scenario:
    data = yaml.safe_load(text) or {}
    scenario = read(Scenario, data)
    if scenario.extends is not None:
        base = builtin(scenario.extends)
        merged = dict(base.responses)
        merged.update(scenario.responses)
        scenario = replace(scenario, responses=merged)
    return scenario


def builtin(name: Literal["default_kd", "default_cdb"]) -> Scenario:
    """A scenario shipped inside the package."""
    text = resources.files("kdmcp.sim").joinpath("data").joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    return _load_yaml(text)


def load(path: str | Path) -> Scenario:
    """Load and validate a scenario file (:class:`ScenarioError` names the bad key)."""
    return _load_yaml(Path(path).read_text(encoding="utf-8"))
