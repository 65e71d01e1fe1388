"""Records of modules and symbols: ``lm``, ``x``/``ln``, ``.sympath``, ``.reload``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kdmcp.parse.models.base import RecordBase, StrictModel

# --------------------------------------------------------------------------- modules


class Module(StrictModel):
    """One ``lm`` row, plus the verbose block ``lmv`` prints under it."""

    start: str
    end: str
    name: str
    symbol_status: str | None = None  # "deferred", "pdb symbols", "export symbols", "no symbols"...
    symbol_file: str | None = None
    marker: str | None = None  # "T" (timestamp mismatch), "C" (checksum mismatch), "M"...
    image_path: str | None = None
    image_name: str | None = None
    loaded_image_file: str | None = None
    timestamp: str | None = None
    checksum: str | None = None
    image_size: str | None = None
    file_version: str | None = None
    product_version: str | None = None
    company_name: str | None = None
    file_description: str | None = None
    details: dict[str, str] = Field(default_factory=dict)
    partial: bool = False  # a row read only in part (kdmcp/parse/partial.py), whole in ``raw_line``
    raw_line: str | None = None


class UnloadedModule(StrictModel):
    """A row of the ``Unloaded modules:`` section."""

    start: str
    end: str
    name: str


class ModulesRecord(RecordBase):
    """``lm`` in all its spellings (``lm k``, ``lmv``, ``lmDvm X``, ``lm m pat``...)."""

    kind: Literal["modules"] = "modules"
    modules: list[Module] = Field(default_factory=list)
    unloaded: list[UnloadedModule] = Field(default_factory=list)


class SymbolInfo(StrictModel):
    """One ``x`` result or ``ln`` neighbour; each field is None where that layout prints none."""

    address: str | None = None  # None for x /1 (names only) and an exact match ln printed no neighbour for
    name: str | None = None  # as printed, "nt!KiPageFault+0x469"; None for x /0 (addresses only)
    module: str | None = None
    symbol: str | None = None  # without the displacement: "KiPageFault"
    offset: str | None = None  # the displacement ln prints after the symbol: "0x469", "-0x177" (to the next one)
    signature: str | None = None  # "(void)", "(<no parameter info>)"
    kind: str | None = None  # x /v's first column: "prv func", "pub global", "global"
    size: str | None = None  # x /v /f /d: hex size in bytes, as printed ("249", "a8")
    type: str | None = None  # x /t's type column ("char *", "<NoType>"), or x /v's "= type"
    value: str | None = None  # what x prints after " = " for a global: '0x00425de8 "(null)"', "512"
    exact: bool | None = None


class SymbolsRecord(RecordBase):
    """``x`` and ``ln``."""

    kind: Literal["symbols"] = "symbols"
    symbols: list[SymbolInfo] = Field(default_factory=list)


class SymbolPathRecord(RecordBase):
    """``.sympath`` / ``.symfix``: the path and its validation summary."""

    kind: Literal["symbol_path"] = "symbol_path"
    path: str | None = None
    expanded_path: str | None = None
    validation: list[dict[str, str]] = Field(default_factory=list)


class SymbolLoadRecord(RecordBase):
    """``.reload`` and ``ld``: which modules were (re)loaded and the progress printed."""

    kind: Literal["symbol_load"] = "symbol_load"
    modules: list[str] = Field(default_factory=list)
    messages: list[str] = Field(default_factory=list)
    progress_dots: int = 0
