"""``kd-mcp``: serve (stdio, the default), doctor, demo, state write, and the simulator.

In stdio mode stdout belongs to MCP: everything for people goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from kdmcp import __version__
from kdmcp.errors import KdMcpError

if TYPE_CHECKING:  # the server pulls in the MCP SDK: not needed for `kd-mcp sim`
    from kdmcp.server import ServerOptions

_COMMANDS = ("serve", "doctor", "demo", "state", "transcript", "parse", "sim")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="config file (default: KDMCP_CONFIG, then the per-user config)")
    parser.add_argument("--simulate", action="store_true",
                        help="use the simulated kd.exe/cdb.exe and a demo state file: no Windows needed")
    parser.add_argument("--scenario", help="simulator scenario file (with --simulate)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kd-mcp",
        description="MCP server that drives Microsoft's console debuggers (kd.exe, cdb.exe).",
    )
    parser.add_argument("--version", action="version", version=f"kd-mcp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser("serve", help="run the MCP server on stdio (the default command)")
    _common(serve)
    serve.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    serve.add_argument("--tools", help="tool groups to serve, comma-separated: session (always), control, "
                       "commands, output (default: all)")
    serve.add_argument("--listen", metavar="HOST:PORT",
                       help="serve Streamable HTTP instead of stdio (token from KDMCP_LISTEN_TOKEN or --token-file)")
    serve.add_argument("--token-file", help="listener clients: {name: {token, tools, policy}} (YAML)")
    serve.add_argument("--allow-remote-bind", action="store_true",
                       help="let --listen bind a non-loopback address (prefer ssh -L)")
    serve.add_argument("--transcript", help="append a JSONL transcript here (default: $KDMCP_TRANSCRIPT)")
    transcript = sub.add_parser("transcript", help="read a transcript")
    transcript_sub = transcript.add_subparsers(dest="transcript_command", metavar="ACTION", required=True)
    show = transcript_sub.add_parser("show", help="print a transcript as a table")
    show.add_argument("file")
    cast = transcript_sub.add_parser("cast", help="convert a transcript to an asciicast v2 recording")
    cast.add_argument("file")
    cast.add_argument("-o", "--output", required=True, help="the .cast file to write")
    doctor = sub.add_parser("doctor", help="check debuggers, config and state file")
    _common(doctor)
    demo = sub.add_parser("demo", help="drive one full debugging loop against the simulator")
    demo.add_argument("--scenario", help="simulator scenario file")
    state = sub.add_parser("state", help="state file tools")
    state_sub = state.add_subparsers(dest="state_command", metavar="ACTION", required=True)
    write = state_sub.add_parser("write", help="write a winrm-kd-session-v1 state file (key from "
                                 "KDMCP_KDNET_KEY or a prompt, never from the command line)")
    write.add_argument("--path", help="where to write (default: the usual state file location)")
    write.add_argument("--guest-host", required=True)
    write.add_argument("--host-ip", required=True)
    write.add_argument("--port", type=int, required=True)
    parse = sub.add_parser("parse", help="parse kd/cdb output into typed records (JSON on stdout)")
    parse.add_argument("file", nargs="?", default="-", help="the output or a console transcript (- for stdin)")
    parse.add_argument("--command", dest="for_command", metavar="CMD",
                       help="the command that printed FILE: print its one record; without it, FILE is a "
                       "transcript and each prompt/command/output block is printed")
    sub.add_parser("sim", help="run the simulated debugger: kd-mcp sim {kd|cdb} [options] [--scenario FILE]",
                   add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "sim":
        from kdmcp.sim.cli import main as sim_main

        return sim_main(args[1:])
    if not args or (args[0] not in _COMMANDS and args[0] not in ("-h", "--help", "--version")):
        args = ["serve", *args]  # `kd-mcp --simulate` is `kd-mcp serve --simulate`
    parsed = build_parser().parse_args(args)
    try:
        if parsed.command == "serve":
            return _serve(parsed)
        if parsed.command == "doctor":
            return _doctor(parsed)
        if parsed.command == "demo":
            from kdmcp.demo import run_demo

            return run_demo(parsed.scenario)
        if parsed.command == "state":
            return _state_write(parsed)
        if parsed.command == "parse":
            return _parse(parsed)
        if parsed.command == "transcript":
            from kdmcp.transcript_view import cast_transcript, show_transcript

            if parsed.transcript_command == "show":
                return show_transcript(parsed.file)
            return cast_transcript(parsed.file, parsed.output)
    except KdMcpError as exc:
        sys.stderr.write(f"kd-mcp: {exc.category}: {exc.message}\n")
        return 2
    build_parser().print_help(sys.stderr)
    return 2


def _options(parsed: argparse.Namespace) -> ServerOptions:
    from kdmcp.config import load_config
    from kdmcp.server import ServerOptions

    loaded = load_config(parsed.config)
    return ServerOptions(
        config=loaded.config,
        config_path=str(loaded.path) if loaded.path is not None else None,
        simulate=parsed.simulate,
        scenario=parsed.scenario,
    )


def _serve(parsed: argparse.Namespace) -> int:
    import dataclasses

    import anyio

    from kdmcp.server import KdMcpApp, build_server
    from kdmcp.server.logs import configure_logging
    from kdmcp.server.surface import ALL_GROUPS, tools_for

    options = _options(parsed)
    groups = parsed.tools.split(",") if parsed.tools else list(ALL_GROUPS)
    options = dataclasses.replace(options, tools=tools_for(groups),
                                  transcript=parsed.transcript or os.environ.get("KDMCP_TRANSCRIPT") or None)
    if parsed.listen:
        from kdmcp.server.clients import load_clients
        from kdmcp.server.listener import serve_http

        clients, warnings = load_clients(parsed.token_file)
        for warning in warnings:
            sys.stderr.write(f"kd-mcp: warning: {warning}\n")
        options = dataclasses.replace(options, clients=clients)
    app = KdMcpApp(options)
    configure_logging(parsed.log_level, app)
    try:
        if parsed.listen:
            return serve_http(app, parsed.listen, parsed.allow_remote_bind)
        anyio.run(build_server(app).run_stdio_async)
    except KeyboardInterrupt:
        pass
    finally:
        app.shutdown()
    return 0


def _doctor(parsed: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from kdmcp.server import KdMcpApp

    app = KdMcpApp(_options(parsed))
    health = app.health_check()
    console = Console(stderr=True)
    table = Table(title=f"kd-mcp {__version__} doctor" + (" (simulated)" if health.simulated else ""))
    table.add_column("check")
    table.add_column("result")
    for dbg in health.debuggers:
        where = f"{dbg.path} ({dbg.source})" if dbg.found else "not found: " + "; ".join(dbg.looked_in)
        table.add_row(f"{dbg.name}.exe", ("[green]ok[/] " if dbg.found else "[red]missing[/] ") + where
                      + (f" — {dbg.version}" if dbg.version else ""))
    table.add_row("config", f"[green]ok[/] {health.config_path or '(defaults)'}")
    if health.state_file_ok:
        warn = "".join(f"\n[yellow]warning[/] {w}" for w in health.state_file_warnings)
        table.add_row("state file", f"[green]ok[/] {health.state_file}{warn}")
    else:
        table.add_row("state file", f"[red]problem[/] {health.state_file_error}")
    console.print(table)
    return 0 if health.ok else 1


def _parse(parsed: argparse.Namespace) -> int:
    """The parser the server uses, on a file: one record, or one block per prompt line."""
    import json

    from kdmcp.parse import parse, parse_transcript

    if parsed.file == "-":
        text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    else:
        with open(parsed.file, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
    if parsed.for_command is not None:
        sys.stdout.write(parse(parsed.for_command, text).model_dump_json(indent=2) + "\n")
        return 0
    blocks = [
        {"prompt": block.prompt_text, "command": block.command, "record": block.record.model_dump(mode="json")}
        for block in parse_transcript(text)
    ]
    sys.stdout.write(json.dumps(blocks, indent=2) + "\n")
    return 0


def _state_write(parsed: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from kdmcp.errors import InvalidArgument
    from kdmcp.statefile import (
        KdSessionState,
        default_state_path,
        describe_validation_error,
        read_key_interactively,
        write_state,
    )

    key = read_key_interactively()
    try:  # the same rules the server applies when it reads the file back (kdmcp.argvalues)
        state = KdSessionState(
            schema="winrm-kd-session-v1", guest_host=parsed.guest_host, host_ip=parsed.host_ip,
            port=parsed.port, key=key, created_by="kd-mcp state write",
        )
    except ValidationError as exc:
        raise InvalidArgument("; ".join(describe_validation_error(exc))) from None
    path = parsed.path or str(default_state_path())
    write_state(path, state)
    sys.stderr.write(f"kd-mcp: wrote {path} (owner-only)\n")
    return 0

