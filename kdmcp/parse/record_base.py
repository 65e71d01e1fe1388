"""The base of every record model: strict fields, what every record carries, the served form.

Apart from ``kdmcp.parse.models`` on purpose: the server's result models need ``RecordBase``
at start-up, and importing any module of that package builds every record model and the
``Record`` union first (~0.14 s, then ~0.13 s more for the parsers) — the cold start a client
waits for before its first ``tools/list``. The records are built on the first command.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from kdmcp.validation import LazyModel

# The serialisation context of a record's served form (``kdmcp/server/models.py``): what a
# model's other fields already say is left out there (the raw text is served beside it).
SERVED: dict[str, Any] = {"served": True}


def is_served(info: SerializationInfo) -> bool:
    """Whether this dump is the served form (``SERVED``), where derivable fields are left out."""
    context = info.context
    return isinstance(context, dict) and context.get("served") is True


class StrictModel(LazyModel):
    """Base for every model here: unknown fields are a bug, not data."""

    model_config = ConfigDict(extra="forbid")


class ServedForm(StrictModel):
    """A model whose served form (``SERVED``) leaves out what its other fields already say.

    The one serializer that does it; each model says what in ``leave_out_derived``. Only the
    models that have something to leave out take it: a wrap serializer costs every dump.
    """

    def leave_out_derived(self, data: dict[str, Any]) -> None:
        """Remove from ``data`` (this model's dump) the fields the others already say."""

    @model_serializer(mode="wrap")
    def _served(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if is_served(info):
            self.leave_out_derived(data)
        return data


class RecordBase(StrictModel):
    """Fields every record has."""

    command: str = ""
    raw: str
    warnings: list[str] = Field(default_factory=list)
