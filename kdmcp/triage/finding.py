"""Which files a triage run reads: files as given, directories walked, glob patterns, a limit, dump_roots.

A path given is the caller's: with ``dump_roots`` set it is refused (``policy_denied``) unless it
lies under a root, by the rule ``open_dump`` follows (``kdmcp.dump_roots``: real paths, component
by component), before anything about it is probed. A directory is walked (sorted, so a limit
takes the same dumps every time, and a rerun resumes the same list); a file found there whose
real path leaves the roots (a symlink pointing out) is left out, not read. A directory's files
are those matching ``glob`` (``*.dmp`` unless given; case-blind, as Windows names are); a file
named explicitly is taken whatever its name, and one that is no dump becomes a failed record.
"""

from __future__ import annotations

import fnmatch
import glob as globbing
import os
from collections.abc import Sequence
from dataclasses import dataclass

from kdmcp.dump_roots import inside_roots
from kdmcp.errors import InvalidArgument, PolicyDenied

__all__ = ["DEFAULT_GLOB", "MAX_DUMPS", "MAX_VISITED", "Found", "find_dumps"]

DEFAULT_GLOB = "*.dmp"
MAX_DUMPS = 100_000  # one run's list, held in memory with its hashes; a bigger fleet is several runs
# Entries a walk may pass (about a second's walk): a path such as / or C:\ is a mistake, not a dump folder.
MAX_VISITED = 250_000


@dataclass(frozen=True)
class Found:
    """A file to triage: the path opened and the name the run lists it under."""

    path: str
    name: str


def _matches(name: str, pattern: str) -> bool:
    return fnmatch.fnmatch(name.lower(), pattern.lower())


def _too_many(visited: int, given: str) -> InvalidArgument | None:
    if visited <= MAX_VISITED:
        return None
    return InvalidArgument(f"paths: more than {MAX_VISITED:,} files under {given}: name the dumps' own folders, "
                           "or a pattern")


def _bounded(base: str, given: str) -> None:
    """Refuse a ``**`` pattern whose tree is past ``MAX_VISITED`` entries before ``glob`` walks it
    (``/**/*.dmp`` would walk the whole disk: ``glob`` has no bound of its own)."""
    visited = 0
    for _directory, subdirs, files in os.walk(base):
        visited += len(subdirs) + len(files)
        if error := _too_many(visited, given):
            raise error


def find_dumps(paths: Sequence[str], *, glob: str | None = None, limit: int | None = None,
               roots: Sequence[str] = ()) -> list[Found]:
    """The files under ``paths``, each once, in a stable order, at most ``limit``."""
    pattern = glob or DEFAULT_GLOB
    found: dict[str, Found] = {}
    cap = min(limit or MAX_DUMPS, MAX_DUMPS)

    def take(path: str, name: str) -> None:
        if roots:
            try:
                path = inside_roots(path, roots)
            except PolicyDenied:
                return  # found by a walk, it points out of the roots: not ours to read
        found.setdefault(os.path.abspath(path), Found(os.path.abspath(path), name))

    for given in paths:
        if not given:
            raise InvalidArgument("paths: an empty path")
        if globbing.has_magic(given):
            base = os.path.dirname(given.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]) or "."
            if roots:
                inside_roots(base, roots)  # a pattern whose fixed part lies outside: refused, not probed
            if "**" in given:
                _bounded(base, given)
            for match in sorted(globbing.glob(given, recursive=True)):
                if os.path.isfile(match):
                    take(match, os.path.relpath(match, base))
            continue
        checked = inside_roots(given, roots) if roots else given
        if os.path.isdir(checked):
            visited = 0
            for directory, subdirs, files in os.walk(checked):
                visited += len(subdirs) + len(files)
                if error := _too_many(visited, given):
                    raise error
                subdirs.sort()
                for file in sorted(files):
                    if _matches(file, pattern):
                        full = os.path.join(directory, file)
                        take(full, os.path.relpath(full, checked))
                if len(found) >= cap:
                    break
        elif os.path.lexists(checked):
            take(checked, os.path.basename(given))
        else:
            raise InvalidArgument(f"paths: no such file or directory: {given}", file_problem=True)
        if len(found) >= cap:
            break
    return list(found.values())[:cap]
