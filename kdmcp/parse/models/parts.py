"""Record parts that several families share: frames, instructions, contexts, exceptions, targets.

A ``k`` stack, a ``!thread`` block and ``!analyze``'s ``STACK_TEXT`` all hold ``Frame``s; ``r``,
a trap frame and an event all hold a ``Context``; so these live apart from any one family.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kdmcp.parse.models.base import ServedForm, StrictModel


class Frame(ServedForm):
    """One stack frame, as ``k*``, ``!thread``, ``STACK_TEXT`` or ``!heap -p -a`` print it."""

    index: int | None = None
    child_sp: str | None = None
    child_ebp: str | None = None
    return_address: str | None = None
    # Tuples, not lists: frames are by far the most numerous record part, and an immutable
    # default spares pydantic a factory call per frame (~25% of a large stack's validation).
    args: tuple[str, ...] = ()
    call_site: str = ""
    module: str | None = None
    function: str | None = None
    offset: str | None = None
    address: str | None = None  # call site that is a bare address ("0x00007ff8`f16ece54")
    source_file: str | None = None
    source_line: int | None = None
    inline: bool = False
    trap_frame: str | None = None  # "(TrapFrame @ ffffd48f`77af9e40)"
    annotations: tuple[str, ...] = ()  # "(FPO: [Non-Fpo])", "(CONV: cdecl)"
    # kp/kP: the parameters printed after the function ("int argc = 0n1"), () for "(void)",
    # None when the command printed none (k, kb...)
    params: tuple[str, ...] | None = None
    partial: bool = False  # a row read only in part (kdmcp/parse/partial.py), whole in ``raw_line``
    raw_line: str | None = None

    def leave_out_derived(self, data: dict[str, Any]) -> None:
        """Served, the call site is left out when it only spells ``module!function+offset``
        (kd prints ``nt!KiIdleLoop+0x54``): a third of a frame's bytes, said twice."""
        if self.module and self.function:
            params = "" if self.params is None else "(" + (", ".join(self.params) or "void") + ")"
            spelled = f"{self.module}!{self.function}{params}" + (f"+{self.offset}" if self.offset else "")
            if data.get("call_site") == spelled:
                del data["call_site"]


class MemoryReference(StrictModel):
    """The effective-address note kd appends to the current instruction (``ds:...=????``)."""

    segment: str | None = None
    selector: str | None = None
    address: str
    value: str


class Instruction(StrictModel):
    """One disassembled instruction (``u``, ``uf``, current instruction after ``r``)."""

    address: str
    segment: str | None = None  # "0033" in "0033:00007ffe`eeed19b6"
    bytes: str = ""
    mnemonic: str = ""
    operands: str = ""
    symbol: str | None = None  # the label line it falls under ("nt!Foo+0x9")
    source_file: str | None = None
    source_line: int | None = None  # from the label's "[file @ line]"
    line_number: int | None = None  # uf's leading source-line column
    target: str | None = None  # "(fffff802`40d32306)" branch/reference target
    memory_reference: MemoryReference | None = None


class Context(StrictModel):
    """A register context: ``r`` output, a trap frame, a context record."""

    registers: dict[str, str] = Field(default_factory=dict)
    raw_values: dict[str, str] = Field(default_factory=dict)  # st0, xmm0, fpcw...: not plain hex
    flags: list[str] = Field(default_factory=list)
    segments: dict[str, str] = Field(default_factory=dict)
    symbol: str | None = None
    address: str | None = None
    bytes: str | None = None
    mnemonic: str | None = None
    operands: str | None = None
    memory_reference: MemoryReference | None = None
    notes: list[str] = Field(default_factory=list)  # "Last set context:", trap-frame NOTE lines


class ExceptionInfo(StrictModel):
    """An exception as ``.exr`` (or ``EXCEPTION_RECORD`` / an event line) describes it."""

    code: str | None = None
    address: str | None = None
    description: str | None = None
    symbol: str | None = None
    flags: str | None = None
    parameters: list[str] = Field(default_factory=list)
    access: str | None = None  # "read" / "write" / "execute" from "Attempt to read from..."
    access_address: str | None = None
    first_chance: bool | None = None


class TargetInfo(StrictModel):
    """What ``vertarget`` / ``version`` / ``.time`` / a connect banner say about the target."""

    os: str | None = None
    version_line: str | None = None
    build: int | None = None
    service_pack: str | None = None
    kernel: bool | None = None
    multiprocessor: bool | None = None
    processors: int | None = None
    build_type: str | None = None  # "Free" / "Checked"
    arch: str | None = None
    product: str | None = None
    suite: str | None = None
    build_lab: str | None = None
    machine_name: str | None = None
    kernel_base: str | None = None
    loaded_module_list: str | None = None
    debug_session_time: str | None = None
    uptime: str | None = None
    uptime_seconds: float | None = None
    process_uptime: str | None = None
    kernel_time: str | None = None
    user_time: str | None = None
    debugger_version: str | None = None
    details: dict[str, str] = Field(default_factory=dict)
