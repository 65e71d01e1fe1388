"""What the checkout says of itself: the ``[project]`` table's plain fields and the files a clone has.

One reader for the scripts and tests that need them (``build_mcpb.py``, the packaging and
registry-entry tests) instead of a regular expression and a ``git ls-files`` call in each.
``tomllib`` is Python 3.11+ and the package supports 3.10, so the table's ``key = "value"`` lines
are read as text: the fields read here are plain strings.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT_KEYS = ("name", "version", "requires-python")


def project(root: Path = ROOT) -> dict[str, str]:
    """``name``, ``version`` and ``requires-python`` of ``pyproject.toml``'s ``[project]`` table."""
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    found = {key: re.search(rf'^{key} = "([^"]+)"', text, re.MULTILINE) for key in PROJECT_KEYS}
    return {key: match.group(1) for key, match in found.items() if match}


def tracked(prefix: str = "", root: Path = ROOT) -> list[str]:
    """The files a clone has under ``prefix``: tracked, plus new ones not yet committed and not
    ignored (``__pycache__`` never)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z", "--", prefix or "."], cwd=root,
                            capture_output=True, check=True, timeout=60).stdout.decode()
    return [name for name in listed.split("\0") if name and "__pycache__" not in name and (root / name).is_file()]
