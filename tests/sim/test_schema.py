"""kdmcp/sim/schema.py: a scenario document is read into the dataclasses or refused, every
problem named by the key that holds it (fast tier)."""

from __future__ import annotations

import pytest

from kdmcp.sim.scenario import RunEvent, Scenario, builtin
from kdmcp.sim.schema import ScenarioError, read


def _problems(data: object) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        read(Scenario, data)
    return caught.value.problems


def test_a_document_becomes_its_dataclasses_with_defaults() -> None:
    sc = read(
        Scenario,
        {
            "name": "x",
            "target": {"processors": 2},
            "on_go": [{"kind": "dbgprint", "text": "hi"}],
            "responses": {"lm": {"text": "a\n", "latency_ms": 5}},
            "world": {"seed": 3},
        },
    )
    assert sc.target.processors == 2 and sc.target.build == 19041
    assert sc.on_go == [RunEvent(kind="dbgprint", text="hi")]
    assert sc.responses["lm"].latency_ms == 5 and sc.world.seed == 3 and sc.world.enabled
    assert read(Scenario, {"responses": {"x": {"bulk_mb": 1}}}).responses["x"].bulk_mb == 1.0  # int as float


def test_every_problem_is_named_by_its_key() -> None:
    problems = _problems(
        {
            "respones": {},
            "target": {"processors": 0, "arch": "mips"},
            "on_go": [{"text": "no kind"}, {"kind": "exit", "exit_code": "3"}],
            "connect": {"port": True},
            "reboot_delay_ms": -1,
        }
    )
    assert problems == [
        "respones: not a known key",
        "target.arch: expected one of 'x64', 'x86', 'arm64'",
        "target.processors: must be at least 1",
        "connect.port: expected int, got bool",
        "reboot_delay_ms: must be at least 0",
        "on_go.0.kind: required",
        "on_go.1.exit_code: expected int, got str",
    ]


def test_shapes_are_checked() -> None:
    assert _problems([1, 2]) == ["(document): expected a mapping, got list"]
    assert _problems({"on_go": {"kind": "exit"}}) == ["on_go: expected a list"]
    assert _problems({"responses": {"r": "text"}}) == ["responses.r: expected a mapping, got str"]
    assert _problems({"responses": {"r": {"bulk_mb": 5000}}}) == ["responses.r.bulk_mb: must be at most 4096"]


def test_the_built_in_scenarios_read() -> None:
    for name in ("default_kd", "default_cdb"):
        assert builtin(name).name == name
