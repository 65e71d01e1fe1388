"""``scripts/bench_parse.py`` runs and reports the figures the benchmark harness reads."""

from __future__ import annotations

from typing import Any


def test_measure_reports_throughput_keys(bench_parse: Any) -> None:
    figures = bench_parse.measure(size_mb=0.2, rounds=1)
    assert {
        "parse_mb_s_processes",
        "parse_mb_s_modules",
        "parse_mb_s_stack",
        "parse_mb_s_family_samples",
        "python_loop_10m_s",
    } <= set(figures)
    assert all(isinstance(v, float) and v > 0 for v in figures.values())
