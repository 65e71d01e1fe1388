"""Helpers the world's test modules share: a command's answer, and its typed object record."""

from __future__ import annotations

from kdmcp.parse import parse
from kdmcp.parse.models import ObjectRecord
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World

__all__ = ["object_record", "run"]


def run(world: World, command: str) -> str:
    """What the world prints for ``command``; the world must answer it."""
    out = answer(world, command)
    assert out is not None, command
    return out


def object_record(command: str, text: str | None) -> ObjectRecord:
    """The object record the parser makes of a world answer."""
    assert text is not None
    record = parse(command, text)
    assert isinstance(record, ObjectRecord), record
    return record
