"""The server's shape (docs/architecture.md, "The server"): a small core, one package per tool
family, and the import-linter contracts that hold them apart listing every one of them."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "kdmcp" / "server"
# The package's door and the docs generator read the whole registry, so they import the families.
DOORS = {"__init__", "results_doc"}


def _contract(name: str) -> dict[str, object]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in pyproject["tool"]["importlinter"]["contracts"] if c["name"] == name]
    return contract


def test_the_core_is_small_and_every_core_module_is_held_to_the_contract():
    core = sorted(p.stem for p in SERVER.glob("*.py"))
    assert len(core) <= 22, core  # 22: handover.py, the stdio transport after the prelude
    held = {m.removeprefix("kdmcp.server.") for m in _contract("The server's core imports no tool family")[
        "source_modules"]}  # type: ignore[union-attr]
    assert held == set(core) - DOORS


def test_every_family_is_a_package_the_independence_contract_names():
    families = sorted(p.name for p in (SERVER / "tools").iterdir() if (p / "__init__.py").exists())
    named = _contract("Tool families are independent of each other")["modules"]
    assert named == [f"kdmcp.server.tools.{f}" for f in families]


def test_no_module_of_the_server_hides_an_import_below_its_code():
    for path in SERVER.rglob("*.py"):
        assert "noqa: E402" not in path.read_text(encoding="utf-8"), path


def test_the_families_tuple_is_the_registration_order_of_the_modules_that_register():
    from kdmcp.server import tools
    from kdmcp.server.registry import TOOLS

    registering = list(dict.fromkeys(entry.fn.__module__ for entry in TOOLS.values()))
    assert [module.__name__ for module in tools.FAMILIES] == registering
