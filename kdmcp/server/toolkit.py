"""What every tool module shares: the registry, the annotation presets and the common argument types.

``TOOLS`` is the registration order of ``tools/list``: the modules that define tools
(``starts.py``, then ``tools.py``) register into it as they are imported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations
from pydantic import Field

ToolFn = TypeVar("ToolFn", bound=Callable[..., Any])
Ctx = Context[Any, Any] | None

SessionId = Annotated[
    str | None,
    Field(description="default: the only live session", max_length=64),
]
# How many items of each list a typed read returns (its counts say how many there were).
LIST_LIMIT = 200
Limit = Annotated[int, Field(description="return at most this many items of each list", ge=1, le=5000)]
Timeout = Annotated[
    float | None,
    Field(description="seconds to wait before giving up (default from the config)", gt=0, le=3600),
]
InitialBreak = Annotated[bool, Field(description="break in as soon as kd connects")]
# An address as kd reads one (a MASM expression without blanks): it becomes part of a command
# line the tool composes, so nothing in it may end that command (';'), open a string ('"') or
# add an argument (a blank: "nt!x L10000000" would widen a read).
Address = Annotated[
    str,
    Field(description="address or expression without blanks: fffff800`62c3a1e0, nt!NtCreateFile+0x10, @rsp+8, "
          "poi(@rcx)", min_length=1, max_length=256, pattern=r'^[^\s;"]+$'),
]


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


@dataclass(frozen=True)
class Tool:
    fn: Callable[..., Any]
    annotations: ToolAnnotations


TOOLS: dict[str, Tool] = {}


def tool(annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]:
    def register(fn: ToolFn) -> ToolFn:
        TOOLS[fn.__name__] = Tool(fn, annotations)
        return fn
    return register


