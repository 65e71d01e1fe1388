"""The base of every record model (``kdmcp/parse/record_base.py``), and the record of text no parser read."""

from __future__ import annotations

from typing import Literal

from kdmcp.parse.record_base import SERVED, RecordBase, ServedForm, StrictModel, is_served

__all__ = ["SERVED", "RecordBase", "ServedForm", "StrictModel", "TextRecord", "is_served"]


class TextRecord(RecordBase):
    """Output no parser understood. Kept whole in ``raw``; never an exception."""

    kind: Literal["text"] = "text"
