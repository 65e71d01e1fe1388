"""Tool groups: which tools a client (or a stdio server started with ``--tools``) may see.

Groups follow what a caller is trusted to do: ``session`` (start every kind of target, share,
stop, list, check — always included, a client without it can do nothing; ``launch`` and
``share_session`` are further held by the caller's policy), ``control`` (break in, let the target run),
``commands`` (arbitrary debugger commands, under the command policy), ``inspect`` (fixed,
typed reads: registers, stack, modules, processes, !analyze, vertarget), ``output`` (read what
sessions printed).
"""

from __future__ import annotations

from collections.abc import Iterable

from kdmcp.errors import InvalidArgument

TOOL_GROUPS: dict[str, tuple[str, ...]] = {
    "session": ("start_from_state", "start_kd", "open_dump", "attach_process", "launch", "attach_local_kernel",
                "join_remote", "share_session", "stop_kd", "list_sessions", "health_check"),
    "control": ("break_in", "continue_go", "resume_for_winrm", "set_breakpoint", "clear_breakpoints", "step", "run_to",
                "wait_for_stop"),
    "commands": ("kd_command", "set_symbol_path", "debug_batch"),
    "inspect": ("registers", "backtrace", "modules", "processes", "analyze", "vertarget", "breakpoints", "location",
                "threads", "read_memory", "disassemble", "evaluate", "lookup_symbol", "read_type", "exception",
                "decode_error", "decode_ioctl", "ioctl_map", "driver_object", "device_object",
                "irp", "walk_list", "handles", "pool", "pool_find", "pool_usage", "pte"),
    "output": ("read_output",),
}
ALL_GROUPS = tuple(TOOL_GROUPS)


def tools_for(groups: Iterable[str]) -> frozenset[str]:
    """The tool names of ``groups`` plus ``session``; an unknown group name is an error."""
    chosen = {"session"}
    for group in groups:
        name = group.strip().lower()
        if not name:
            continue
        if name not in TOOL_GROUPS:
            raise InvalidArgument(f"unknown tool group {group!r} (groups: {', '.join(ALL_GROUPS)})")
        chosen.add(name)
    return frozenset(tool for group in chosen for tool in TOOL_GROUPS[group])


ALL_TOOLS = tools_for(ALL_GROUPS)
