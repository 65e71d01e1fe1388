"""``dump_roots``: the directories ``open_dump`` and triage may open dumps from, when the config names any.

A dump path is the caller's: without a limit, ``open_dump`` would start cdb on any file the
server can read, and its answers (no such file, not a regular file, not a dump) would tell a
client what exists where. With ``dump_roots`` set, a path is first resolved to its real path
(every symlink and ``..`` followed, as the OS would) and must lie under one of the roots'
real paths, component by component: ``/dumps/x`` is not under ``/dump``, and a link inside a
root that points outside it is outside. Nothing about a path outside is probed. The real
path, not the one given, is what is then read and handed to the debugger, so a link swapped
in after the check does not redirect it (a directory swapped between the two is the residual
race: docs/security.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import PurePath

from kdmcp.errors import PolicyDenied

__all__ = ["inside_roots"]


def _parts(real: str) -> tuple[str, ...]:
    """The components of a real path as the file system compares them (case-blind on Windows)."""
    return tuple(os.path.normcase(part) for part in PurePath(real).parts)


def inside_roots(path: str, roots: Sequence[str]) -> str:
    """The real path of ``path`` when it lies under one of ``roots``; else ``policy_denied``
    (which names the config key, never the roots, which are the operator's)."""
    real = os.path.realpath(path)
    parts = _parts(real)
    for root in roots:
        base = _parts(os.path.realpath(root))
        if parts[: len(base)] == base:
            return real
    raise PolicyDenied("path: outside the directories dumps may be opened from (dump_roots in the config)")
