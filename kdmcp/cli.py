"""``kd-mcp``: the command-line entry point.

For now it runs the simulated debugger (``kd-mcp sim kd ...``), the one part of kd-mcp a
person drives by hand; the MCP server's ``serve`` command joins it with the server layer.
"""

from __future__ import annotations

import argparse
import sys

from kdmcp import __version__


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="kd-mcp",
        description="Drive Microsoft's console debuggers (kd.exe, cdb.exe) for MCP clients.",
    )
    parser.add_argument("--version", action="version", version=f"kd-mcp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser(
        "sim",
        help="run the simulated debugger: kd-mcp sim {kd|cdb} [kd/cdb options] [--scenario FILE]",
        add_help=False,
    )
    if args and args[0] == "sim":
        from kdmcp.sim.cli import main as sim_main

        return sim_main(args[1:])
    parser.parse_args(args)  # --version, --help and usage errors exit here
    parser.print_help(sys.stderr)
    return 2
