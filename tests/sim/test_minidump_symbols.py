"""A user dump's ``.sympath`` / ``.reload`` (kdmcp/sim/minidump_symbols.py) and ``!handle`` from its
handle data stream (kdmcp/sim/minidump_inspect.py), held to what the ``minidump`` package reads.
Fast tier: no processes."""

from __future__ import annotations

from kdmcp.parse import parse
from kdmcp.parse.models import ObjectRecord
from kdmcp.sim import minidump_symbols
from kdmcp.sim.minidump_context import DumpContexts
from kdmcp.sim.minidump_inspect import DumpInspector
from kdmcp.sim.minidump_target import MinidumpTarget
from tests.sim.dump_debugger import DUMPS, package

WITH_HANDLES = "tiny-exe-with-cet-xsave.dmp"  # the one fixture with a MINIDUMP_HANDLE_DATA_STREAM


def _inspector(name: str) -> DumpInspector:
    target = MinidumpTarget(str(DUMPS / name))
    return DumpInspector(target, DumpContexts(target), target.event_index)


def test_handles_come_from_the_dump_s_handle_stream() -> None:
    dump = _inspector(WITH_HANDLES)
    stream = package(WITH_HANDLES).handles.handles
    text = dump.answer("!handle 0 f")
    assert text is not None
    record = parse("!handle 0 f", text)
    assert isinstance(record, ObjectRecord)
    assert [int(h.handle, 16) for h in record.handles] == sorted(h.Handle for h in stream)
    assert record.fields["handle_total"] == str(len(stream))
    first = min(stream, key=lambda h: h.Handle)
    assert text.startswith(f"Handle {first.Handle:016x}\n  Type         \t{first.TypeName}\n")
    by_value = {int(h.handle, 16): h for h in record.handles}
    assert all(by_value[h.Handle].type == h.TypeName for h in stream)
    assert all(int(by_value[h.Handle].granted_access or "", 16) == h.GrantedAccess for h in stream)
    files = sum(h.TypeName == "File" for h in stream)
    assert dump.answer("!handle 0 0 File") == f"{files} handles of type File\n"
    one = dump.answer(f"!handle {first.Handle:x} f")
    assert one is not None and one.startswith(f"Handle {first.Handle:016x}\n")


def test_a_dump_without_handle_data_says_so() -> None:
    dump = _inspector("null_read_av.dmp")
    assert package("null_read_av.dmp").handles is None
    for form in ("!handle", "!handle 0 f", "!handle 0 0 File", "!handle 4 f"):
        assert dump.answer(form) == "Unable to read handle information\n", form


def test_memory_at_the_pc_with_a_hex_count() -> None:
    # read_memory sends "db @$ip L0x10": the pc of the current thread's context
    target = MinidumpTarget(str(DUMPS / "null_read_av.dmp"))
    contexts = DumpContexts(target)
    text = DumpInspector(target, contexts, target.event_index).answer("db @$ip L0x10")
    assert text is not None and text.startswith(f"{contexts.current(target.event_index).ip:08x}  ")
    assert len(text.splitlines()) == 1


def test_sympath_and_reload_on_a_dump() -> None:
    target = MinidumpTarget(str(DUMPS / "null_read_av.dmp"))
    target.banner("", None)  # the banner's path: srv*
    shown = minidump_symbols.answer(target, ".sympath")
    assert shown is not None and shown.startswith("Symbol search path is: srv*\n")
    server = "srv*C:\\sym*https://msdl.microsoft.com/download/symbols"
    changed = minidump_symbols.answer(target, f".sympath {server}")
    assert changed is not None and changed.startswith(f"Symbol search path is: {server}\n")
    added = minidump_symbols.answer(target, ".sympath+ C:\\mine")
    assert added is not None and added.startswith(f"Symbol search path is: {server};C:\\mine\n")
    assert target.symbol_path == [server, "C:\\mine"]
    record = parse(".sympath", added)
    assert getattr(record, "path", None) == f"{server};C:\\mine"
    dots = "." * len(target.modules)
    assert minidump_symbols.answer(target, ".reload") == f"Reloading current modules\n{dots}\n"
    assert minidump_symbols.answer(target, "lm") is None
