"""Build kd-mcp's MCP bundle (``.mcpb``) for Claude Desktop, and check it with the bundle CLI.

    python scripts/build_mcpb.py [--out DIR] [--mcpb PATH] [--json]

The bundle is the ``uv`` server type (MCPB manifest 0.4): the package's source and its
``pyproject.toml``, no vendored dependencies. The host runs ``uv run --directory <bundle> kd-mcp``,
so uv resolves the dependencies from ``pyproject.toml`` and no Python on PATH is assumed. The
manifest is generated from the project itself: name, version and description from
``pyproject.toml`` and ``server.json``, the tools from kd-mcp's one registry and the prompts from
its recipes, so the bundle cannot list a tool the server does not serve.

The bundle CLI is ``@anthropic-ai/mcpb`` from npm, pinned in ``tests/interop/package.json``
(``npm ci --prefix tests/interop`` installs it): ``mcpb validate`` checks the manifest against the
schema, ``mcpb pack`` writes the bundle. Prints the bundle's path and size (``--json``: a JSON line).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import kdmcp.server  # noqa: E402, F401  (importing the server registers every tool family)
from kdmcp.server.registry import TOOLS  # noqa: E402
from scripts.project_files import project as project_table  # noqa: E402
from scripts.project_files import tracked  # noqa: E402

MANIFEST_VERSION = "0.4"  # the first manifest version with the "uv" server type
# What the bundle carries besides the package: the build inputs uv needs and the notices.
TOP_FILES = ("pyproject.toml", "MANIFEST.in", "README.md", "LICENSE", "THIRD_PARTY_NOTICES.md")
DEFAULT_MCPB = ROOT / "tests" / "interop" / "node_modules" / ".bin" / "mcpb"


def _first_sentence(text: str | None) -> str:
    words = " ".join((text or "").split())
    return words.split(". ")[0].rstrip(".") + "." if words else ""


def manifest() -> dict[str, Any]:
    """The bundle's manifest.json, from the project's own sources of truth."""
    project = project_table()
    registry = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": project["name"],
        "display_name": "kd-mcp",
        "version": project["version"],
        "description": registry["description"],
        "long_description": ("An MCP server that drives Microsoft's console debuggers: kd.exe for kernel debugging "
                             "over KDNET, cdb.exe for user mode and crash dumps. Needs the Debugging Tools for "
                             "Windows on the host; `kd-mcp doctor` says what it found."),
        "author": {"name": "the kd-mcp authors"},
        "license": "MIT",
        "keywords": ["windbg", "kd", "cdb", "kernel", "debugger", "crash-dump", "kdnet"],
        "server": {
            "type": "uv",
            "entry_point": "kdmcp/__main__.py",
            "mcp_config": {
                "command": "uv",
                "args": ["run", "--directory", "${__dirname}", "--no-dev", "kd-mcp"],
                "env": {"KDMCP_STATE_FILE": "${user_config.state_file}", "KDMCP_CONFIG": "${user_config.config}"},
            },
        },
        "tools": [{"name": name, "description": _first_sentence(tool.fn.__doc__)} for name, tool in TOOLS.items()],
        # The recipes take arguments the server validates and renders (kdmcp/server/prompts.py):
        # the host lists them from the server, as the manifest's prompts_generated says.
        "prompts_generated": True,
        "user_config": {
            "state_file": {"type": "file", "title": "KDNET state file",
                           "description": "The WinRM companion's state file that start_from_state reads.",
                           "required": False, "default": ""},
            "config": {"type": "file", "title": "kd-mcp config",
                       "description": "kd-mcp's YAML config: policy profile, debugger paths, symbol path.",
                       "required": False, "default": ""},
        },
        "compatibility": {"platforms": ["win32"], "runtimes": {"python": project["requires-python"]}},
    }


def stage(into: Path, data: dict[str, Any]) -> None:
    """The bundle's tree: manifest.json, the build inputs, and the package as tracked."""
    for name in (*TOP_FILES, *tracked("kdmcp")):
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, target)
    (into / "manifest.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _run(mcpb: Path, *args: str) -> str:
    done = subprocess.run([str(mcpb), *args], capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise SystemExit(f"build_mcpb: error: mcpb {args[0]} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def build(out: Path, mcpb: Path) -> Path:
    if not mcpb.exists():
        raise SystemExit(f"build_mcpb: error: no bundle CLI at {mcpb} (npm ci --prefix tests/interop)")
    data = manifest()
    out.mkdir(parents=True, exist_ok=True)
    bundle = out / f"{data['name']}-{data['version']}.mcpb"
    with tempfile.TemporaryDirectory(prefix="kdmcp-mcpb-") as work:
        staged = Path(work) / "bundle"
        stage(staged, data)
        _run(mcpb, "validate", str(staged / "manifest.json"))
        _run(mcpb, "pack", str(staged), str(bundle))
    with zipfile.ZipFile(bundle) as packed:
        assert "manifest.json" in packed.namelist()
    return bundle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="where the .mcpb goes (default: dist/)")
    parser.add_argument("--mcpb", type=Path, default=DEFAULT_MCPB, help="the bundle CLI (default: tests/interop's)")
    parser.add_argument("--json", action="store_true", help="one JSON line instead of text")
    args = parser.parse_args(argv)
    bundle = build(args.out, args.mcpb)
    size = bundle.stat().st_size
    if args.json:
        print(json.dumps({"bundle": str(bundle), "bytes": size}))
    else:
        print(f"{bundle} ({size:,} B)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
