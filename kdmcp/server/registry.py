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

The families are imported when the registry is first read (``TOOLS``; ``load_families``), not
when the server starts: importing them (and the engine, the parsers' models and the policy they
import) was most of kd-mcp's own cold start (docs/performance.md, "Cold start"). Until then the
names and groups ``--tools``, ``serve --help`` and the client surfaces need are read from the
served listing kept between starts (``schema.cached_listing``): a copy of this registry, written
from it by a start with the same sources (its fingerprint), so it says what the registry would.

The groups follow what a caller is trusted to do: ``session`` (start every kind of target,
share, stop, list, check — always included, a client without it can do nothing; ``launch`` and
``share_session`` are further held by the caller's policy), ``control`` (break in, let the
target run, breakpoints, steps), ``commands`` (arbitrary debugger commands, under the command
policy), ``inspect`` (fixed, typed reads), ``output`` (read what sessions printed).
"""

from __future__ import annotations

import threading
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp_types import ToolAnnotations
from pydantic import BaseModel

from kdmcp.errors import InvalidArgument
from kdmcp.server.schema import cached_listing

__all__ = ["ALL_GROUPS", "TOOLS", "Tool", "all_tools", "connects", "controls", "destroys", "load_families",
           "reads", "set_family_loader", "starts", "tool", "tool_groups", "tools_for"]

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


# What the decorator writes; read through TOOLS, which imports the families first.
_REGISTERED: dict[str, Tool] = {}


class _Loading:
    """How the families are imported, whether they are, and whether this is being done now."""

    loader: Callable[[], object] | None = None
    loaded = False
    importing = False
    lock = threading.RLock()  # the importing thread may read the registry from a family's code


def set_family_loader(loader: Callable[[], object]) -> None:
    """How the families are imported: set by ``kdmcp.server`` (the package's door, which may
    import ``kdmcp.server.tools``; this core module may not: pyproject's import contracts)."""
    _Loading.loader = loader


def load_families() -> None:
    """Import every tool family once (they register here as they are defined). Another thread
    reading the registry meanwhile waits for the whole of it; the importing thread itself, reading
    it from a family's module code, sees what is registered so far, as it always did."""
    if _Loading.loaded:
        return
    with _Loading.lock:
        if _Loading.loaded or _Loading.importing:
            return
        if _Loading.loader is None:
            raise RuntimeError("no tool family loader: import kdmcp.server first")
        _Loading.importing = True
        try:
            _Loading.loader()
        finally:
            _Loading.importing = False
        _Loading.loaded = True


class _Registry(Mapping[str, Tool]):
    """The registered tools by name, in registration order; reading it imports the families first."""

    def _tools(self) -> dict[str, Tool]:
        load_families()
        return _REGISTERED

    def __getitem__(self, name: str) -> Tool:
        return self._tools()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools())

    def __len__(self) -> int:
        return len(self._tools())


TOOLS: Mapping[str, Tool] = _Registry()


def tool(group: str, annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]:
    """Register the decorated function as the tool of its name, in ``group``."""
    if group not in ALL_GROUPS:
        raise ValueError(f"unknown tool group {group!r}")

    def register(fn: ToolFn) -> ToolFn:
        if fn.__name__ in _REGISTERED:
            raise ValueError(f"tool {fn.__name__!r} registered twice")
        _REGISTERED[fn.__name__] = Tool(fn.__name__, group, fn, annotations)
        return fn
    return register


def _groups() -> dict[str, str]:
    """Each tool's group by name, in registration order: the registry's; before the families are
    imported, the cached listing's (a copy of it for these very sources), if there is one."""
    if not _REGISTERED:
        listed = cached_listing()
        if listed is not None and all(entry["group"] in ALL_GROUPS for entry in listed):
            return {entry["name"]: entry["group"] for entry in listed}
    return {name: entry.group for name, entry in TOOLS.items()}


def tool_groups() -> dict[str, tuple[str, ...]]:
    """Each group's tools, in registration order."""
    groups = _groups()
    return {group: tuple(name for name, of in groups.items() if of == group) for group in ALL_GROUPS}


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
    return frozenset(name for name, of in _groups().items() if of in chosen)


def all_tools() -> frozenset[str]:
    return frozenset(_groups())
