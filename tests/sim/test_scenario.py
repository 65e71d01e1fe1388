"""kdmcp/sim/scenario.py: the built-in scenarios load, leave the machine to the world, describe one
coherent target each, and the simulator plays what they and the world answer byte for byte.

Under pipes the simulator writes ``\\r\\n`` line ends and does not echo typed input, so a session
is ``prompt + response`` for each command, which lets the tests compare whole transcripts.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from kdmcp.sim import texts
from kdmcp.sim.debugger import COMMAND_LINE_TOKEN
from kdmcp.sim.scenario import Scenario, builtin
from kdmcp.sim.world.build import build
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.user import build_user

TIMEOUT_SEC = 30
KD_ARGV = [sys.executable, "-m", "kdmcp.sim", "kd", "-k", "net:port=50000,key=1.2.3.4", "-b"]
CDB_ARGV = [sys.executable, "-m", "kdmcp.sim", "cdb", "-p", "1234"]
KD_PROMPT = "0: kd> "
CDB_PROMPT = "0:002> "  # after an attach, cdb sits on its break-in thread (2 in the canned process)

KD_COMMANDS = [
    "r",
    "k",
    "kv",
    "lm",
    "lm m nt",
    "vertarget",
    "!process 0 0",
    "!process -1 0",
    "!thread",
    "!running",
    "!pcr",
    "!irql",
    "u",
    "ub",
    "db fffff800`62a05c20",
    "dps @rsp",
    "dt nt!_EPROCESS",
    "bp nt!NtCreateFile",
    "bl",
    ".reload",
    "!analyze -v",
    "p",
    ".kdtargetmac",
    "!error 5",
    "!bogus",
]
CDB_COMMANDS = [
    "r",
    "k",
    "kb",
    "~",
    "~*k",
    "lm",
    "!peb",
    "!teb",
    ".lastevent",
    ".exr -1",
    ".ecxr",
    "u",
    "db",
    "dq @rsp",
    "dt ntdll!_PEB",
    "bp app!wmain",
    "bl",
    "!heap -s",
    "!analyze -v",
    "t",
    "version",
]

# Commands the simulator implements itself; a canned response would shadow that behaviour.
BUILT_IN = re.compile(r"(~\d+s|\.echo.*|q[qd]?|g[hnuc]?|\.effmach.*|\.reboot|\.crash)", re.IGNORECASE)


def _crlf(text: str, argv: list[str] | None = None) -> str:
    """The text as played: ``\r\n`` line ends, the debugger's command line filled in."""
    if argv is not None:
        flavor = argv[3]
        exe = f'"C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x64\\{flavor}.exe"'
        text = text.replace(COMMAND_LINE_TOKEN, " ".join([exe, *argv[4:]]))
    return text.replace("\n", "\r\n")


