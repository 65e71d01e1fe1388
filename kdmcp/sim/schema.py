"""Reading a scenario document into its dataclasses: the checks pydantic would make, in stdlib.

A scenario file is a YAML mapping whose shape is the dataclasses of
:mod:`~kdmcp.sim.scenario`. :func:`read` refuses what the schema does not name (a misspelt key
must not be ignored: ``respones:`` would silently give a target with no responses), checks each
value's type against the field's annotation (``str``, ``int``, ``float``, ``bool``,
``X | None``, ``Literal[...]``, ``list[X]``, ``dict[str, X]``, a nested dataclass) and the
bounds :func:`bounded` gives it, and reports every problem with the key that holds it:
``on_go.0.kind: expected one of 'dbgprint', 'breakpoint', ...``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar

__all__ = ["ScenarioError", "bounded", "read"]

T = TypeVar("T")
_MISSING = dataclasses.MISSING


class ScenarioError(ValueError):
    """A scenario document that does not fit the schema; ``problems`` names each key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def bounded(default: Any, *, ge: float | None = None, le: float | None = None) -> Any:
    """A field with ``default`` and inclusive bounds on its value."""
    return dataclasses.field(default=default, metadata={"ge": ge, "le": le})


def read(cls: type[T], data: object, where: str = "") -> T:
    """``data`` as a ``cls``; :class:`ScenarioError` listing every problem if it does not fit."""
    problems: list[str] = []
    value = _dataclass(cls, data, where, problems)
    if problems:
        raise ScenarioError(problems)
    return typing.cast(T, value)


def _at(where: str, key: object) -> str:
    return f"{where}.{key}" if where else str(key)


def _dataclass(cls: type, data: object, where: str, problems: list[str]) -> object:
    if not isinstance(data, dict):
        problems.append(f"{where or '(document)'}: expected a mapping, got {type(data).__name__}")
        return None
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in data:
        if key not in fields:
            problems.append(f"{_at(where, key)}: not a known key")
    values: dict[str, object] = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is _MISSING and f.default_factory is _MISSING:
                problems.append(f"{_at(where, name)}: required")
            continue
        values[name] = _value(hints[name], data[name], _at(where, name), problems)
        _bounds(f, values[name], _at(where, name), problems)
    if problems:
        return None
    return cls(**values)


def _bounds(f: dataclasses.Field[Any], value: object, where: str, problems: list[str]) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return
    ge, le = f.metadata.get("ge"), f.metadata.get("le")
    if ge is not None and value < ge:
        problems.append(f"{where}: must be at least {ge}")
    if le is not None and value > le:
        problems.append(f"{where}: must be at most {le}")


def _value(hint: object, data: object, where: str, problems: list[str]) -> object:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if data is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _value(inner[0], data, where, problems)
    if origin is typing.Literal:
        if data not in args:
            problems.append(f"{where}: expected one of {', '.join(repr(a) for a in args)}")
        return data
    if origin is list:
        if not isinstance(data, list):
            problems.append(f"{where}: expected a list")
            return []
        return [_value(args[0], item, _at(where, i), problems) for i, item in enumerate(data)]
    if origin is dict:
        if not isinstance(data, dict):
            problems.append(f"{where}: expected a mapping")
            return {}
        return {str(k): _value(args[1], v, _at(where, k), problems) for k, v in data.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(hint, data, where, problems)
    return _scalar(hint, data, where, problems)


def _scalar(hint: object, data: object, where: str, problems: list[str]) -> object:
    if hint is bool:
        ok = isinstance(data, bool)
    elif hint is int:
        ok = isinstance(data, int) and not isinstance(data, bool)
    elif hint is float:
        ok = isinstance(data, int | float) and not isinstance(data, bool)
        data = float(data) if ok else data  # type: ignore[arg-type]
    elif hint is str:
        ok = isinstance(data, str)
    else:  # a type the schema does not use
        raise TypeError(f"{where}: unsupported schema type {hint!r}")
    if not ok:
        name = getattr(hint, "__name__", str(hint))
        problems.append(f"{where}: expected {name}, got {type(data).__name__}")
    return data
