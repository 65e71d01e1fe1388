"""The base of every record model: strict fields, and what every record carries."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo

# The serialisation context of a record's served form (``kdmcp/server/models.py``): what a
# model's other fields already say is left out there (the raw text is served beside it).
SERVED: dict[str, Any] = {"served": True}


def is_served(info: SerializationInfo) -> bool:
    """Whether this dump is the served form (``SERVED``), where derivable fields are left out."""
    context = info.context
    return isinstance(context, dict) and context.get("served") is True


class StrictModel(BaseModel):
    """Base for every model here: unknown fields are a bug, not data."""

    model_config = ConfigDict(extra="forbid")


class RecordBase(StrictModel):
    """Fields every record has."""

    command: str = ""
    raw: str
    warnings: list[str] = Field(default_factory=list)


class TextRecord(RecordBase):
    """Output no parser understood. Kept whole in ``raw``; never an exception."""

    kind: Literal["text"] = "text"
