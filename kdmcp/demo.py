"""``kd-mcp demo``: one full debugging loop against the simulator, shown step by step.

It goes through the real MCP path (an in-process client calling the server's tools), so what
it shows is what an agent gets: the structured results, states and events of each call.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
from mcp import Client
from rich.console import Console
from rich.panel import Panel

from kdmcp.config import Config
from kdmcp.server import KdMcpApp, ServerOptions, build_server
from kdmcp.server.render import read_error

_STEPS: list[tuple[str, dict[str, Any], str]] = [
    ("start_from_state", {"timeout_s": 20}, "connect kd.exe to the guest named in the state file"),
    ("break_in", {}, "break in: the guest freezes at nt!DbgBreakPointWithStatus"),
    ("kd_command", {"command": "k"}, "the stack of the current thread"),
    ("kd_command", {"command": "lm"}, "loaded modules"),
    ("resume_for_winrm", {"wait_s": 1.0}, "let the guest run so WinRM answers again"),
    ("break_in", {}, "break in again"),
    ("kd_command", {"command": "!process -1 0"}, "the current process"),
    ("stop_kd", {}, "resume the guest and quit kd"),
]


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


async def _drive(console: Console, scenario: str | None) -> bool:
    app = KdMcpApp(ServerOptions(config=Config(), simulate=True, scenario=scenario))
    server = build_server(app)
    ok = True
    try:
        async with Client(server) as client:
            for name, args, why in _STEPS:
                t0 = time.monotonic()
                result = await client.call_tool(name, args)
                ms = (time.monotonic() - t0) * 1000
                data = (read_error(result) if result.is_error else result.structured_content) or {}
                style = "red" if result.is_error else "green"
                title = f"[{style}]{name}[/]({', '.join(f'{k}={v!r}' for k, v in args.items())}) — {ms:.0f} ms"
                if result.is_error:
                    body = f"[dim]{why}[/]\n[red]{data.get('category')}[/]: {data.get('message')}"
                else:
                    body = f"[dim]{why}[/]\n{_summary(name, data)}"
                console.print(Panel(body, title=title, title_align="left"))
                ok = ok and not result.is_error
    finally:
        await anyio.to_thread.run_sync(app.shutdown)
    return ok


def run_demo(scenario: str | None = None) -> int:
    console = Console()
    console.print("[bold]kd-mcp demo[/]: start_from_state → break_in → kd_command → resume_for_winrm → "
                  "break_in → stop_kd, on the simulated kd.exe\n")
    t0 = time.monotonic()
    ok = anyio.run(_drive, console, scenario)
    console.print(f"\n{'[green]done' if ok else '[red]failed'}[/] in {time.monotonic() - t0:.1f} s")
    return 0 if ok else 1
