"""``kd-mcp demo``: a short real investigation on the simulated machine, shown step by step.

It goes through the real MCP path (an in-process client calling the server's tools), so what
it shows is what an agent gets: the structured results, states and events of each call. The
target is the simulator's world (docs/simulator.md), so each step reads what the one before it
found: break in, find the test driver's client process, look at its threads, read the driver's
dispatch table, put a breakpoint on its IRP_MJ_DEVICE_CONTROL routine, let the guest run until
the client's next IOCTL hits it, and read the stack there.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp_types import TextContent
from rich.console import Console
from rich.panel import Panel

from kdmcp.config import Config
from kdmcp.errors import CheckFailed
from kdmcp.server import KdMcpApp, ServerOptions, build_server
from kdmcp.server.options import demo_state
from kdmcp.server.render import read_error
from kdmcp.statefile import write_state

# (tool, arguments from what earlier steps printed, why); "{name}" fills from _FOUND
_STEPS: list[tuple[str, dict[str, Any], str]] = [
    ("start_from_state", {"state_file": "{state_file}", "timeout_s": 20},
     "connect kd.exe to the guest named in the state file"),
    ("break_in", {}, "break in: the guest freezes at nt!DbgBreakPointWithStatus"),
    ("kd_command", {"command": "!process 0 0 notmyfault64.exe"}, "find the test driver's client process"),
    ("kd_command", {"command": "!process {process} 2"}, "its threads"),
    ("kd_command", {"command": "!drvobj myfault 2"}, "the driver's dispatch table"),
    ("kd_command", {"command": "bp {dispatch}"}, "break where the driver takes IOCTLs"),
    ("resume_for_winrm", {"wait_s": 5.0}, "let the guest run until the client's next IOCTL arrives"),
    ("kd_command", {"command": "k"}, "the stack at the breakpoint: the client's DeviceIoControl"),
    ("kd_command", {"command": "bc *"}, "clear the breakpoint"),
    ("stop_kd", {}, "resume the guest and quit kd"),
]
# what a step's output names, for the steps after it
_FOUND: dict[str, tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = {
    "process": (re.compile(r"^PROCESS ([0-9a-f]{16})", re.M), lambda m: m.group(1)),
    "dispatch": (re.compile(r"IRP_MJ_DEVICE_CONTROL\s+([0-9a-f`]{16,17})"), lambda m: m.group(1)),
}


def _fill(args: dict[str, Any], found: dict[str, str]) -> dict[str, Any] | None:
    """The step's arguments with what earlier steps found; ``None`` if something is missing."""
    out: dict[str, Any] = {}
    for key, value in args.items():
        if isinstance(value, str) and "{" in value:
            names = re.findall(r"\{(\w+)\}", value)
            if any(n not in found for n in names):
                return None
            out[key] = value.format(**found)
        else:
            out[key] = value
    return out


def _summary(name: str, data: dict[str, Any]) -> str:
    state = data.get("state", "")
    parts = [f"state: [bold]{state}[/]"]
    if data.get("prompt"):
        parts.append(f"prompt: {data['prompt']!r}")
    if name == "start_from_state":
        parts.append(f"command line: {data.get('command_line')}")
    if "output" in data:
        lines = data["output"].splitlines()
        shown = "\n".join(lines[:12]) + (f"\n… {len(lines) - 12} more lines" if len(lines) > 12 else "")
        parts.append(shown)
    if "hint" in data:
        parts.append(f"hint: {data['hint']}")
    if "actions" in data:
        parts.append("actions: " + ", ".join(data["actions"]))
    events = data.get("events") or []
    if events:
        parts.append("events: " + ", ".join(e["kind"] for e in events))
    return "\n".join(parts)


async def _drive(console: Console, scenario: str | None, state_file: Path) -> bool:
    # the demo is a program reading the typed results: it asks for structuredContent
    app = KdMcpApp(ServerOptions(config=Config(), simulate=True, scenario=scenario, structured=True))
    server = build_server(app)
    ok = True
    try:
        async with Client(server) as client:
            # The simulator's own guest, named outright: a KDMCP_STATE_FILE or config of the
            # user's (the real guest's) must not be what the demo connects to.
            found: dict[str, str] = {"state_file": str(state_file)}
            for name, template, why in _STEPS:
                args = _fill(template, found)
                if args is None:
                    console.print(f"[red]{name}: an earlier step did not show what this one needs[/]")
                    return False
                t0 = time.monotonic()
                result = await client.call_tool(name, args)
                ms = (time.monotonic() - t0) * 1000
                data = (read_error(result) if result.is_error else result.structured_content) or {}
                if not result.is_error:  # what the model reads under the header: kd's output, the typed lines
                    text = "".join(block.text for block in result.content if isinstance(block, TextContent))
                    data = {**data, "output": text.partition("\n")[2]}
                style = "red" if result.is_error else "green"
                title = f"[{style}]{name}[/]({', '.join(f'{k}={v!r}' for k, v in args.items())}) — {ms:.0f} ms"
                if result.is_error:
                    body = f"[dim]{why}[/]\n[red]{data.get('category')}[/]: {data.get('message')}"
                else:
                    body = f"[dim]{why}[/]\n{_summary(name, data)}"
                console.print(Panel(body, title=title, title_align="left"))
                ok = ok and not result.is_error
                for key, (pattern, pick) in _FOUND.items():
                    if key not in found and (m := pattern.search(str(data.get("output", "")))):
                        found[key] = pick(m)
    finally:
        await anyio.to_thread.run_sync(app.shutdown)
    return ok


def run_demo(scenario: str | None = None) -> int:
    console = Console()
    console.print("[bold]kd-mcp demo[/]: break in, find a process and its threads, read a driver's "
                  "dispatch table, stop on its IOCTL routine — on the simulated machine\n")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kdmcp-demo-") as work:
        state_file = write_state(Path(work) / "kd-session.yaml", demo_state())
        ok = anyio.run(_drive, console, scenario, state_file)
    console.print(f"\n{'[green]done' if ok else '[red]failed'}[/] in {time.monotonic() - t0:.1f} s")
    if not ok:
        raise CheckFailed("demo: a step failed (its panel above says which and why)")
    return 0