def _session(argv: list[str], commands: list[str]) -> str:
    stdin = "".join(f"{command}\n" for command in commands) + "q\n"
    done = subprocess.run(argv, input=stdin.encode(), capture_output=True, timeout=TIMEOUT_SEC, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode("utf-8")


def _expected_tail(sc: Scenario, prompt: str, commands: list[str], argv: list[str]) -> str:
    played = "".join(prompt + _crlf(sc.responses[command].text, argv) for command in commands)
    return played + prompt + "quit:\r\n"


def _world(name: str, pid: int = 0x1A2C) -> World:
    """A fresh world of the built-in target: kd's machine, or cdb's attached process."""
    if name == "default_kd":
        return build(0)
    return build_user(0, pid, "")


@pytest.fixture(scope="module")
def kd() -> Scenario:
    return builtin("default_kd")


@pytest.fixture(scope="module")
def cdb() -> Scenario:
    return builtin("default_cdb")


# ------------------------------------------------------------------ the files themselves


@pytest.mark.parametrize("name", ["default_kd", "default_cdb"])
def test_builtin_scenario_leaves_the_machine_to_the_world(name):
    sc = builtin(name)
    assert sc.name == name and sc.world.enabled
    # what is left canned is what the world does not answer: a response the world also
    # answers would shadow it (responses come first), and two sources would disagree
    world = _world(name)
    for command in sc.responses:
        assert answer(world, command, kernel=name == "default_kd") is None, command


@pytest.mark.parametrize("name", ["default_kd", "default_cdb"])
def test_responses_are_reachable_and_well_formed(name):
    sc = builtin(name)
    for command, response in sc.responses.items():
        # response_for() normalises whitespace before the lookup; a key must already be normal.
        assert command == " ".join(command.split()), command
        assert sc.response_for(command) is response
        assert not BUILT_IN.fullmatch(command), f"{command!r} is played by the simulator itself"
        assert "\r" not in response.text, command
        assert response.text == "" or response.text.endswith("\n"), command
        assert response.effect is None and response.hang is None and not response.bulk_mb, command


# ------------------------------------------------------------------ coherence with the target


def test_the_kd_world_agrees_with_the_target_and_the_banners(kd):
    t, world = kd.target, _world("default_kd")
    bare = t.break_address.replace("`", "")
    r = answer(world, "r") or ""
    assert r.endswith(texts.break_location(kd)) and f"rip={bare} " in r
    assert answer(world, "r rip") == f"rip={bare}\n"
    assert (answer(world, "u") or "").startswith(texts.break_location(kd))
    assert (answer(world, "db @rip") or "").startswith(f"{t.break_address}  cc c3 ")
    vertarget = answer(world, "vertarget") or ""
    assert f"Kernel base = 0x{t.kernel_base} PsLoadedModuleList = 0x{t.ps_loaded_module_list}\n" in vertarget
    assert f"Kernel Version {t.build} MP ({t.processors} procs) Free x64\n" in (answer(world, "version") or "")
    nt_line = next(line for line in (answer(world, "lm") or "").splitlines() if "   nt   " in line)
    assert nt_line.startswith(t.kernel_base)
    assert (answer(world, "lm m nt") or "").splitlines()[-1] == nt_line
    # the breakpoint a scripted stop reports (texts.breakpoint_hit) is where bp puts one
    answer(world, "bp nt!NtCreateFile")
    assert "fffff800`62c3a1e0" in texts.breakpoint_hit(0) and "fffff800`62c3a1e0" in (answer(world, "bl") or "")
    # one .reload dot per loaded module
    modules = (answer(world, "lm") or "").split("Unloaded modules:")[0].splitlines()[1:]
    reload = answer(world, ".reload") or ""
    assert sum(line.count(".") for line in reload.splitlines() if set(line) == {"."}) == len(modules)
    # the stack k shows is the one !thread shows
    k_frames = [line.split()[1:3] for line in (answer(world, "k") or "").splitlines()[1:]]
    thread_frames = [
        line.split()[0:2]
        for line in (answer(world, "!thread") or "").splitlines()
        if re.match(r"[0-9a-f]{8}`[0-9a-f]{8} ", line)
    ]
    assert k_frames == thread_frames


def test_the_cdb_world_agrees_with_the_attach_banner():
    world = _world("default_cdb")
    attach = texts.cdb_attach(0x1A2C)
    r = answer(world, "r", kernel=False) or ""
    assert r.endswith("ntdll!DbgBreakPoint:\n00007ffc`81a986a0 cc              int     3\n")
    assert r.splitlines()[-2:] == attach.splitlines()[-2:]
    lm = (answer(world, "lm", kernel=False) or "").splitlines()
    for line in attach.splitlines():
        if line.startswith("ModLoad: "):
            start, end = line.split()[1:3]
            assert any(row.startswith(f"{start} {end}   ") for row in lm), line
    assert "1a2c.5d0: Break instruction exception - code 80000003 (first chance)" in (
        answer(world, ".lastevent", kernel=False) or ""
    )
    assert ".  2  Id: 1a2c.5d0 " in (answer(world, "~", kernel=False) or "")


# ------------------------------------------------------------------ played by the simulator


@pytest.mark.process
def test_kd_session_answers_as_the_world_does_in_process(kd):
    # the simulator's process and a world built here agree byte for byte: one seed, one machine
    out = _session(KD_ARGV, KD_COMMANDS)
    assert "Syntax error" not in out
    world = _world("default_kd")
    for command in KD_COMMANDS:
        text = kd.responses[command].text if command in kd.responses else answer(world, command)
        assert text is not None, command
        assert _crlf(text, KD_ARGV) in out, command


@pytest.mark.process
def test_cdb_session_answers_as_the_world_does_in_process(cdb):
    out = _session(CDB_ARGV, CDB_COMMANDS)
    assert "Syntax error" not in out
    world = _world("default_cdb", pid=1234)
    for command in CDB_COMMANDS:
        text = cdb.responses[command].text if command in cdb.responses else answer(world, command, kernel=False)
        assert text is not None, command
        assert _crlf(text, CDB_ARGV) in out, command
    assert '"C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x64\\cdb.exe" -p 1234' in out


@pytest.mark.process
def test_unknown_extension_and_unknown_command_differ():
    out = _session(KD_ARGV, ["!bogus", "bogus"])
    assert f"{KD_PROMPT}No export bogus found\r\n" in out
    assert f"{KD_PROMPT}       ^ Syntax error in 'bogus'\r\n" in out
