"""Records of what the target holds: registers, memory, disassembly, ``dt`` types, ``dv`` locals,
``dx`` data model values, ``?`` expressions.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kdmcp.parse.models.base import RecordBase, ServedForm, StrictModel
from kdmcp.parse.models.parts import Context, Instruction

# --------------------------------------------------------------------------- registers


class RegistersRecord(RecordBase, Context):
    """``r``, ``r rip``, ``rM``, ``.trap``/``.cxr``, ``~Ns``: a context and current instruction."""

    kind: Literal["registers"] = "registers"

    @property
    def context(self) -> Context:
        """The record is itself the context. A step that printed only the register display is a
        ``registers`` record (``kdmcp.parse.dispatch``), one that reported an event an ``events``
        record with the display in ``context``: code reading a step's context reads either."""
        return self


# --------------------------------------------------------------------------- memory


class MemoryRow(StrictModel):
    """One line of a ``d*`` dump."""

    address: str
    segment: str | None = None  # "003b" in "003b:00000030"
    values: list[str] = Field(default_factory=list)
    ascii: str | None = None  # db / dc / dW character column
    text: str | None = None  # da / du string
    symbols: list[str | None] = Field(default_factory=list)  # dps / dqs / dds, aligned with values
    # dps / dqs / dds with source line loading on: the symbol's "[file @ line]", kept out of it
    source_file: str | None = None
    source_line: int | None = None


class MemoryRecord(RecordBase):
    """``db dw dd dq dp dps dqs dds da du dc dl`` and friends."""

    kind: Literal["memory"] = "memory"
    unit: str = "unknown"  # byte word dword qword pointer ascii unicode float double binary
    rows: list[MemoryRow] = Field(default_factory=list)


# --------------------------------------------------------------------------- disassembly


class DisassemblyRecord(RecordBase):
    """``u``, ``ub``, ``uf``."""

    kind: Literal["disassembly"] = "disassembly"
    instructions: list[Instruction] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- dt


class TypeField(ServedForm):
    """One ``+0x010 Name : value`` line of ``dt``."""

    offset: str
    name: str
    value: str | None = None  # instance dump ("dt type address")
    type: str | None = None  # layout dump, or the type printed after a pointer value
    depth: int = 0  # nesting under -r
    bitfield: bool = False
    # what dt prints after the value and type: the string a pointer or a _UNICODE_STRING holds
    # (quotes removed), an embedded _LIST_ENTRY's "[ flink - blink ]", after "->" what a
    # pointer to a pointer points at ("(null)", "0x00470000 Void"), a function's symbol
    preview: str | None = None

    def leave_out_derived(self, data: dict[str, Any]) -> None:
        """Served, ``bitfield`` is left out where the type says it (``Pos 3, 1 Bit``)."""
        if self.bitfield and (self.type or "").startswith("Pos "):
            del data["bitfield"]


class ListedType(StrictModel):
    """One row of a ``dt module!*`` listing: a type, or a global with its address."""

    name: str  # as printed: "ntkrnlmp!_KPCR", "thismodule!myglobal1"
    address: str | None = None  # a global's address; a type has none
    size: str | None = None  # dt -v: hex size column as printed ("002")


class TypeListEntry(StrictModel):
    """One entry of a list ``dt -l`` walks: its ``## link at address`` line and its fields."""

    link: str  # "ActiveProcessLinks.Flink"
    address: str
    fields: list[TypeField] = Field(default_factory=list)


class TypeDumpRecord(RecordBase):
    """``dt``: a type layout or an instance."""

    kind: Literal["type_dump"] = "type_dump"
    type_name: str | None = None
    instance: bool = False
    preview: str | None = None  # the string line dt prints under _UNICODE_STRING
    fields: list[TypeField] = Field(default_factory=list)
    types: list[ListedType] = Field(default_factory=list)  # dt module!*: the types and globals listed
    list_entries: list[TypeListEntry] = Field(default_factory=list)  # dt -l: the walked list's entries


# --------------------------------------------------------------------------- smaller families


class ExpressionRecord(RecordBase):
    """``? expr`` (``Evaluate expression: 0 = 00000000``), ``??`` and ``.formats``."""

    kind: Literal["expression"] = "expression"
    value: str | None = None
    decimal: int | None = None
    fields: dict[str, str] = Field(default_factory=dict)


class LocalVariable(StrictModel):
    """One ``dv`` line."""

    name: str
    value: str
    location: str | None = None  # address, "@rcx", or "<unavailable>"
    type: str | None = None
    scope: str | None = None  # "prv local" / "prv param"


class LocalsRecord(RecordBase):
    """``dv``."""

    kind: Literal["locals"] = "locals"
    locals: list[LocalVariable] = Field(default_factory=list)


class DataModelEntry(StrictModel):
    """One child line of ``dx``."""

    name: str | None = None  # None on a line that is only "[Type: T]" (a function pointer's pointee)
    value: str | None = None
    type: str | None = None
    depth: int = 1
    links: list[str] = Field(default_factory=list)  # DML link text, brackets dropped: "[Switch To]" -> "Switch To"


class DataModelRecord(RecordBase):
    """``dx``."""

    kind: Literal["data_model"] = "data_model"
    expression: str | None = None
    value: str | None = None
    type: str | None = None
    children: list[DataModelEntry] = Field(default_factory=list)
