"""End to end over stdio: every kind of target the server starts, on ``kd-mcp --simulate``.

A real server process (``python -m kdmcp --simulate``) is driven by the SDK's stdio client, as
an agent drives it. Each real minidump of ``fixtures/dumps/`` is opened and read with ``lm``,
``~``, ``.exr -1``, ``.ecxr``, ``r``, ``k`` and ``!analyze -v``; every figure the tools report
is held to what the ``minidump`` package (PyPI, MIT) reads from the same file. Then the other
kinds: a kernel dump, an attached process (invasive and noninvasive), a launched one, the
local kernel; ``list_sessions``, ``stop_kd``'s actions and the per-kind refusals; the policy
that governs ``launch`` and ``share_session``; the arguments ``open_dump`` and ``join_remote``
refuse. Sharing and joining a session end to end are tests/server/test_remote_e2e (the lead's).

One server per test function, sessions opened concurrently where they are independent: the
module's cost is the debuggers' start-up, not the calls.
"""

from __future__ import annotations

import io
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.server.helpers import in_memory, make_app, result_data, server_argv

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[2]
DUMPS = sorted((ROOT / "fixtures" / "dumps").glob("*.dmp"))
MINIDUMPS = [p for p in DUMPS if p.read_bytes()[:4] == b"MDMP"]
Call = Callable[..., Awaitable[dict[str, Any]]]


# ----------------------------------------------------------------------------- the server


@asynccontextmanager
async def stdio_server(tmp_path: Path, config: str | None = None) -> AsyncIterator[Call]:
    """``kd-mcp --simulate`` (with ``config`` as its YAML config) and a ``call(tool, **args)``."""
    args = ["--simulate"]
    if config is not None:
        path = tmp_path / "kdmcp.yaml"
        path.write_text(config)
        args += ["--config", str(path)]
    argv = server_argv(*args)
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(ROOT))
    async with Client(params, read_timeout_seconds=30) as client:  # every request is bounded

        async def call(name: str, /, **arguments: Any) -> dict[str, Any]:
            with anyio.fail_after(60):
                result = await client.call_tool(name, arguments)
            data = result_data(result)
            data["_is_error"] = bool(result.is_error)
            if result.is_error:  # an error is categorised text, never a Python traceback
                text = " ".join(getattr(c, "text", "") for c in result.content)
                assert "Traceback" not in text and 'File "' not in text, text
            return data

        yield call


@asynccontextmanager
async def full_server(tmp_path: Path) -> AsyncIterator[Call]:
    """A server under the full policy with room for every dump at once; what a test leaves live is
    stopped before it ends. (Entered in the test itself: the stdio client must live in the task that
    calls it, which an async fixture's is not.)"""
    async with stdio_server(tmp_path, "policy: full\nmax_sessions: 8\n") as call:
        try:
            yield call
        finally:
            for left in (await call("list_sessions"))["sessions"]:
                if left["live"]:
                    await call("stop_kd", session_id=left["session_id"])


