"""The record of the object extensions (``!irp``, ``!drvobj``, ``!pool``, ``!pte``...) and its typed tables."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kdmcp.parse.models.base import RecordBase, StrictModel
from kdmcp.parse.models.parts import Frame

# --------------------------------------------------------------------------- kernel objects


class IrpStackLocation(StrictModel):
    """One ``[major,minor]`` location of ``!irp``."""

    current: bool = False
    major: str
    minor: str
    flags: str | None = None
    control: str | None = None
    device: str | None = None
    file: str | None = None
    completion_routine: str | None = None
    context: str | None = None
    invoke_on: list[str] = Field(default_factory=list)  # Success Error Cancel
    pending: bool = False
    driver: str | None = None
    completion_symbol: str | None = None
    args: list[str] = Field(default_factory=list)


class DispatchRoutine(StrictModel):
    """One ``[00] IRP_MJ_CREATE  addr  symbol`` row of ``!drvobj ... 2``."""

    index: int
    name: str
    address: str
    symbol: str | None = None


class DeviceStackEntry(StrictModel):
    """One row of ``!devstack``."""

    current: bool = False
    device: str
    driver: str
    extension: str | None = None
    name: str | None = None


class DirectoryEntry(StrictModel):
    """One object of an ``!object`` directory listing."""

    hash: str | None = None
    address: str
    type: str
    name: str


class PoolBlock(StrictModel):
    """One block line of ``!pool`` / ``!poolfind``."""

    address: str
    size: str
    previous_size: str
    state: str  # "Allocated" / "Free"
    tag: str | None = None
    contains_address: bool = False  # '*' marker: the block holding the queried address


class PteLevel(StrictModel):
    """One paging level of ``!pte`` (PXE, PPE, PDE, PTE)."""

    level: str
    address: str
    contains: str | None = None
    pfn: str | None = None
    flags: str | None = None


class ObjectRecord(RecordBase):
    """Kernel/user object extensions: ``!irp !drvobj !devobj !devstack !object !pool !pte``
    and the key/value ones (``!teb !peb !pcr !address !irql !apic !vm !locks !handle !heap``).

    ``object_type`` names which; scalar facts are in ``fields``, tables in the typed lists
    or, for the rarer extensions, in ``entries``.
    """

    kind: Literal["object"] = "object"
    object_type: str
    address: str | None = None
    name: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    entries: list[dict[str, str]] = Field(default_factory=list)
    irp_stack: list[IrpStackLocation] = Field(default_factory=list)
    dispatch_routines: list[DispatchRoutine] = Field(default_factory=list)
    devices: list[DeviceStackEntry] = Field(default_factory=list)
    directory: list[DirectoryEntry] = Field(default_factory=list)
    pool_blocks: list[PoolBlock] = Field(default_factory=list)
    pte_levels: list[PteLevel] = Field(default_factory=list)
    frames: list[Frame] = Field(default_factory=list)
