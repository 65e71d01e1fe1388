"""A triage run as this server (or ``kd-mcp triage``) starts it: its config, its caller, its files.

The tool and the CLI both come here, then to ``kdmcp.triage.run.triage_run``: the debuggers are
the server's (discovered, configured, or the simulator with ``--simulate``), launched with the
caller's policy flags (``-noshell`` below full); ``dump_roots`` limits the paths as it does for
``open_dump``; the scheduler is the caller's or ``triage.scheduler``; jobs default to the cores,
at most ``max_sessions``, bounded by memory.

Where the records go: the CLI writes the file it is given. The tool writes only under the
records directory (``triage.records_dir``, default the user state directory's ``triage/``), by a
plain name the caller chooses (the same name resumes), in a folder of the calling client's own
under the HTTP listener: a client names no path the server would write to, and reads (with
``read_output``) only the files its own runs wrote.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from kdmcp.command.policy import launch_flags
from kdmcp.config import MAX_TRIAGE_JOBS, SCHEDULER_ADDRESS
from kdmcp.errors import DebuggerError, InvalidArgument
from kdmcp.server.app import KdMcpApp
from kdmcp.triage.buckets import TriageSummary
from kdmcp.triage.local import default_jobs
from kdmcp.triage.models import Flavor, TriageSpec
from kdmcp.triage.run import Progress, triage_run

__all__ = ["DEFAULT_RUN", "MAX_JOBS", "RUN_NAME", "records_file", "run_triage", "spec_for"]

DEFAULT_RUN = "triage"
MAX_JOBS = MAX_TRIAGE_JOBS
RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def spec_for(app: KdMcpApp, owner: str | None) -> TriageSpec:
    """The debuggers this server runs (each flavor it has), the symbol path, the caller's policy flags."""
    debuggers: dict[Flavor, list[str]] = {}
    missing: list[str] = []
    for flavor in ("kd", "cdb"):
        try:
            debuggers[flavor] = app.debugger_argv(flavor)
        except DebuggerError as exc:
            missing.append(exc.message)
    if not debuggers:
        raise DebuggerError(missing[0])
    config = app.options.config
    return TriageSpec(debuggers=debuggers, symbol_path=config.symbol_path,
                      extra_args=launch_flags(app.profile_for(owner)), timeout_s=config.triage.timeout_s)


def records_file(app: KdMcpApp, owner: str | None, name: str) -> str:
    """The tool's JSONL for run ``name``: under the records directory, in the owner's folder."""
    if not RUN_NAME.fullmatch(name) or name.endswith("."):
        raise InvalidArgument("out: a run's name: letters, digits, '.', '_', '-' (up to 64), no path")
    configured = app.options.config.triage.records_dir
    base = Path(configured) if configured else Path(platformdirs.user_state_dir("kd-mcp")) / "triage"
    if owner is not None:  # a listener client's own folder, named by a hash: client names are free text
        base = base / ("client-" + hashlib.sha256(owner.encode()).hexdigest()[:16])
    return str(base / f"{name.removesuffix('.jsonl')}.jsonl")


def run_triage(app: KdMcpApp, owner: str | None, paths: Sequence[str], *, out: str, glob: str | None = None,
               limit: int | None = None, jobs: int | None = None, scheduler: str | None = None,
               cancel: threading.Event | None = None, progress: Progress | None = None) -> TriageSummary:
    """Triage ``paths`` for ``owner`` into the JSONL ``out`` (a path: the caller chose it)."""
    if scheduler is not None and not SCHEDULER_ADDRESS.fullmatch(scheduler):
        raise InvalidArgument("scheduler: an address such as tcp://host:8786 (a scheme, a host, a port)")
    config = app.options.config
    chosen = jobs or config.triage.jobs
    count = min(chosen, MAX_JOBS) if chosen else default_jobs(config.max_sessions)
    # one run a records file, in this server or any other process: triage_run holds its OS lock (busy if not)
    return triage_run(paths, spec_for(app, owner), out=out, glob=glob, limit=limit, jobs=count,
                      scheduler=scheduler or config.triage.scheduler, roots=config.dump_roots, cancel=cancel,
                      progress=progress)
