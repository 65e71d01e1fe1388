"""Model instances from values that are already in validated form, without re-validating.

pydantic validation costs about a microsecond per model instance plus a tenth per field;
a large ``!process 0 7`` or ``kv`` output makes tens of thousands of ``Frame`` s, and that
was the largest single cost of ``parse``. The hot paths whose values are exactly what
validation would return (``str``, ``int``, ``tuple[str, ...]``, ``None``, nested model
instances) build their instances here: the same ``__dict__`` (every field, in
declaration order, defaults filled in), the same ``model_fields_set`` (the keys given)
and no extra or private state - what ``model_validate`` on the same dict produces.

``tests/parse/test_construct.py`` holds the promise: on the corpus and the benchmark
inputs, every record equals its own re-validation, field sets included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

# The setters of BaseModel's slots, called directly: object.__setattr__ looks each one up
# again on every call, and these run for every frame of a large capture.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def trusted(cls: type[M]) -> Callable[[dict[str, Any]], M]:
    """A builder ``values -> cls instance`` for values already in validated form.

    ``values`` must hold only field names of ``cls`` (no aliases), each with a value of
    exactly the type validation returns for it; required fields must be present. Fields
    left out take their default (a fresh one for a ``default_factory``).
    """
    template: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    required: set[str] = set()
    for name, field in cls.model_fields.items():
        factory = field.default_factory
        if field.is_required():
            required.add(name)
            template[name] = None  # placeholder: keeps the declaration order
        elif factory is not None:
            if getattr(field, "default_factory_takes_validated_data", False):
                raise TypeError(f"{cls.__name__}.{name}: a default factory that reads other fields")
            factories.append((name, cast("Callable[[], Any]", factory)))
            template[name] = None  # placeholder, filled per instance
        else:
            template[name] = field.default
    if cls.model_config.get("extra") == "allow" or cls.__pydantic_post_init__ is not None:
        raise TypeError(f"{cls.__name__}: extra fields or a post-init hook need validation")
    new = cls.__new__
    copy = template.copy
    names = template.keys()

    def build(values: dict[str, Any]) -> M:
        if not values.keys() <= names:  # what extra="forbid" would reject
            raise ValueError(f"{cls.__name__}: unknown fields {sorted(values.keys() - names)}")
        if required and not required <= values.keys():
            raise ValueError(f"{cls.__name__}: missing {sorted(required - values.keys())}")
        fields = copy()
        fields.update(values)
        for name, factory in factories:
            if name not in values:
                fields[name] = factory()
        instance = new(cls)
        _set_dict(instance, fields)
        _set_fields_set(instance, set(values))
        _set_extra(instance, None)
        _set_private(instance, None)
        return instance

    build.__doc__ = f"A trusted ``{cls.__name__}`` (see ``kdmcp.parse._construct.trusted``)."
    return build


def field_defaults(cls: type[BaseModel]) -> dict[str, Any]:
    """Every field of ``cls`` with its default, in declaration order: the ``__dict__`` of an
    instance given nothing. Only for models whose defaults are all immutable (no factory,
    no required field), so that one copy per instance is safe."""
    template: dict[str, Any] = {}
    for name, field in cls.model_fields.items():
        if field.is_required() or field.default_factory is not None:
            raise TypeError(f"{cls.__name__}.{name}: required or built by a factory")
        template[name] = field.default
    return template


def adopt(cls: type[M]) -> Callable[[dict[str, Any], set[str]], M]:
    """A builder ``(fields, fields_set) -> cls instance`` that takes ``fields`` as the
    instance's ``__dict__``: every field, in declaration order (start from a copy of
    ``field_defaults(cls)``), each value in validated form; ``fields_set`` names the fields
    the output printed (what ``model_fields_set`` would be after validating them)."""
    if cls.model_config.get("extra") == "allow" or cls.__pydantic_post_init__ is not None:
        raise TypeError(f"{cls.__name__}: extra fields or a post-init hook need validation")
    new = cls.__new__

    def build(fields: dict[str, Any], fields_set: set[str]) -> M:
        instance = new(cls)
        _set_dict(instance, fields)
        _set_fields_set(instance, fields_set)
        _set_extra(instance, None)
        _set_private(instance, None)
        return instance

    return build
