"""``kd-mcp``: serve (stdio, the default), doctor, demo, selftest, state write, watch, triage, and the simulator.

In stdio mode stdout belongs to MCP: everything for people goes to stderr. Every way a command
can fail ends in one ``kd-mcp: error: ...`` line and one of the exit codes in ``EXIT_CODES``,
never a traceback: a person reads the line, a script branches on the code.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import os
import sys
from typing import TYPE_CHECKING, NoReturn

from kdmcp import __version__
from kdmcp.errors import CheckFailed, KdMcpError

if TYPE_CHECKING:  # the server pulls in the MCP SDK: not needed for `kd-mcp sim`
    from kdmcp.server import KdMcpServer, ServerOptions

_COMMANDS = ("serve", "doctor", "demo", "selftest", "state", "transcript", "watch", "parse", "triage", "sim")

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_ENVIRONMENT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
# What each code means, for `kd-mcp --help` and the README (a test holds them equal).
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success (serve: stopped by the client, end of input, Ctrl+C, SIGTERM or SIGHUP)",
    EXIT_CHECK_FAILED: "a check failed: doctor found a problem, a selftest check or a demo step failed",
    EXIT_USAGE: "the command line or a value on it is wrong (also a bad config file)",
    EXIT_ENVIRONMENT: "the machine refused: a file missing or unreadable, a port in use, a debugger "
                      "not found or not startable, a bad state file",
    EXIT_INTERNAL: "a bug in kd-mcp (please report it with the command line)",
    EXIT_INTERRUPTED: "interrupted (Ctrl+C) before it finished; serve: a second signal forced the shutdown",
}
# Error categories (kdmcp.errors) that are the caller's to fix on the command line; every other
# category is about the machine or the debugger.
_USAGE_CATEGORIES = frozenset({"invalid_argument", "config", "policy_denied"})


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors read ``kd-mcp: error: ...`` in every subcommand.

    A subparser's prog is ``kd-mcp serve``, so argparse would say ``kd-mcp serve: error:``;
    one spelling lets a script (and the tests) find the one error line.
    """

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"kd-mcp: error: {message}\n")


def _epilog() -> str:
    width = max(len(str(code)) for code in EXIT_CODES)
    return "exit codes:\n" + "\n".join(f"  {code:>{width}}  {text}" for code, text in EXIT_CODES.items())


def _groups_help() -> str:
    """The ``--tools`` help, from the one list of groups (kdmcp.server.surface)."""
    from kdmcp.server.registry import tool_groups

    parts = [f"{group} ({', '.join(tools)})" for group, tools in tool_groups().items()]
    return ("tool groups to serve, comma-separated; session is always served. Groups: " + "; ".join(parts)
            + " (default: all)")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="config file (default: KDMCP_CONFIG, then the per-user config)")
    parser.add_argument("--simulate", action="store_true",
                        help="use the simulated kd.exe/cdb.exe and a demo state file: no Windows needed")
    parser.add_argument("--scenario", help="simulator scenario file (with --simulate)")


