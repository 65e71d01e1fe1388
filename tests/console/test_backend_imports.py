"""Only ``kdmcp.console`` imports pexpect or wexpect.

``lint-imports`` checks pexpect (``[tool.importlinter]`` in pyproject.toml), but wexpect is
imported by name (``importlib.import_module("wexpect")``, standing in for pkg_resources), which
no import graph sees; this reads every module's syntax tree for either form.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "kdmcp"
BACKENDS = {"pexpect", "wexpect"}


def _called_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def backend_imports(path: Path) -> list[str]:
    """Each import of a backend in ``path``: ``import x``, ``from x import y``, ``import_module("x")``."""
    found: list[str] = []
    text = path.read_text(encoding="utf-8")
    if not any(name in text for name in BACKENDS):
        return found  # no import of either can be spelled without its name (and parsing costs ~15 ms a file)
    for node in ast.walk(ast.parse(text, str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and _called_name(node) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        where = f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)}"
        found += [f"{where} {name}" for name in names if name.split(".")[0] in BACKENDS]
    return found


def test_only_the_console_package_imports_a_backend() -> None:
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if "console" not in p.relative_to(PACKAGE).parts[:1]]
    assert len(outside) > 50  # the walk found the package
    assert [hit for p in outside for hit in backend_imports(p)] == []


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_the_console_package_does_import_each_backend(backend: str) -> None:
    """The check above sees both ways the console imports a backend (else it proves nothing)."""
    hits = [hit for p in sorted((PACKAGE / "console").glob("*.py")) for hit in backend_imports(p)]
    assert any(hit.endswith(f" {backend}") for hit in hits)
