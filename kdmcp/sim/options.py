"""Command line of the simulator: the real kd/cdb options, plus ``--scenario``.

Only the options kd-mcp builds (and a few common ones) are understood; anything else that
looks like an option is accepted and ignored, as the real debuggers tolerate many flags we
have no behaviour for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

# "four dot-separated base-36 words of 1-13 characters" (kdnet.exe's key format).
KDNET_KEY_RE = re.compile(r"[0-9a-z]{1,13}(?:\.[0-9a-z]{1,13}){3}", re.IGNORECASE)

# Options that take a value in kd/cdb.
_VALUE_OPTIONS = {"-y", "-i", "-srcpath", "-logo", "-logou", "-loga", "-lsrcpath", "-a", "-t", "-z",
                  "-p", "-pn", "-remote", "-server", "-c", "-k", "-cf", "-ee", "-sfce"}


@dataclass
class SimOptions:
    """What the command line asked for."""

    flavor: Literal["kd", "cdb"]
    mode: Literal["kdnet", "kdcom", "local", "dump", "attach", "launch", "remote"]
    port: int | None = None
    key: str | None = None
    target_host: str | None = None
    dump_path: str | None = None
    pid: int | None = None
    command_line: str | None = None
    remote: str | None = None
    server: str | None = None
    symbol_path: str | None = None
    initial_commands: str | None = None
    initial_break: bool = False
    ignore_initial_break: bool = False  # cdb -g: "ignores the initial breakpoint in the target application"
    noshell: bool = False
    scenario_path: str | None = None
    extra: list[str] = field(default_factory=list)
    # How the debugger's command line reads back in its own output (``version``).
    command_line_echo: str = ""


class UsageError(Exception):
    """The command line is one the real debugger would reject."""


def option_pairs(text: str) -> list[tuple[str, str]]:
    """The ``name=value`` parts of a debugger option string (``-k net:…``, ``-server``, ``-remote``),
    in order, names in lower case, blanks around each part dropped."""
    pairs = []
    for part in text.split(","):
        name, _, value = part.partition("=")
        pairs.append((name.strip().lower(), value.strip()))
    return pairs


def parse_kdnet(spec: str) -> tuple[int | None, str | None, str | None]:
    """Split ``net:port=N,key=K[,target=H]`` into its parts (None where absent or malformed)."""
    params = dict(option_pairs(spec[len("net:"):]))
    port: int | None = None
    if params.get("port", "").isdigit():
        port = int(params["port"])
    return port, params.get("key"), params.get("target")


def parse_args(argv: list[str]) -> SimOptions:
    if not argv or argv[0] not in ("kd", "cdb"):
        raise UsageError("usage: python -m kdmcp.sim {kd|cdb} [debugger options] [--scenario FILE]")
    flavor: Literal["kd", "cdb"] = "kd" if argv[0] == "kd" else "cdb"
    values: dict[str, str] = {}
    flags: set[str] = set()
    rest: list[str] = []
    scenario_path: str | None = None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--scenario":
            if i + 1 >= len(argv):
                raise UsageError("--scenario needs a file")
            scenario_path = argv[i + 1]
            i += 2
            continue
        if rest:  # after the executable name everything belongs to the debuggee
            rest.append(arg)
        elif arg.lower() in _VALUE_OPTIONS:
            if i + 1 >= len(argv):
                raise UsageError(f"{arg} needs a value")
            values[arg.lower()] = argv[i + 1]
            i += 2
            continue
        elif arg.startswith("-"):
            flags.add(arg.lower())
        else:
            rest.append(arg)
        i += 1

    opts = SimOptions(flavor=flavor, mode="launch", scenario_path=scenario_path)
    exe = f'"C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x64\\{flavor}.exe"'
    shown = [a for i, a in enumerate(argv[1:], 1) if a != "--scenario" and argv[i - 1] != "--scenario"]
    opts.command_line_echo = " ".join([exe, *shown])
    opts.symbol_path = values.get("-y")
    opts.initial_commands = values.get("-c")
    opts.initial_break = bool(flags & {"-b", "-bonc"})
    opts.ignore_initial_break = "-g" in flags
    opts.noshell = "-noshell" in flags
    opts.server = values.get("-server")
    if "-k" in values:
        spec = values["-k"]
        if spec.lower().startswith("net:"):
            opts.mode = "kdnet"
            opts.port, opts.key, opts.target_host = parse_kdnet(spec)
        else:
            opts.mode = "kdcom"
    elif "-kl" in flags:
        opts.mode = "local"
    elif "-remote" in values:
        opts.mode = "remote"
        opts.remote = values["-remote"]
    elif "-z" in values:
        opts.mode = "dump"
        opts.dump_path = values["-z"]
    elif "-p" in values:
        opts.mode = "attach"
        if not values["-p"].isdigit():
            raise UsageError(f"-p needs a process id, not {values['-p']!r}")
        opts.pid = int(values["-p"])
    elif rest and flavor == "cdb":
        opts.mode = "launch"
        opts.command_line = " ".join(rest)
    else:
        raise UsageError(f"{flavor}: no debug target given (-k, -kl, -z, -p, -remote or an executable)")
    return opts
