"""``scripts/bench_parse.py`` runs and reports the figures the benchmark harness reads."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_parse.py"


def test_measure_reports_throughput_keys() -> None:
    spec = importlib.util.spec_from_file_location("bench_parse", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figures = module.measure(size_mb=0.2)
    assert {"parse_mb_s_processes", "parse_mb_s_modules"} <= set(figures)
    assert all(isinstance(v, float) and v > 0 for v in figures.values())
