"""The base of every record model: strict fields, and what every record carries."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
