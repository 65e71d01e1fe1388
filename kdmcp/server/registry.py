"""The one registry of tools: each tool's name, group, hints and function, written once, where it is defined.

A tool is registered by decorating the function that does its work::

    @tool("control", controls("Set a breakpoint"))
    def set_breakpoint(call: Call, location: Address, ..., session_id: SessionId = None) -> SetBreakpointResult:
        \"\"\"What the model reads in tools/list.\"\"\"

The function's own signature is the schema clients see (``call`` is left out: it is the call as
its work sees it, ``call.py``), its docstring the description, its return annotation the result
model (docs/results.md), and its body the logic: nothing restates its arguments. Everything
else reads this registry: ``tools/list`` (in registration order: the order in which
``kdmcp/server/tools/__init__.py`` imports the families; ``call.served_tools``), the ``--tools`` groups and
``serve --help``, the listener's client surfaces, ``debug_batch``'s steps, the README table and
docs/results.md (test-checked against it).

The groups follow what a caller is trusted to do: ``session`` (start every kind of target,
share, stop, list, check — always included, a client without it can do nothing; ``launch`` and
``share_session`` are further held by the caller's policy), ``control`` (break in, let the
target run, breakpoints, steps), ``commands`` (arbitrary debugger commands, under the command
policy), ``inspect`` (fixed, typed reads), ``output`` (read what sessions printed).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp_types import ToolAnnotations
from pydantic import BaseModel

from kdmcp.errors import InvalidArgument

__all__ = ["ALL_GROUPS", "TOOLS", "Tool", "all_tools", "connects", "controls", "destroys", "reads", "starts",
           "tool", "tool_groups", "tools_for"]

ToolFn = TypeVar("ToolFn", bound=Callable[..., Any])

# The groups, in the order ``--tools`` and the docs list them.
ALL_GROUPS: tuple[str, ...] = ("session", "control", "commands", "inspect", "output")


# ------------------------------------------------------------------ annotation presets

def connects(title: str) -> ToolAnnotations:
    """Starts a debugger that reaches out to a guest."""
    return ToolAnnotations(title=title, read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                           open_world_hint=True)


def starts(title: str) -> ToolAnnotations:
    """Starts a debugger on something of this machine's (a dump, a process, its kernel)."""
    return ToolAnnotations(title=title, read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                           open_world_hint=False)


def reads(title: str) -> ToolAnnotations:
    """Only reads: what the target, a session or the setup holds."""
    return ToolAnnotations(title=title, read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                           open_world_hint=False)


def controls(title: str, *, idempotent: bool = False) -> ToolAnnotations:
    """Changes whether the target runs, and nothing else."""
    return ToolAnnotations(title=title, read_only_hint=False, destructive_hint=False, idempotent_hint=idempotent,
                           open_world_hint=False)


def destroys(title: str) -> ToolAnnotations:
    """May change the target or end the session."""
    return ToolAnnotations(title=title, read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                           open_world_hint=False)


# ------------------------------------------------------------------------- the registry

@dataclass(frozen=True)
class Tool:
    """One registered tool: ``fn(call, **arguments)`` does its work (in a worker thread, or on the
    event loop when it is a coroutine function: ``call.py``)."""

    name: str
    group: str
    fn: Callable[..., Any]
    annotations: ToolAnnotations

    @property
    def result_model(self) -> type[BaseModel]:
        """What the tool returns (its return annotation): what docs/results.md lists."""
        model: type[BaseModel] = typing.get_type_hints(self.fn)["return"]
        return model


TOOLS: dict[str, Tool] = {}


def tool(group: str, annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]:
    """Register the decorated function as the tool of its name, in ``group``."""
    if group not in ALL_GROUPS:
        raise ValueError(f"unknown tool group {group!r}")

    def register(fn: ToolFn) -> ToolFn:
        if fn.__name__ in TOOLS:
            raise ValueError(f"tool {fn.__name__!r} registered twice")
        TOOLS[fn.__name__] = Tool(fn.__name__, group, fn, annotations)
        return fn
    return register


def tool_groups() -> dict[str, tuple[str, ...]]:
    """Each group's tools, in registration order."""
    return {group: tuple(name for name, entry in TOOLS.items() if entry.group == group) for group in ALL_GROUPS}


def tools_for(groups: Iterable[str]) -> frozenset[str]:
    """The tool names of ``groups`` plus ``session``; an unknown group name is an error."""
    chosen = {"session"}
    for group in groups:
        name = group.strip().lower()
        if not name:
            continue
        if name not in ALL_GROUPS:
            raise InvalidArgument(f"unknown tool group {group!r} (groups: {', '.join(ALL_GROUPS)})")
        chosen.add(name)
    return frozenset(name for name, entry in TOOLS.items() if entry.group in chosen)


def all_tools() -> frozenset[str]:
    return frozenset(TOOLS)
