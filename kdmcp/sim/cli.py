"""``python -m kdmcp.sim``: parse the debugger command line, load the scenario, run.

``-remote`` runs no debugger of its own: the process is a client of a debugging server
(:mod:`kdmcp.sim.remote_client`), whatever the scenario says -- and imports nothing of the
debugger, so a client reaches its prompt without building one. Hence the imports inside
:func:`main`, for start-up alone: the client's modules load in about 10 ms, the debugger and
the scenario reader in some 50 ms (``python -X importtime -c "import kdmcp.sim.debugger"``).
"""

from __future__ import annotations

import sys

from kdmcp.sim.options import UsageError, parse_args


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        opts = parse_args(args)
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    if opts.mode == "remote" and opts.remote is not None:
        from kdmcp.sim.remote_client import run

        return run(opts.remote)
    from kdmcp.sim import scenario as scenario_mod
    from kdmcp.sim.debugger import SimDebugger

    try:
        if opts.scenario_path is not None:
            sc = scenario_mod.load(opts.scenario_path)
        else:
            sc = scenario_mod.builtin("default_kd" if opts.flavor == "kd" else "default_cdb")
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    return SimDebugger(opts, sc).run()
