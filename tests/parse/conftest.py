"""Shared fixtures for the parser tests: the real-transcript corpus (``tests/parse/samples/corpus.py``)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from tests.parse.samples.corpus import REPO_ROOT, Corpus


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    return Corpus()  # a missing index.json raised at import: the tests fail, they do not skip


@pytest.fixture(scope="session")
def bench_parse() -> Any:
    """``scripts/bench_parse.py`` as a module: its synthesised large outputs and ``measure``."""
    script = REPO_ROOT / "scripts" / "bench_parse.py"
    spec = importlib.util.spec_from_file_location("bench_parse", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
