"""End to end: ``python -m kdmcp --simulate`` started from the listing kept between starts
(``schema.cached_listing``), driven by the SDK's stdio client.

A start that finds the listing answers ``initialize`` and ``tools/list`` without importing a
tool family or the engine (docs/performance.md, "Cold start"); what it imports is read from
``python -X importtime``, which writes a line per module to stderr as it is imported, so the
lines written before an answer arrived are the imports that answer needed. The first call
imports the families and answers as before; the listing is the same bytes with the cache, from
it, and without it; a listing kept for other sources (another fingerprint) is never read.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.server.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts the server (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = "kdmcp.server.tools"


def _imported(stderr: Path) -> set[str]:
    """The modules ``-X importtime`` reported so far."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.read_text(errors="replace").splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


async def _start(cache: Path, stderr: Path, *, no_cache: bool = False) -> dict[str, Any]:
    """Start the server, list its tools, call one; what was imported before the listing and after the call."""
    # The prelude off: it would answer tools/list from its own kept answers before the listing is
    # read (tests/server/test_prelude_e2e.py); these starts are about the listing.
    # And the warm-up off: it imports the families once the tools are listed, while this test reads
    # what the listing needed (tests/server/test_warm_up.py).
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "KDMCP_NO_PRELUDE": "1", "KDMCP_NO_WARM_UP": "1"}
    env.pop("KDMCP_NO_SURFACE_CACHE", None)
    if no_cache:
        env["KDMCP_NO_SURFACE_CACHE"] = "1"
    # The server's stderr straight to the file (no relay to race its stdout): each line is
    # written before the answer that needed the import.
    params = StdioServerParameters(
        command="/bin/sh", args=["-c", 'exec "$0" -X importtime -m kdmcp --simulate 2>"$1"', sys.executable,
                                 str(stderr)], env=env, cwd=str(ROOT))
    with anyio.fail_after(60):
        async with Client(params, read_timeout_seconds=30) as client:
            listed = await client.list_tools()
            before = _imported(stderr)
            result = await client.call_tool("health_check", {})
            answered = (bool(result.is_error), text_of(result))
            after = _imported(stderr)
    listing = [tool.model_dump_json(by_alias=True, exclude_none=True) for tool in listed.tools]
    return {"listing": listing, "before": before, "after": after, "answered": answered}


def _kept(cache: Path) -> list[Path]:
    return sorted((cache / "kd-mcp").glob("surface-*.json"))


async def test_a_start_from_the_kept_listing_imports_no_family_until_a_call(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = await _start(cache, tmp_path / "first.err")  # nothing kept yet: built, and kept
    assert FAMILIES in first["before"]
    (kept,) = _kept(cache)
    assert [entry["name"] for entry in json.loads(kept.read_text())["tools"]] == [
        json.loads(tool)["name"] for tool in first["listing"]]

    second = await _start(cache, tmp_path / "second.err")
    assert second["listing"] == first["listing"]  # the same bytes
    assert not {m for m in second["before"] if m.startswith((FAMILIES, "kdmcp.engine", "kdmcp.parse"))}
    assert FAMILIES in second["after"] and "kdmcp.engine" in second["after"]  # the first call imported them
    assert not first["answered"][0] and not second["answered"][0] and second["answered"][1]  # answered, not an error

    off = await _start(cache, tmp_path / "off.err", no_cache=True)
    assert off["listing"] == first["listing"] and FAMILIES in off["before"]


async def test_a_listing_kept_for_other_sources_is_not_read(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = await _start(cache, tmp_path / "first.err")
    (kept,) = _kept(cache)
    # The same file under another fingerprint (another checkout, an edit, an upgrade), its descriptions changed.
    doc = json.loads(kept.read_text())
    for entry in doc["tools"]:
        entry["description"] = "stale"
    kept.rename(kept.with_name("surface-0123456789abcdef0123456789abcdef.json"))
    kept.with_name("surface-0123456789abcdef0123456789abcdef.json").write_text(json.dumps(doc))

    again = await _start(cache, tmp_path / "again.err")
    assert again["listing"] == first["listing"]
    assert FAMILIES in again["before"]  # nothing for these sources: built again
    assert len(_kept(cache)) == 2
