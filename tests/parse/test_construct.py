"""Records built without validation (``kdmcp.parse._construct``) are what validation builds.

The hot paths of ``!process``, stacks and ``lm`` make their model instances directly; the
promise is that nothing tells such an instance from ``model_validate`` of the fields it
was given: the same values of the same types, the same ``model_fields_set``, the same
``__dict__`` order (it is the order of every dump), no extra or private state.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from kdmcp.parse import parse
from kdmcp.parse._construct import adopt, field_defaults, trusted
from kdmcp.parse.models import Frame, ThreadInfo, WaitObject

Corpus = Any  # the session fixture from conftest.py


def _as_input(value: Any) -> Any:
    """What validation would have been given: each model as a dict of its set fields."""
    if isinstance(value, BaseModel):
        return {name: _as_input(getattr(value, name)) for name in value.model_fields_set}
    if isinstance(value, (list, tuple)):
        return type(value)(_as_input(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_input(v) for k, v in value.items()}
    return value


def _assert_same(built: Any, validated: Any, path: str) -> None:
    assert type(built) is type(validated), f"{path}: {type(built).__name__} != {type(validated).__name__}"
    if isinstance(built, BaseModel):
        assert built.model_fields_set == validated.model_fields_set, path
        assert list(built.__dict__) == list(validated.__dict__), f"{path}: field order"
        assert built.__pydantic_extra__ == validated.__pydantic_extra__, path
        assert built.__pydantic_private__ == validated.__pydantic_private__, path
        for name in type(built).model_fields:
            _assert_same(getattr(built, name), getattr(validated, name), f"{path}.{name}")
    elif isinstance(built, (list, tuple)):
        assert len(built) == len(validated), path
        for i, (a, b) in enumerate(zip(built, validated, strict=True)):
            _assert_same(a, b, f"{path}[{i}]")
    elif isinstance(built, dict):
        assert list(built) == list(validated), path
        for key in built:
            _assert_same(built[key], validated[key], f"{path}[{key!r}]")
    else:
        assert built == validated, path


def _assert_revalidates(record: BaseModel, label: str) -> None:
    validated = type(record).model_validate(_as_input(record))
    _assert_same(record, validated, label)


@pytest.mark.parametrize(
    ("command", "synth"),
    [("!process 0 7", "synth_processes"), ("lm v", "synth_modules"), ("kv", "synth_stack")],
)
def test_benchmark_records_equal_their_revalidation(command: str, synth: str, bench_parse: Any) -> None:
    text = getattr(bench_parse, synth)(150_000)
    record = parse(command, text)
    assert record.kind != "text"
    _assert_revalidates(record, command)


def test_corpus_records_equal_their_revalidation(corpus: Corpus) -> None:
    checked = 0
    for name in corpus.names():
        for i, block in enumerate(corpus.blocks(name)):
            _assert_revalidates(block.record, f"{name}#{i} {block.command!r}")
            checked += 1
    assert checked > 150  # every block of every sample (184 today)


def test_trusted_fills_defaults_and_rejects_what_validation_would() -> None:
    new_thread = trusted(ThreadInfo)
    t = new_thread({"address": "0xffff", "state": "WAIT"})
    assert t == ThreadInfo.model_validate({"address": "0xffff", "state": "WAIT"})
    assert t.model_fields_set == {"address", "state"}
    other = new_thread({})
    assert other.frames == [] and other.frames is not t.frames  # a fresh list per instance
    with pytest.raises(ValueError, match="unknown fields"):
        new_thread({"adress": "0x1"})
    with pytest.raises(ValueError, match="missing"):
        trusted(WaitObject)({"address": "0x1"})


def test_adopt_takes_the_dict_as_the_instance_state() -> None:
    fields = field_defaults(Frame)
    fields.update(call_site="nt!KiSwapContext+0x76", module="nt")
    frame = adopt(Frame)(fields, {"call_site", "module"})
    assert frame == Frame(call_site="nt!KiSwapContext+0x76", module="nt")
    assert frame.model_fields_set == {"call_site", "module"}
    frame.function = "KiSwapContext"  # instances stay ordinary models: assignment works
    assert frame.model_fields_set == {"call_site", "module", "function"}
    with pytest.raises(TypeError, match="required"):
        field_defaults(WaitObject)