def build_parser(describe_groups: bool = True, command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line. ``describe_groups``: list each tool group's tools in ``serve --help``
    (``main`` asks for it only when help is wanted). ``command``: the subcommand run; selftest's own
    arguments (its module imports the engine) are added only for it, not on a server's start."""
    parser = _Parser(
        prog="kd-mcp",
        description="MCP server that drives Microsoft's console debuggers (kd.exe, cdb.exe).",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kd-mcp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser("serve", help="run the MCP server on stdio (the default command)")
    _common(serve)
    serve.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    serve.add_argument("--tools", metavar="GROUPS", help=_groups_help() if describe_groups else
                       "tool groups to serve, comma-separated (kd-mcp serve --help lists them)")
    serve.add_argument("--listen", metavar="HOST:PORT",
                       help="serve Streamable HTTP instead of stdio (token from KDMCP_LISTEN_TOKEN or --token-file)")
    serve.add_argument("--token-file", help="listener clients: {name: {token, tools, policy}} (YAML)")
    serve.add_argument("--allow-remote-bind", action="store_true",
                       help="let --listen bind a non-loopback address (prefer ssh -L)")
    serve.add_argument("--transcript", help="append a JSONL transcript here (default: $KDMCP_TRANSCRIPT)")
    serve.add_argument("--structured", action="store_true",
                       help="also send structuredContent (typed results, for programs; default: $KDMCP_STRUCTURED=1)")
    transcript = sub.add_parser("transcript", help="read a transcript")
    transcript_sub = transcript.add_subparsers(dest="transcript_command", metavar="ACTION", required=True)
    show = transcript_sub.add_parser("show", help="print a transcript as a table")
    show.add_argument("file")
    cast = transcript_sub.add_parser("cast", help="convert a transcript to an asciicast v2 recording")
    cast.add_argument("file")
    cast.add_argument("-o", "--output", required=True, help="the .cast file to write")
    watch = sub.add_parser("watch", help="watch the sessions and tool calls of a server with a transcript, "
                           "live (read-only; run it in another terminal)")
    watch.add_argument("session", nargs="?", metavar="SESSION",
                       help="the session whose console to show (default: the most recently active)")
    watch.add_argument("--transcript", help="the server's transcript (default: $KDMCP_TRANSCRIPT)")
    watch.add_argument("--once", action="store_true", help="print one frame and exit")
    watch.add_argument("--lines", type=_positive, metavar="N",
                       help="console lines to show (default: as many as fit the terminal; 20 with --once)")
    doctor = sub.add_parser("doctor", help="check debuggers, config and state file")
    _common(doctor)
    demo = sub.add_parser("demo", help="drive one full debugging loop against the simulator")
    demo.add_argument("--scenario", help="simulator scenario file")
    selftest = sub.add_parser(
        "selftest", help="check the real debugger on this machine and print a report to paste into a bug")
    if command in (None, "selftest"):
        importlib.import_module("kdmcp.selftest").add_arguments(selftest)
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
    from kdmcp.triage_cli import add_arguments as add_triage_arguments

    triage = sub.add_parser("triage", help="triage many crash dumps: buckets, failures, a JSONL of records "
                            "(docs/triage.md)")
    _common(triage)
    add_triage_arguments(triage)
    sub.add_parser("sim", help="run the simulated debugger: kd-mcp sim {kd|cdb} [options] [--scenario FILE]",
                   add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; whatever goes wrong ends in one error line and an ``EXIT_CODES`` code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "sim":
        return _sim(args[1:])
    if not args or (args[0] not in _COMMANDS and args[0] not in ("-h", "--help", "--version")):
        args = ["serve", *args]  # `kd-mcp --simulate` is `kd-mcp serve --simulate`
    helps = any(arg in ("-h", "--help") for arg in args)
    parsed = build_parser(helps, args[0] if args[0] in _COMMANDS else None).parse_args(args)
    try:
        return _run(parsed)
    except CheckFailed as exc:  # the report is printed whole; this is its verdict
        return _error(str(exc), EXIT_CHECK_FAILED)
    except KdMcpError as exc:
        usage = exc.category in _USAGE_CATEGORIES and not exc.file_problem  # a missing file: one code everywhere
        return _error(f"{exc.category}: {exc.message}", EXIT_USAGE if usage else EXIT_ENVIRONMENT)
    except OSError as exc:  # a file the user named, a port, a pipe: the machine said no
        return _error(_os_error_text(exc), EXIT_ENVIRONMENT)
    except KeyboardInterrupt:
        return _error("interrupted", EXIT_INTERRUPTED)
    except Exception as exc:  # a bug: still one line (KDMCP_TRACEBACK=1 shows the traceback)
        if os.environ.get("KDMCP_TRACEBACK"):
            raise
        return _error(f"internal error: {type(exc).__name__}: {exc} (set KDMCP_TRACEBACK=1 for the traceback)",
                      EXIT_INTERNAL)


def _run(parsed: argparse.Namespace) -> int:
    if parsed.command == "serve":  # no cyclic GC till the server is built: ~2 % of a start's work
        gc.disable()  # (the SDK's import leaves ~118,000 objects, 767 garbage: docs/performance.md)
        try:
            return _serve(parsed)
        finally:
            gc.enable()
    if getattr(parsed, "scenario", None):
        _check_scenario(parsed.scenario)
    if parsed.command == "doctor":
        return _doctor(parsed)
    if parsed.command == "demo":
        from kdmcp.demo import run_demo

        return run_demo(parsed.scenario)
    if parsed.command == "selftest":
        from kdmcp.selftest import run_selftest

        return run_selftest(parsed)
    if parsed.command == "state":
        return _state_write(parsed)
    if parsed.command == "parse":
        return _parse(parsed)
    if parsed.command == "watch":
        return _watch(parsed)
    if parsed.command == "triage":
        from kdmcp.triage_cli import run as run_triage

        return run_triage(parsed, _options(parsed))
    if parsed.command == "transcript":
        from kdmcp.transcript_view import cast_transcript, show_transcript

        if parsed.transcript_command == "show":
            return show_transcript(parsed.file)
        return cast_transcript(parsed.file, parsed.output)
    build_parser().print_help(sys.stderr)
    return EXIT_USAGE


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def _watch(parsed: argparse.Namespace) -> int:
    """``kd-mcp watch``: the transcript named, or the server's own variable, else how to get one."""
    from pathlib import Path

    from kdmcp.transcript_files import ENV_TRANSCRIPT
    from kdmcp.watch import WatchRefused, run_watch

    path = parsed.transcript or os.environ.get(ENV_TRANSCRIPT)
    if not path:
        return _error(f"no transcript to watch: start the server with one (kd-mcp serve --transcript PATH, or "
                      f"{ENV_TRANSCRIPT}=PATH in its environment), then run kd-mcp watch --transcript PATH "
                      f"(or with {ENV_TRANSCRIPT} set)", EXIT_USAGE)
    try:
        return run_watch(Path(path), parsed.session, once=parsed.once, lines=parsed.lines)
    except WatchRefused as exc:
        return _error(str(exc), EXIT_ENVIRONMENT)


def _check_scenario(path: str) -> None:
    """Load a ``--scenario`` file once here: its mistake is then one line, not a failed session.

    Otherwise the simulator, started inside a session, dies with it, and the user sees a debugger
    that "exited during start" instead of the file's name and the key that is wrong.
    """
    import yaml

    from kdmcp.errors import InvalidArgument
    from kdmcp.sim import scenario as scenario_mod
    from kdmcp.sim.schema import ScenarioError

    try:
        scenario_mod.load(path)
    except ScenarioError as exc:
        raise InvalidArgument(f"scenario {path}: " + "; ".join(exc.problems)) from None
    except yaml.YAMLError as exc:
        raise InvalidArgument(f"scenario {path}: not YAML ({exc})") from None


def _error(message: str, code: int) -> int:
    sys.stderr.write(f"kd-mcp: error: {' '.join(message.split())}\n")
    return code


def _os_error_text(exc: OSError) -> str:
    """``cannot open /x: No such file or directory``, not ``[Errno 2] ...: '/x'``."""
    what = exc.strerror or str(exc)
    return f"{exc.filename}: {what}" if exc.filename else what


def _sim(args: list[str]) -> int:
    """``kd-mcp sim``: the simulator's own command line, its usage errors in kd-mcp's words."""
    import yaml

    from kdmcp.sim import scenario as scenario_mod
    from kdmcp.sim.cli import main as sim_main
    from kdmcp.sim.options import UsageError, parse_args

    try:  # checked here too, so a mistake is one `kd-mcp: error:` line (the simulator says it bare)
        opts = parse_args(args)
        if opts.scenario_path is not None:
            scenario_mod.load(opts.scenario_path)
    except OSError as exc:
        return _error(f"scenario {_os_error_text(exc)}", EXIT_ENVIRONMENT)
    except (UsageError, ValueError, yaml.YAMLError) as exc:
        return _error(str(exc), EXIT_USAGE)
    return sim_main(args)


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
    early = importlib.import_module("kdmcp.prelude").serve_prelude(parsed)  # before the SDK is imported
    import anyio

    from kdmcp.server import KdMcpApp, build_server
    from kdmcp.server.logs import configure_logging
    from kdmcp.server.registry import ALL_GROUPS, tools_for
    from kdmcp.shutdown import ServeExit
    from kdmcp.transcript_files import ENV_TRANSCRIPT

    if parsed.scenario:
        _check_scenario(parsed.scenario)
    options = _options(parsed)
    groups = parsed.tools.split(",") if parsed.tools else list(ALL_GROUPS)
    options = dataclasses.replace(options, tools=tools_for(groups),
                                  transcript=parsed.transcript or os.environ.get(ENV_TRANSCRIPT) or None,
                                  structured=parsed.structured or os.environ.get("KDMCP_STRUCTURED") == "1")
    if parsed.listen:
        from kdmcp.server.clients import load_clients
        from kdmcp.server.listener import serve_http

        clients, warnings = load_clients(parsed.token_file)
        for warning in warnings:
            sys.stderr.write(f"kd-mcp: warning: {warning}\n")
        options = dataclasses.replace(options, clients=clients)
    app = KdMcpApp(options)
    configure_logging(parsed.log_level, app)
    ending = ServeExit(app, ok=EXIT_OK, forced=EXIT_INTERRUPTED)  # every way out, one shutdown
    ending.install()
    flusher = None
    if app.transcript is not None:  # session logs grow while the target runs, for `kd-mcp watch`
        from kdmcp.server.transcript import LogFlusher

        flusher = LogFlusher(app.flush_session_logs, app.transcript.session_logs_lock)
        flusher.start()
    why = "end of input"
    try:
        server = build_server(app)
        gc.enable()
        if parsed.listen:
            why = "listener stopped"
            serve_http(server, parsed.listen, parsed.allow_remote_bind)
        elif sys.stdin.isatty():
            _serve_terminal(server, parsed.simulate)
        else:
            anyio.run(server.run_stdio_async, early.hand_over() if early is not None else None)
    except KeyboardInterrupt:
        why = "SIGINT"
    finally:
        if flusher is not None:
            flusher.stop()  # before shutdown closes the transcript and copies the last bytes
    # Then leave at once, as a signal's shutdown does: everything is stopped and written, and
    # tearing down the interpreter (thousands of pydantic schemas) took seconds a client waits for.
    ending.leave(ending.finish(why))
    return EXIT_INTERNAL  # not reached


def _serve_terminal(server: KdMcpServer, simulated: bool) -> int:
    """stdio on a terminal: say what this is, and let Ctrl+C end it.

    Someone who typed ``kd-mcp --simulate`` sees a server waiting for JSON-RPC, which looks like
    a hang. The server runs on a daemon thread; the main thread waits for it (end of input,
    Ctrl+D) and stays free for the signal handlers (Ctrl+C: ``kdmcp.shutdown``).
    """
    import json
    import threading

    import anyio

    # The interpreter by its absolute path: a client starts servers with its own PATH, where this
    # venv's `kd-mcp` is usually not found (Claude Code: "ENOENT: Executable not found in $PATH").
    flag = " --simulate" if simulated else ""
    args = ["-m", "kdmcp", *(["--simulate"] if simulated else [])]
    what = "the simulated kd.exe/cdb.exe (no Windows needed)" if simulated else "kd.exe/cdb.exe"
    sys.stderr.write(
        f"kd-mcp {__version__}: an MCP server for {what}, speaking JSON-RPC on stdin/stdout.\n"
        "It is meant to be started by an MCP client, not typed at. Point your client at this command,\n"
        f"e.g. `claude mcp add kd-mcp -- {sys.executable} -m kdmcp{flag}`, or in a client's JSON config:\n"
        f'  {{"command": {json.dumps(sys.executable)}, "args": {json.dumps(args)}}}\n'
    )
    thread = threading.Thread(target=anyio.run, args=(server.run_stdio_async,),
                              name="kdmcp-stdio", daemon=True)
    # The last line goes out only once the server runs and this thread waits below, so whoever
    # reads "ends it" can press Ctrl+C at once (the terminal test waits on it). Ctrl+C is a
    # SIGINT, which the shutdown handles (kdmcp.shutdown); Ctrl+D ends the server's input.
    thread.start()
    sys.stderr.write("To watch it work without a client: kd-mcp demo. Ctrl+C (or Ctrl+D) ends it.\n")
    sys.stderr.flush()
    while thread.is_alive():
        thread.join(0.2)
    return EXIT_OK


def _doctor(parsed: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from kdmcp.server import KdMcpApp
    from kdmcp.server.call import Call
    from kdmcp.server.tools.sessions.lifecycle import health_check

    app = KdMcpApp(_options(parsed))
    health = health_check(Call(app, None))
    console = Console()  # the report is the command's output: stdout (the error line goes to stderr)
    table = Table(title=f"kd-mcp {__version__} doctor" + (" (simulated)" if health.simulated else ""))
    table.add_column("check")
    table.add_column("result")
    for dbg in health.debuggers:
        if dbg.found:
            cell = f"[green]ok[/] {escape(f'{dbg.path} ({dbg.source})')}"
        else:
            cell = "[red]missing[/]: looked in " + escape("; ".join(dbg.looked_in))
        table.add_row(f"{dbg.name}.exe", cell + (f" — {escape(dbg.version)}" if dbg.version else ""))
    if not any(dbg.found for dbg in health.debuggers if dbg.name == "kd"):
        table.add_row("next step", "no kd.exe on this machine: install the Debugging Tools for Windows "
                      "(Windows SDK or WDK) or the WinDbg app, or try kd-mcp with the simulated debuggers: "
                      "[bold]kd-mcp --simulate[/] (kd-mcp demo shows one session)")
    table.add_row("config", f"[green]ok[/] {escape(health.config_path or '(defaults)')}")
    if health.state_file_ok:
        warn = "".join(f"\n[yellow]warning[/] {escape(w)}" for w in health.state_file_warnings)
        table.add_row("state file", f"[green]ok[/] {escape(str(health.state_file))}{warn}")
    else:
        table.add_row("state file", f"[red]problem[/] {escape(str(health.state_file_error))}")
    local = "".join(f"\n[yellow]needs[/] {escape(p)}" for p in health.local_kernel)
    table.add_row("local kernel (kd -kl)", f"[yellow]not ready[/]{local}" if local else "[green]ok[/]")
    console.print(table)
    if not health.ok:
        # health.ok: kd.exe found and the state file valid (lifecycle.health_check)
        problems = [f"{dbg.name}.exe not found" for dbg in health.debuggers if dbg.name == "kd" and not dbg.found]
        problems += [] if health.state_file_ok else [f"state file: {health.state_file_error}"]
        raise CheckFailed("doctor found a problem: " + (", ".join(problems) or "see the report"))
    return 0


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


def _typed_key(prompt: str) -> str:
    """The hidden key prompt, only where someone can type: piped stdin would echo or hit EOF."""
    import getpass

    from kdmcp.errors import InvalidArgument

    if not sys.stdin.isatty():
        raise InvalidArgument("no KDNET key: set KDMCP_KDNET_KEY (stdin is not a terminal to type it at)")
    try:
        return getpass.getpass(prompt)
    except EOFError:
        raise InvalidArgument("no KDNET key: input ended at the prompt") from None


def _state_write(parsed: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from kdmcp.errors import InvalidArgument
    from kdmcp.statefile import (
        KdSessionState,
        default_state_path,
        read_key_interactively,
        write_state,
    )
    from kdmcp.validation import validation_problems

    key = read_key_interactively(getpass=_typed_key)
    try:  # the same rules the server applies when it reads the file back (kdmcp.argvalues)
        state = KdSessionState(
            schema="winrm-kd-session-v1", guest_host=parsed.guest_host, host_ip=parsed.host_ip,
            port=parsed.port, key=key, created_by="kd-mcp state write",
        )
    except ValidationError as exc:
        raise InvalidArgument("; ".join(validation_problems(exc, top="(document)"))) from None
    path = parsed.path or str(default_state_path())
    write_state(path, state)
    sys.stderr.write(f"kd-mcp: wrote {path} (owner-only)\n")
    return 0

