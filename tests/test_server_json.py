"""``server.json``, kd-mcp's entry for the official MCP registry, holds to what the registry requires.

The registry validates an entry against its schema (2025-12-11) and its own publishing rules
(modelcontextprotocol/registry, docs/reference/server-json: ``official-registry-requirements.md``):
a reverse-DNS name with one slash, a description of 1 to 100 characters, exact versions, a PyPI
package on ``https://pypi.org`` whose README carries an ``mcp-name:`` line naming the entry. The
schema itself is not vendored; these are its required fields and constraints, checked here, and
the entry's facts are held to the project's (name, version, the environment variables the code
reads).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from scripts.project_files import project

ROOT = Path(__file__).resolve().parents[1]
ENTRY = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
# Server.name: "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$", 3 to 200 characters.
NAME_RE = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+")
# A version range the registry rejects: "^1.2.3", "~1.2.3", ">=1.2.3", "1.x", "1.*", "latest".
RANGE_RE = re.compile(r"[\^~<>=*|\s]|(?:^|\.)x(?:\.|$)|^latest$")
# Package: additionalProperties false over these keys.
PACKAGE_KEYS = {"registryType", "registryBaseUrl", "identifier", "version", "fileSha256", "runtimeHint", "transport",
                "runtimeArguments", "packageArguments", "environmentVariables"}


def _project(key: str) -> str:
    return project()[key]


def test_the_entry_has_the_registry_schema_and_required_fields() -> None:
    assert ENTRY["$schema"] == SCHEMA
    assert {"name", "description", "version"} <= ENTRY.keys()
    assert NAME_RE.fullmatch(ENTRY["name"]) and 3 <= len(ENTRY["name"]) <= 200
    assert 1 <= len(ENTRY["description"]) <= 100
    assert not RANGE_RE.search(ENTRY["version"]) and len(ENTRY["version"]) <= 255


def test_the_package_is_this_project_on_pypi_run_with_uvx() -> None:
    (package,) = ENTRY["packages"]
    assert set(package) <= PACKAGE_KEYS
    assert package["registryType"] == "pypi" and package["registryBaseUrl"] == "https://pypi.org"
    assert package["identifier"] == _project("name")
    assert package["version"] == ENTRY["version"] == _project("version")
    assert package["runtimeHint"] == "uvx"
    assert package["transport"] == {"type": "stdio"}


def test_every_environment_variable_named_is_one_the_server_reads() -> None:
    (package,) = ENTRY["packages"]
    source = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "kdmcp").rglob("*.py"))
    for variable in package["environmentVariables"]:
        assert {"name", "description"} <= variable.keys()
        assert f'"{variable["name"]}"' in source, variable["name"]
        assert variable.get("format", "string") in {"string", "number", "boolean", "filepath"}


def test_the_readme_carries_the_mcp_name_line() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"mcp-name: {ENTRY['name']}" in readme
