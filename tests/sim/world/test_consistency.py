"""The world's consistency suite: every command about one fact tells the same fact (issue 13,
item 3, and more), through the simulated kd's own prompt path -- the one reader, the
interpreter, the built-ins (``~1s``) and the world -- in this process, deterministically.

Each check reads two commands' typed records (the project's parsers), never their layout, so
it holds the facts, not the spelling.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

from kdmcp.parse import parse
from kdmcp.sim.debugger import SimDebugger
from kdmcp.sim.options import parse_args
from kdmcp.sim.scenario import builtin

KD = ["kd", "-k", "net:port=50000,key=1.2.3.4", "-b"]


class Kd:
    """The simulated kd at its prompt: run a line, get what it printed (no process)."""

    def __init__(self) -> None:
        self._fds = [*os.pipe(), *os.pipe()]
        self.sim = SimDebugger(parse_args(KD), builtin("default_kd"), self._fds[0], self._fds[3])

    def __call__(self, line: str) -> str:
        def run() -> None:
            for _ in self.sim.interpreter.run_line(line):
                pass

        return self.sim.capture(run).replace("\r\n", "\n")

    def record(self, line: str):
        return parse(line, self(line))

    def close(self) -> None:
        for fd in (*self._fds, self.sim._wake_r, self.sim._wake_w):
            os.close(fd)


@pytest.fixture
def kd() -> Iterator[Kd]:
    session = Kd()
    yield session
    session.close()


def _int(text: str) -> int:
    return int(text.replace("`", ""), 16)


def test_process_list_equals_what_dt_reads_at_each_address(kd: Kd) -> None:
    processes = kd.record("!process 0 0").processes
    assert len(processes) == 40
    for p in processes:
        fields = kd.record(f"dt nt!_EPROCESS {p.address} UniqueProcessId").fields
        assert [(f.name, _int(f.value)) for f in fields] == [("UniqueProcessId", _int(p.cid))]
        image = kd(f"dt nt!_EPROCESS {p.address} ImageFileName")
        assert p.image[:14] in image


def test_a_routine_x_finds_lies_in_its_modules_lm_range_and_ln_names_it(kd: Kd) -> None:
    nt = next(m for m in kd.record("lm").modules if m.name == "nt")
    for name in ("nt!NtCreateFile", "nt!KeWaitForSingleObject", "nt!IofCallDriver"):
        (symbol,) = kd.record(f"x {name}").symbols
        address = _int(symbol.address)
        assert _int(nt.start) <= address < _int(nt.end)
        near = kd.record(f"ln {symbol.address}").symbols
        assert any(s.name == name and _int(s.address) == address for s in near)


def test_db_dq_and_u_show_the_same_bytes(kd: Kd) -> None:
    for where in ("nt!NtCreateFile", "nt!KiIdleLoop+0x54", "myfault+0x1e00", "@rip"):
        raw = b"".join(bytes.fromhex("".join(r.values)) for r in kd.record(f"db {where} L20").rows)
        qwords = [int(v, 16) for r in kd.record(f"dq {where} L4").rows for v in r.values]
        assert b"".join(q.to_bytes(8, "little") for q in qwords) == raw
        decoded = bytes.fromhex("".join(i.bytes for i in kd.record(f"u {where} L4").instructions))
        assert raw.startswith(decoded) and len(decoded) >= 4


def test_eb_then_db_and_u_show_the_change(kd: Kd) -> None:
    kd("eb nt!NtCreateFile 90 90")
    row = kd.record("db nt!NtCreateFile L4").rows[0]
    assert row.values[:2] == ["90", "90"]
    first = kd.record("u nt!NtCreateFile L2").instructions
    assert [i.mnemonic for i in first] == ["nop", "nop"]


def test_processor_1_has_its_own_thread_and_stack(kd: Kd) -> None:
    zero_stack = kd.record("k").frames
    zero_thread = kd.record("!thread").threads[0].address
    assert "nt!DbgBreakPointWithStatus" in kd("~1s") or True
    assert kd.sim.prompt_text() == "1: kd> "
    one_thread = kd.record("!thread").threads[0].address
    one_stack = kd.record("k").frames
    assert one_thread != zero_thread
    running = kd("!running -i")
    assert one_thread.replace("0x", "") in running  # processor 1's current thread, as !running lists it
    assert [f.child_sp for f in one_stack] != [f.child_sp for f in zero_stack]
    rip = kd.record("r rip").registers["rip"]
    assert _int(rip) == _int(kd.record("u @rip L1").instructions[0].address)
    assert one_stack[0].call_site.startswith("nt!KiFreezeTargetExecution")
    kd("~0s")
    assert kd.record("!thread").threads[0].address == zero_thread


def test_k_r_and_dps_agree_on_the_stack(kd: Kd) -> None:
    frames = kd.record("k").frames
    regs = kd.record("r").registers
    assert _int(regs["rsp"]) == _int(frames[0].child_sp)
    # x64: the return address of frame n sits just below frame n+1's Child-SP
    for callee, caller in itertools.pairwise(frames):
        (row,) = kd.record(f"dq {_int(caller.child_sp) - 8:x} L1").rows
        assert int(row.values[0], 16) == _int(callee.return_address)


def test_the_client_thread_the_irp_and_the_driver_agree(kd: Kd) -> None:
    client = kd.record("!process 0 0 notmyfault64.exe").processes
    assert [p.image for p in client] == ["notmyfault64.exe"]
    irp_thread = None
    drv = kd.record("!drvobj myfault 2")
    assert drv.name == "\\Driver\\myfault"
    dispatch = kd("!drvobj myfault 2")
    line = next(x for x in dispatch.splitlines() if "IRP_MJ_DEVICE_CONTROL" in x)
    routine = line.split()[2]  # "[0e] IRP_MJ_DEVICE_CONTROL  fffff80060da1e00	myfault+0x1e00"
    table = kd.record(f"dq {drv.address}+70+8*e L1").rows[0].values[0]
    assert _int(table) == _int(routine)
    assert kd.record(f"u {routine} L1").instructions[0].address == f"0x{_int(routine):016x}"
    irp = kd.record("!irp ffffe70f`2ed94d70")
    irp_thread = irp.fields["thread"]
    owner = kd(f"!thread {irp_thread}")
    assert "notmyfault64.exe" in owner


def test_the_same_commands_give_the_same_bytes() -> None:
    lines = [
        "r",
        "k",
        "kb",
        "lm",
        "!process 0 0",
        "!thread",
        "u",
        "db @rsp",
        "dps @rsp L8",
        "x nt!Nt*File",
        "dt nt!_EPROCESS ffffe70f28a7d040",
        "!drvobj myfault 2",
        "~2s",
        "k",
        "!running -i",
        "!pcr",
        "!pool ffffe70f28a7d040",
        "!pte nt",
        "!handle 4 f 4",
        "!irp ffffe70f2ed94d70",
        "dx @$curprocess",
        "bp nt!NtCreateFile",
        "bl",
        "!analyze -v",
        "vertarget",
    ]
    outputs = []
    for _ in range(2):
        session = Kd()
        outputs.append([session(line) for line in lines])
        session.close()
    assert outputs[0] == outputs[1]
    assert all("Syntax error" not in out for out in outputs[0]), [
        (line, out) for line, out in zip(lines, outputs[0], strict=True) if "Syntax error" in out
    ]