async def concurrently(*calls: Callable[[], Awaitable[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Run independent tool calls at once (each start spends its time waiting for a debugger)."""
    results: list[dict[str, Any]] = [{} for _ in calls]

    async def one(i: int) -> None:
        results[i] = await calls[i]()

    async with anyio.create_task_group() as tg:
        for i in range(len(calls)):
            tg.start_soon(one, i)
    return results


def refused(data: dict[str, Any], category: str, *words: str) -> None:
    assert data["_is_error"] and data["category"] == category, data
    for word in words:
        assert word in data["message"], (word, data["message"])


# ----------------------------------------------------------------------- what the dump holds


@dataclass(frozen=True)
class Module:
    name: str  # as lm names it: the file's stem, '-' read as '_' (cdb's module names are symbols)
    start: int
    end: int


@dataclass(frozen=True)
class Stored:
    """The exception of interest and its thread's context at the fault."""

    code: int
    address: int
    thread_id: int
    ip: int
    sp: int
    fp: int


@dataclass(frozen=True)
class DumpFacts:
    """What the ``minidump`` package reads from one file: what the tools must report."""

    x64: bool
    processors: int
    build: int
    modules: list[Module]
    thread_ids: list[int]
    exception: Stored | None
    current: tuple[int, int]  # the first thread's (ip, sp): the current thread of a dump with no exception

    def module_at(self, address: int) -> Module:
        return next(m for m in self.modules if m.start <= address < m.end)


def _context(data: bytes, location: Any, x64: bool) -> tuple[int, int, int]:
    from minidump.streams.ContextStream import CONTEXT, WOW64_CONTEXT

    raw = data[location.Rva : location.Rva + location.DataSize]
    ctx = (CONTEXT if x64 else WOW64_CONTEXT).parse(io.BytesIO(raw))
    if x64:
        return int(ctx.Rip), int(ctx.Rsp), int(ctx.Rbp)
    return int(ctx.Eip), int(ctx.Esp), int(ctx.Ebp)


def read_dump(path: Path) -> DumpFacts:
    from minidump.minidumpfile import MinidumpFile

    data = path.read_bytes()
    logging.disable(logging.CRITICAL)  # the package logs a traceback for a dump with no PEB
    try:
        dump = MinidumpFile.parse_bytes(data)
    finally:
        logging.disable(logging.NOTSET)
    info = dump.sysinfo
    x64 = info.ProcessorArchitecture.name == "AMD64"
    modules = sorted(
        (
            Module(PureWindowsPath(m.name).stem.replace("-", "_"), m.baseaddress, m.baseaddress + m.size)
            for m in dump.modules.modules
        ),
        key=lambda m: m.start,
    )
    threads = dump.threads.threads
    stored = None
    if dump.exception is not None:
        exc = dump.exception.exception_records[0]
        ip, sp, fp = _context(data, exc.ThreadContext, x64)
        stored = Stored(
            exc.ExceptionRecord.ExceptionCode_raw, int(exc.ExceptionRecord.ExceptionAddress), exc.ThreadId, ip, sp, fp
        )
    first = _context(data, threads[0].ThreadContext, x64)
    return DumpFacts(
        x64,
        int(info.NumberOfProcessors),
        int(info.BuildNumber),
        modules,
        [t.ThreadId for t in threads],
        stored,
        first[:2],
    )


def test_every_fixture_is_checked() -> None:
    assert len(MINIDUMPS) == 6  # the six real minidumps (fixtures/dumps/README.md)


# ------------------------------------------------------------------------- user minidumps


def _reg(regs: dict[str, str], x64: bool, name: str) -> int:
    return int(regs[("r" if x64 else "e") + name], 16)


async def test_every_real_minidump_reads_as_the_minidump_package_reads_it(tmp_path: Path) -> None:
    async with full_server(tmp_path) as call:
        opened = await concurrently(*(lambda p=p: call("open_dump", path=str(p), timeout_s=30) for p in MINIDUMPS))
        for path, started in zip(MINIDUMPS, opened, strict=True):
            facts = read_dump(path)
            sid = started["session_id"]
            assert not started["_is_error"], started
            assert (started["kind"], started["state"]) == ("user_dump", "broken"), path.name
            assert " cdb -z " in started["command_line"] and str(path) in started["command_line"]
            summary = started["dump"]
            assert summary["modules"] == len(facts.modules), path.name

            # lm, as the modules tool and as kd_command
            for modules in (
                await call("modules", session_id=sid),
                await call("kd_command", session_id=sid, command="lm"),
            ):
                got = [(m["name"], int(m["start"], 16), int(m["end"], 16)) for m in modules["record"]["modules"]]
                assert got == [(m.name, m.start, m.end) for m in facts.modules], path.name

            # ~: every thread, in the dump's order; the current one is the exception's
            threads = (await call("kd_command", session_id=sid, command="~"))["record"]["threads"]
            assert [int(t["thread_id"], 16) for t in threads] == facts.thread_ids, path.name
            current = next(t for t in threads if t.get("current"))
            assert int(current["thread_id"], 16) == (
                facts.exception.thread_id if facts.exception else facts.thread_ids[0]
            )

            exr = (await call("kd_command", session_id=sid, command=".exr -1"))["record"]
            ecxr = await call("kd_command", session_id=sid, command=".ecxr")
            regs = (await call("registers", session_id=sid))["record"]["registers"]
            frames = (await call("backtrace", session_id=sid))["record"]["frames"]
            stored = facts.exception
            if stored is None:
                assert "code" not in exr and "exception" not in summary
                assert "doesn't have an exception context" in ecxr["_body"]
                assert (_reg(regs, facts.x64, "ip"), _reg(regs, facts.x64, "sp")) == facts.current
            else:
                assert (int(exr["code"], 16), int(exr["address"], 16)) == (stored.code, stored.address)
                assert (int(summary["exception"]["code"], 16), int(summary["exception"]["address"], 16)) == (
                    stored.code,
                    stored.address,
                )
                # .ecxr sets the exception's context: r then reads the faulting thread's registers
                ctx = ecxr["record"]["registers"]
                assert (_reg(ctx, facts.x64, "ip"), _reg(ctx, facts.x64, "sp")) == (stored.ip, stored.sp)
                assert (_reg(regs, facts.x64, "ip"), _reg(regs, facts.x64, "sp"), _reg(regs, facts.x64, "bp")) == (
                    stored.ip,
                    stored.sp,
                    stored.fp,
                )
                # k starts at the fault: module+offset of the faulting address, at the context's frame
                module = facts.module_at(stored.address)
                assert (frames[0]["module"], int(frames[0]["offset"], 16)) == (
                    module.name,
                    stored.address - module.start,
                )
                frame = frames[0].get("child_sp") if facts.x64 else frames[0].get("child_ebp")
                assert int(frame, 16) == (stored.sp if facts.x64 else stored.fp), path.name

            analysis = (await call("analyze", session_id=sid))["record"]
            assert (analysis["kind"], analysis["mode"]) == ("analysis", "user")

        # what a dump cannot do, said as invalid_argument with the reason
        sid = opened[0]["session_id"]
        for tool, args in (
            ("break_in", {}),
            ("continue_go", {}),
            ("resume_for_winrm", {}),
            ("kd_command", {"command": "g"}),
        ):
            refused(await call(tool, session_id=sid, **args), "invalid_argument", "a user-mode dump never runs")
        refused(await call("processes", session_id=sid), "invalid_argument", "user mode", "!process")

        listed = {s["session_id"]: s for s in (await call("list_sessions"))["sessions"]}
        for path, started in zip(MINIDUMPS, opened, strict=True):
            assert listed[started["session_id"]]["kind"] == "user_dump"
            assert listed[started["session_id"]]["attached_to"] == str(path)
        stopped = await concurrently(*(lambda s=s: call("stop_kd", session_id=s["session_id"]) for s in opened))
        assert all(s["actions"] == ["sent q (closed the dump)"] and s["state"] == "exited" for s in stopped), stopped


async def test_the_dumps_reports_come_from_the_dump(tmp_path: Path) -> None:
    """vertarget, .lastevent, !analyze -v and open_dump's summary: the dump's own system and exception."""
    async with full_server(tmp_path) as call:
        opened = await concurrently(*(lambda p=p: call("open_dump", path=str(p), timeout_s=30) for p in MINIDUMPS))
        try:
            for path, started in zip(MINIDUMPS, opened, strict=True):
                facts = read_dump(path)
                sid, arch = started["session_id"], ("x64" if facts.x64 else "x86")
                summary = started["dump"]
                assert (summary["arch"], summary["processors"]) == (arch, facts.processors), path.name
                assert f"Version {facts.build} " in summary["os"], path.name

                target = (await call("vertarget", session_id=sid))["record"]
                assert (target["build"], target["processors"], target["arch"], target["kernel"]) == (
                    facts.build,
                    facts.processors,
                    arch,
                    False,
                ), path.name

                last = (await call("kd_command", session_id=sid, command=".lastevent"))["record"]
                analysis = (await call("analyze", session_id=sid))["record"]
                if facts.exception is None:
                    assert last.get("code") is None and analysis.get("exception") is None, path.name
                    continue
                assert int(last["code"], 16) == facts.exception.code, path.name
                exception = analysis["exception"]
                assert (int(exception["code"], 16), int(exception["address"], 16)) == (
                    facts.exception.code,
                    facts.exception.address,
                ), path.name
                assert analysis["module_name"] == facts.module_at(facts.exception.address).name, path.name
        finally:
            await concurrently(*(lambda s=s: call("stop_kd", session_id=s["session_id"]) for s in opened))


# ------------------------------------------------------------------------- the other kinds


async def test_kernel_dump_processes_launch_and_local_kernel(tmp_path: Path) -> None:
    kernel_dump = tmp_path / "memory.dmp"
    kernel_dump.write_bytes(b"PAGEDU64" + b"PAGE" * 2046)  # DUMP_HEADER64's signature; kd fills with PAGE
    text = tmp_path / "notes.txt"
    text.write_text("not a dump\n")
    async with full_server(tmp_path) as call:
        kd, attached, quiet, launched, local = await concurrently(
            lambda: call("open_dump", path=str(kernel_dump), timeout_s=30),
            lambda: call("attach_process", pid=4242, timeout_s=30),
            lambda: call("attach_process", pid=4243, noninvasive=True, timeout_s=30),
            lambda: call("launch", command_line=["C:\\tools\\app.exe", "--flag", "two words"], timeout_s=30),
            lambda: call("attach_local_kernel", timeout_s=30),
        )
        for started in (kd, attached, quiet, launched, local):
            assert not started["_is_error"] and started["state"] == "broken", started

        # a kernel dump: kd -z, a kernel prompt, the D1 bugcheck; it never runs
        assert kd["kind"] == "kernel_dump" and " kd -z " in kd["command_line"] and kd["prompt"] == "0: kd> "
        bugcheck = (await call("analyze", session_id=kd["session_id"]))["record"]["bugcheck"]
        assert bugcheck["code"] == "0xd1" and bugcheck["name"] == "DRIVER_IRQL_NOT_LESS_OR_EQUAL"
        for tool, args in (
            ("break_in", {}),
            ("continue_go", {}),
            ("resume_for_winrm", {}),
            ("kd_command", {"command": "g"}),
        ):
            refused(
                await call(tool, session_id=kd["session_id"], **args),
                "invalid_argument",
                "a kernel crash dump never runs",
            )
        assert not (await call("processes", session_id=kd["session_id"]))["_is_error"]  # a kernel has processes

        # the local kernel: lkd>, read live, never stopped
        assert (local["kind"], local["prompt"]) == ("local_kernel", "lkd> ") and " kd -kl" in local["command_line"]
        for tool, args in (
            ("break_in", {}),
            ("continue_go", {}),
            ("kd_command", {"command": "g"}),
            ("resume_for_winrm", {}),
        ):
            refused(
                await call(tool, session_id=local["session_id"], **args), "invalid_argument", "never runs", "kd -kl"
            )
        assert (await call("modules", session_id=local["session_id"]))["record"]["modules"]

        # processes: cdb -p / -pv / a launch; user mode, no WinRM companion
        assert attached["kind"] == "process" and attached["command_line"].endswith(" cdb -p 4242")
        assert quiet["kind"] == "process" and quiet["command_line"].endswith(" cdb -pv -p 4243")
        assert launched["kind"] == "launched" and " cdb C:\\tools\\app.exe --flag " in launched["command_line"]
        for started, title in ((attached, "an attached process"), (launched, "a launched process")):
            refused(
                await call("resume_for_winrm", session_id=started["session_id"]),
                "invalid_argument",
                "KDNET guest",
                title,
                "continue_go",
            )
            refused(await call("processes", session_id=started["session_id"]), "invalid_argument", "user mode")
        for tool in ("continue_go", "break_in"):  # cdb -pv: "commands like g (Go) do not work"
            refused(await call(tool, session_id=quiet["session_id"]), "invalid_argument", "noninvasive")
        assert (await call("kd_command", session_id=quiet["session_id"], command="~"))["record"]["threads"]

        # a running process: share_session needs a prompt; stop_kd breaks in to detach
        going = await call("continue_go", session_id=attached["session_id"])
        assert going["state"] == "running" and going["confirmed"] == "running"
        refused(
            await call("share_session", session_id=attached["session_id"]),
            "invalid_argument",
            "running",
            "break_in first",
        )

        listed = {s["session_id"]: s for s in (await call("list_sessions"))["sessions"]}
        assert {
            sid: (listed[s["session_id"]]["kind"], listed[s["session_id"]]["attached_to"])
            for sid, s in (("kd", kd), ("p", attached), ("pv", quiet), ("l", launched), ("lk", local))
        } == {
            "kd": ("kernel_dump", str(kernel_dump)),
            "p": ("process", "pid 4242"),
            "pv": ("process", "pid 4243 (noninvasive)"),
            "l": ("launched", 'C:\\tools\\app.exe --flag "two words"'),
            "lk": ("local_kernel", "the local kernel"),
        }
        assert listed[attached["session_id"]]["state"] == "running"
        assert all(listed[s["session_id"]].get("shared") is None for s in (kd, attached, quiet, launched, local))

        # open_dump's refusals: categorised, naming the path argument, no traceback
        for bad, words in (
            (tmp_path / "absent.dmp", ("no such file",)),
            (text, ("not a crash dump (unknown header",)),
            (tmp_path, ("directory",)),
            (Path("/dev/zero"), ("not a regular file",)),
        ):
            refused(await call("open_dump", path=str(bad)), "invalid_argument", "path:", *words)

        # join_remote checks its connection before any debugger starts
        for connection in ("tcp:server=a;b,port=1", "udp:x=1", "tcp:port=5", "npipe:server=h"):
            refused(await call("join_remote", connection=connection), "invalid_argument", "connection")

        stops = await concurrently(
            *(lambda s=s: call("stop_kd", session_id=s["session_id"]) for s in (kd, attached, quiet, launched, local))
        )
        assert [s["actions"] for s in stops] == [
            ["sent q (closed the dump)"],
            ["broke in", "sent qd (detached: the process runs on)"],
            ["sent q (detached (noninvasive): the process runs on)"],
            ["sent q (terminated the launched process)"],
            ["sent q (ended local kernel debugging)"],
        ]
        assert all(s["state"] == "exited" for s in stops)
        after = (await call("list_sessions"))["sessions"]
        assert {s["state"] for s in after} == {"exited"}


# ------------------------------------------------------------------------------ the policy


# The policy is the server's, whatever the transport (the full policy's launch is over stdio above):
# the in-memory client, which starts no server process, is enough for each config.
SWITCHES = ("allow_launch", "allow_share", "allow_attach", "allow_local_kernel")
POLICIES: list[dict[str, Any]] = [
    {},  # the default: standard, no switches
    *({switch: True} for switch in SWITCHES),
    {"policy": "read_only", **{switch: True for switch in SWITCHES}},
    {"policy": "full"},
]


@pytest.mark.parametrize("config", POLICIES, ids=["standard", *SWITCHES, "read_only", "full"])
async def test_the_host_powers_need_the_full_policy_or_their_switch(config: dict[str, Any]) -> None:
    """launch, share_session, attach_process and attach_local_kernel: one rule (``_require_power``)."""
    async with in_memory(make_app(**config)) as client:
        kd = result_data(await client.call_tool("start_from_state", {"initial_break": True}))
        assert kd["state"] == "broken", kd
        calls = {
            "allow_launch": ("launch", {"command_line": ["C:\\app.exe", "-x"]}, "launched"),
            "allow_share": ("share_session", {"session_id": kd["session_id"]}, None),
            "allow_attach": ("attach_process", {"pid": 4242}, "process"),
            "allow_local_kernel": ("attach_local_kernel", {}, "local_kernel"),
        }
        for switch, (name, arguments, kind) in calls.items():
            got = result_data(await client.call_tool(name, arguments))
            profile = config.get("policy", "standard")
            if profile == "full" or (profile == "standard" and config.get(switch)):
                assert "category" not in got, (name, got)
                assert kind is None or got["kind"] == kind, got
            else:
                assert got["category"] == "policy_denied", (name, got)
                assert (switch if profile == "standard" else "read_only") in got["message"], got
                assert "docs/security.md" in got["message"]


# ------------------------------------------------------------- found while writing these


async def test_a_launch_without_the_initial_break_runs() -> None:
    # cdb: "-g ignores the initial breakpoint in the target application"
    async with in_memory(make_app(policy="full")) as client:
        result = result_data(
            await client.call_tool("launch", {"command_line": ["C:\\app.exe"], "initial_break": False})
        )
        assert " -g " in result["command_line"]
        assert result["state"] == "running", result
