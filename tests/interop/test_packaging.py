"""What a user installs: the sdist and the wheel built from a checkout, and the wheel installed and served.

Every other test runs kd-mcp from the source tree, where a data file the build leaves out is still
on disk (issue 31: ``kdmcp/parse/error_table.txt`` was in neither artifact, so ``decode_error``
failed only after ``pip install kd-mcp``). Here the tracked files are copied to a folder of their
own, the sdist is built from that copy and the wheel from the sdist (``python -m build``, as a
release is built), the wheel is installed into a fresh venv outside the checkout, and the installed
server is driven over stdio through every tool by the TypeScript SDK harness, from a folder where
``python -m kdmcp`` cannot find the source tree.

The fresh venv gets its dependencies from the running interpreter's site-packages through a
``.pth`` line (no download in the middle of a test); kd-mcp itself comes from the wheel alone, which
the test checks (``kdmcp.__file__``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kdmcp.server.registry import tool_groups
from scripts.project_files import project, tracked

pytestmark = pytest.mark.process  # builds, installs and starts processes (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PROJECT = project()
DIST_NAME = PROJECT["name"].replace("-", "_")
NOTICES = ("LICENSE", "THIRD_PARTY_NOTICES.md")


@dataclass(frozen=True)
class Built:
    """The two artifacts of one build, and the copy of the checkout they were built from."""

    source: Path
    sdist: Path
    wheel: Path


def _clean_env() -> dict[str, str]:
    """This environment without what would let a child import the source tree instead of the wheel."""
    return {name: value for name, value in os.environ.items()
            if name not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP"} and not name.startswith("KDMCP_")}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    work = tmp_path_factory.mktemp("packaging")
    source = work / "source"
    for name in tracked():
        if name.startswith("tests/interop/node_modules/"):
            continue
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / name).read_bytes())
    out = work / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
                          cwd=work, capture_output=True, text=True, timeout=300, check=False, env=_clean_env())
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return Built(source, sdist, wheel)


def test_the_wheel_ships_every_file_the_package_reads(built: Built) -> None:
    package_files = {name for name in tracked()
                     if name.startswith("kdmcp/") and "/__pycache__/" not in name}
    with zipfile.ZipFile(built.wheel) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"{DIST_NAME}-{PROJECT['version']}.dist-info/METADATA").decode()
    missing = sorted(package_files - names)
    # MANIFEST.in grafts kdmcp into the sdist, include-package-data carries it into the wheel
    assert not missing, f"in kdmcp/ but not in the wheel: {missing}"
    for notice in NOTICES:
        assert f"{DIST_NAME}-{PROJECT['version']}.dist-info/licenses/{notice}" in names
    assert "License-Expression: MIT" in metadata  # the SPDX string, not the deprecated table
    assert not any(name.startswith(("tests/", "fixtures/")) for name in names)


def test_the_sdist_carries_the_notices_the_tests_and_the_example_config(built: Built) -> None:
    prefix = f"{DIST_NAME}-{PROJECT['version']}/"
    with tarfile.open(built.sdist) as sdist:
        names = {name.removeprefix(prefix) for name in sdist.getnames()}
    wanted = {*NOTICES, "README.md", "pyproject.toml", "kdmcp/parse/error_table.txt", "tests/conftest.py",
              "config/kdmcp.example.yaml", "config/state.example.yaml", "fixtures/dumps/README.md",
              "fixtures/dumps/null_read_av.dmp"}
    assert wanted <= names, sorted(wanted - names)
    assert not any("node_modules" in name or "__pycache__" in name for name in names)


def test_the_sdist_runs_the_tests(built: Built, tmp_path: Path) -> None:
    with tarfile.open(built.sdist) as sdist:
        sdist.extractall(tmp_path, filter="data")
    (unpacked,) = tmp_path.iterdir()
    # A slice of the fast tier that reads packaged data and the fixtures (the error table, the
    # corpus, the real minidumps' headers): enough to show the sdist is a working checkout.
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", "not process",
         "tests/parse/test_error_table.py", "tests/parse/samples/test_corpus.py"],
        cwd=unpacked, capture_output=True, text=True, timeout=300, check=False, env=_clean_env(),
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]


@pytest.fixture(scope="module")
def installed(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A venv outside the checkout with the wheel installed (not editable): its python."""
    home = tmp_path_factory.mktemp("installed")
    env_dir = home / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                           "--no-index", str(built.wheel)],
                          capture_output=True, text=True, timeout=300, check=False, env=_clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    # The dependencies, from this interpreter's site-packages: a plain path line, so the source
    # tree's editable-install hook there (a .pth of its own) is not run in the new venv.
    Path(purelib, "kdmcp_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n",
                                                            encoding="utf-8")
    yield python


def test_the_installed_wheel_is_what_runs(installed: Path, tmp_path: Path) -> None:
    probe = ("import kdmcp, kdmcp.parse.error_table as t; print(kdmcp.__file__); "
             "print(t.decode(0xC0000005).name == 'STATUS_ACCESS_VIOLATION')")
    done = subprocess.run([str(installed), "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False, env=_clean_env())
    assert done.returncode == 0, done.stderr
    where, found = done.stdout.split()
    assert Path(where).is_relative_to(installed.parents[1]), where
    assert found == "True"


def test_the_installed_server_answers_every_tool_over_stdio(installed: Path, node: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [node, str(HERE / "harness.mjs"), "--python", str(installed), "--root", str(ROOT), "--cwd", str(tmp_path),
         "--transport", "stdio", "--groups", json.dumps(tool_groups())],
        cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=360, check=False,
        env=_clean_env(),
    )
    lines = done.stdout.splitlines()
    assert lines, done.stderr
    summary = json.loads(lines[-1])
    assert done.returncode == 0 and summary["failed"] == 0, "\n".join(summary["failures"]) + "\n" + done.stderr
    assert all(summary["tools_ok"].values()) and set(summary["tools_ok"]) == {
        name for names in tool_groups().values() for name in names}, summary["tools_ok"]
