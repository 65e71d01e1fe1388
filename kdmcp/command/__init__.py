"""The one reader of kd/cdb command lines.

The policy (what a line may touch), the engine (whether a line lets the target run) and
the simulator (what kd would do with it) all read command lines through this package, so
they cannot disagree about where a command ends or what runs inside a block:
:mod:`~kdmcp.command.lexing` (quotes, braces, escapes), :mod:`~kdmcp.command.syntax` (the
tree of :mod:`~kdmcp.command.nodes`: commands, blocks, conditionals, loops), :mod:`~kdmcp.command.tables` (what each
command is), :mod:`~kdmcp.command.walker` (the walk over the tree), :mod:`~kdmcp.command.leaf_rules`
(one command's class) and :mod:`~kdmcp.command.command_strings` (the command strings inside
one) for the findings, and :mod:`~kdmcp.command.policy` (verdicts, run effects).

Pure: no I/O; stdlib and pydantic only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kdmcp.command.classes import PROFILE_ALLOWS, PROFILES, CommandClass, Profile, RunEffect

if TYPE_CHECKING:
    from kdmcp.command.policy import (
        DEFAULT_NETWORK_ROOTS,
        Finding,
        Verdict,
        check,
        classify,
        launch_flags,
        run_effect,
    )

# The simulator reads lines with lexing/syntax/tables at start-up and never asks for a verdict;
# the policy (its walker, its pydantic findings) costs a third of a second to import, so it is
# imported on first use -- the server and the engine pay it where they first check a line.
_POLICY = frozenset({"DEFAULT_NETWORK_ROOTS", "Finding", "Verdict", "check", "classify", "launch_flags",
                     "run_effect"})


def __getattr__(name: str) -> Any:
    if name not in _POLICY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("kdmcp.command.policy"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_NETWORK_ROOTS",
    "PROFILES",
    "PROFILE_ALLOWS",
    "CommandClass",
    "Finding",
    "Profile",
    "RunEffect",
    "Verdict",
    "check",
    "classify",
    "launch_flags",
    "run_effect",
]
