"""``kdmcp.sim.minidump_inspect``: expressions, selectors, ``u``, ``ln``, ``x`` and ``dps`` on a real
minidump, held to what the ``minidump`` package reads from the same file (its thread ids, the
process id, the pc of the thread's CONTEXT, the stack bytes). Fast tier: no processes."""

from __future__ import annotations

import struct

import pytest

from kdmcp.sim.minidump_context import DumpContexts
from kdmcp.sim.minidump_inspect import DumpInspector
from kdmcp.sim.minidump_target import MinidumpTarget
from tests.sim.test_minidump_target import DUMPS, FIGURES


def _inspect(name: str, thread: int | None = None) -> tuple[MinidumpTarget, DumpContexts, DumpInspector]:
    target = MinidumpTarget(str(DUMPS / name))
    contexts = DumpContexts(target)
    return target, contexts, DumpInspector(target, contexts, target.event_index if thread is None else thread)


def _say(inspector: DumpInspector, command: str) -> str:
    out = inspector.answer(command)
    assert out is not None, command
    return out


def test_pseudo_registers_evaluate_to_the_dump_s_figures() -> None:
    target, contexts, dump = _inspect("null_read_av.dmp")
    tid = target.threads[target.event_index].tid
    # 32-bit target: cdb pads the value to 8 digits
    assert _say(dump, "? @$tid") == f"Evaluate expression: {tid} = {tid:08x}\n"
    assert _say(dump, "? @$tpid") == f"Evaluate expression: {target.pid} = {target.pid:08x}\n"
    ip = contexts.current(target.event_index).ip
    assert _say(dump, "? @$ip") == f"Evaluate expression: {ip} = {ip:08x}\n"
    assert _say(dump, "? bogus") == "Couldn't resolve error at 'bogus'\n"


def test_thread_and_process_selectors() -> None:
    target, _, dump = _inspect("null_read_av.dmp")
    rows = target.thread_list(target.event_index).splitlines(keepends=True)
    assert _say(dump, "~.") == rows[target.event_index]
    assert _say(dump, "~#") == rows[target.event_index]
    assert _say(dump, "~*") == "".join(rows)
    assert _say(dump, "~99") == "       ^ Illegal thread error in '~99'\n"
    assert _say(dump, "|.") == target.process_list()


def test_u_at_the_pc_is_the_instruction_r_shows() -> None:
    target, contexts, dump = _inspect("null_read_av.dmp")
    ctx = contexts.current(target.event_index)
    lines = _say(dump, "u @$ip L1").splitlines()
    assert lines[0] == contexts.where(ctx.ip) + ":"
    # r's instruction line without its effective-address note
    assert contexts.instruction(ctx).startswith(lines[1])
    assert len(_say(dump, "u @$ip").splitlines()) == 1 + 8  # the label, eight instructions


def test_memory_the_dump_lacks_reads_as_cdb_prints_unreadable_memory() -> None:
    _, _, dump = _inspect("null_read_av.dmp")
    assert _say(dump, "u 0 L2") == "00000000 ??              ???\n00000001 ??              ???\n"
    assert _say(dump, "dps 0 L2") == "00000000  ????????\n00000004  ????????\n"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_dps_at_the_stack_pointer_reads_the_stack_bytes(name: str) -> None:
    target, contexts, dump = _inspect(name)
    if not target.threads:
        pytest.skip("a dump without threads")
    ctx = contexts.current(target.event_index)
    size = 8 if target.x64 else 4
    rows = _say(dump, "dps @$csp L4").splitlines()
    assert len(rows) == 4
    for i, row in enumerate(rows):
        cells = [contexts.memory.byte(ctx.sp + i * size + k) for k in range(size)]
        if any(c is None for c in cells):
            assert "????????" in row
            continue
        value = struct.unpack("<Q" if target.x64 else "<I", bytes(c for c in cells if c is not None))[0]
        assert row.split()[1].replace("`", "") == f"{value:0{2 * size}x}"


def test_ln_x_and_d_at_an_expression() -> None:
    target, contexts, dump = _inspect("null_read_av.dmp")
    ctx = contexts.current(target.event_index)
    assert _say(dump, "ln @$ip").endswith(f"   {contexts.where(ctx.ip)}\n")
    assert _say(dump, "x crashme!*") == ""  # no symbol files: nothing matches
    first = _say(dump, "db @$csp L10")
    assert first.startswith(f"{ctx.sp:08x}  ")
    assert dump.answer("db 0 L10") is None  # a plain address: MemoryView answers it
