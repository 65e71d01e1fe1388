"""kdmcp/sim/scenario.py: the built-in scenarios load, they describe one coherent target each, and the simulator
plays their canned responses byte for byte.

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

TIMEOUT_SEC = 30
KD_ARGV = [sys.executable, "-m", "kdmcp.sim", "kd", "-k", "net:port=50000,key=1.2.3.4", "-b"]
CDB_ARGV = [sys.executable, "-m", "kdmcp.sim", "cdb", "-p", "1234"]
KD_PROMPT = "0: kd> "
CDB_PROMPT = "0:002> "  # after an attach, cdb sits on its break-in thread (2 in the canned process)

KD_COMMANDS = [
    "r", "k", "kv", "lm", "lm m nt", "vertarget", "!process 0 0", "!process -1 0", "!thread",
    "!running", "!pcr", "!irql", "u", "ub", "db fffff800`62a05c20", "dps @rsp", "dt nt!_EPROCESS",
    "bp nt!NtCreateFile", "bl", ".reload", "!analyze -v", "p", ".kdtargetmac", "!error 5", "!bogus",
]
CDB_COMMANDS = [
    "r", "k", "kb", "~", "~*k", "lm", "!peb", "!teb", ".lastevent", ".exr -1", ".ecxr", "u", "db",
    "dq @rsp", "dt ntdll!_PEB", "bp app!wmain", "bl", "!heap -s", "!analyze -v", "t", "version",
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


@pytest.fixture(scope="module")
def kd() -> Scenario:
    return builtin("default_kd")


@pytest.fixture(scope="module")
def cdb() -> Scenario:
    return builtin("default_cdb")


# ------------------------------------------------------------------ the files themselves


@pytest.mark.parametrize("name", ["default_kd", "default_cdb"])
def test_builtin_scenario_loads_with_canned_responses(name):
    sc = builtin(name)
    assert sc.name == name
    assert len(sc.responses) >= 30


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


def test_kd_responses_agree_with_the_target_and_the_banners(kd):
    t = kd.target
    bare = t.break_address.replace("`", "")
    assert kd.responses["r"].text.endswith(texts.break_location(kd))
    assert f"rip={bare} " in kd.responses["r"].text
    assert kd.responses["r rip"].text == f"rip={bare}\n"
    assert kd.responses["u"].text.startswith(texts.break_location(kd))
    assert kd.responses["db"].text.startswith(f"{t.break_address}  cc c3 ")
    assert f"Kernel base = 0x{t.kernel_base} PsLoadedModuleList = 0x{t.ps_loaded_module_list}\n" in (
        kd.responses["vertarget"].text)
    assert f"Kernel Version {t.build} MP ({t.processors} procs) Free x64\n" in kd.responses["version"].text
    nt_line = next(line for line in kd.responses["lm"].text.splitlines() if "   nt   " in line)
    assert nt_line.startswith(t.kernel_base)
    assert kd.responses["lm m nt"].text.splitlines()[-1] == nt_line
    # the breakpoint that texts.breakpoint_hit() reports is the one bl lists
    assert "nt!NtCreateFile" in texts.breakpoint_hit(0) and "nt!NtCreateFile" in kd.responses["bl"].text
    assert "fffff800`62c3a1e0" in texts.breakpoint_hit(0) and "fffff800`62c3a1e0" in kd.responses["bl"].text
    # one .reload dot per loaded module
    modules = kd.responses["lm"].text.split("Unloaded modules:")[0].splitlines()[1:]
    dots = sum(line.count(".") for line in kd.responses[".reload"].text.splitlines() if set(line) == {"."})
    assert dots == len(modules)
    # the stack k shows is the one !thread shows
    k_frames = [line.split()[1:4] for line in kd.responses["k"].text.splitlines()[1:]]
    thread_frames = [line.split()[0:2] for line in kd.responses["!thread"].text.splitlines()
                     if re.match(r"[0-9a-f]{8}`[0-9a-f]{8} ", line)]
    assert [f[:2] for f in k_frames] == thread_frames


def test_cdb_responses_agree_with_the_attach_banner(cdb):
    attach = texts.cdb_attach(0x1A2C)
    assert cdb.responses["r"].text.endswith("ntdll!DbgBreakPoint:\n00007ffc`81a986a0 cc              int     3\n")
    assert cdb.responses["r"].text.splitlines()[-2:] == attach.splitlines()[-2:]
    for line in attach.splitlines():
        if line.startswith("ModLoad: "):
            start, end = line.split()[1:3]
            assert any(row.startswith(f"{start} {end}   ") for row in cdb.responses["lm"].text.splitlines()), line
    assert "1a2c.5d0: Break instruction exception - code 80000003 (first chance)" in cdb.responses[".lastevent"].text
    assert ".  2  Id: 1a2c.5d0 " in cdb.responses["~"].text
    # !analyze -v points at a context and a record that are answered, and they show the fault
    # the dump banner reports (texts.dump_loaded)
    analysis = cdb.responses["!analyze -v"].text
    cxr = re.search(r"\(\.cxr (0x[0-9a-f]+)\)", analysis)
    exr = re.search(r"\(\.exr (0x[0-9a-f]+)\)", analysis)
    assert cxr and exr
    fault = texts.dump_loaded(cdb, "x.dmp", kernel=False, symbol_path=None).splitlines()[-2:]
    assert cdb.responses[f".cxr {cxr.group(1)}"].text.splitlines()[-2:] == fault
    assert "c0000005 (Access violation)" in cdb.responses[f".exr {exr.group(1)}"].text


# ------------------------------------------------------------------ played by the simulator


@pytest.mark.process
def test_kd_session_plays_canned_responses_verbatim(kd):
    out = _session(KD_ARGV, KD_COMMANDS)
    assert "Syntax error" not in out
    for command in KD_COMMANDS:
        assert _crlf(kd.responses[command].text, KD_ARGV) in out, command
    assert out.endswith(_expected_tail(kd, KD_PROMPT, KD_COMMANDS, KD_ARGV))


@pytest.mark.process
def test_cdb_session_plays_canned_responses_verbatim(cdb):
    out = _session(CDB_ARGV, CDB_COMMANDS)
    assert "Syntax error" not in out
    for command in CDB_COMMANDS:
        assert _crlf(cdb.responses[command].text, CDB_ARGV) in out, command
    assert out.endswith(_expected_tail(cdb, CDB_PROMPT, CDB_COMMANDS, CDB_ARGV))
    assert '"C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x64\\cdb.exe" -p 1234' in out


@pytest.mark.process
def test_unknown_extension_and_unknown_command_differ():
    out = _session(KD_ARGV, ["!bogus", "bogus"])
    assert f"{KD_PROMPT}No export bogus found\r\n" in out
    assert f"{KD_PROMPT}       ^ Syntax error in 'bogus'\r\n" in out
