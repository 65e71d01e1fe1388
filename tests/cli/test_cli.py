"""The ``kd-mcp`` command: help, version, doctor, demo, state write and the simulator.

The simulator and the demo run as real ``python -m kdmcp`` children (the path end to end, process
tier); the rest call ``main`` in this process (``run_main``, tests/cli/conftest.py), fast tier.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest
import yaml

from kdmcp import __version__
from kdmcp.cli import main
from tests.cli.conftest import RunMain

CANARY = "c4n4ryk3y0000.aaaa.bbbb.cccc"


def run(*args: str, stdin: bytes = b"", env: dict[str, str] | None = None, timeout: float = 60):
    return subprocess.run([sys.executable, "-m", "kdmcp", *args], input=stdin, capture_output=True,
                          timeout=timeout, check=False, env=env)


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"kd-mcp {__version__}"
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("serve", "doctor", "demo", "state", "sim"):
        assert command in out


@pytest.mark.process  # starts processes (tests/tiers.py)
def test_sim_subcommand_runs_the_simulator():
    done = run("sim", "kd", "-b", "-k", "net:port=50000,key=1.2.3.4", stdin=b".echo from the cli\nq\n")
    assert done.returncode == 0
    assert b"0: kd> from the cli\r\n0: kd> quit:\r\n" in done.stdout


def test_doctor_simulated_is_healthy_and_reports_on_stdout(run_main: RunMain):
    done = run_main("doctor", "--simulate")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # the report is the command's output
    assert "kd.exe" in done.stdout and "simulator" in done.stdout


def test_doctor_without_debugger_or_state_file_fails(tmp_path, run_main: RunMain):
    env = {**os.environ, "PATH": str(tmp_path), "KDMCP_STATE_FILE": str(tmp_path / "none.json"),
           "XDG_CONFIG_HOME": str(tmp_path), "COLUMNS": "400"}
    done = run_main("doctor", env=env)
    assert done.returncode == 1
    said = " ".join(done.stdout.split())
    assert "missing: looked in" in said and "missing not found" not in said
    assert "kd-mcp --simulate" in said  # the way to try kd-mcp on a machine without kd
    assert done.stderr.startswith("kd-mcp: error: doctor found a problem: kd.exe not found, state file: ")
    assert len(done.stderr.splitlines()) == 1


@pytest.mark.process  # starts processes (tests/tiers.py)
def test_demo_runs_the_whole_loop_without_waiting_out_a_timeout():
    done = run("demo", timeout=60)
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    text = done.stdout.decode()
    for step in ("start_from_state", "break_in", "kd_command", "resume_for_winrm", "stop_kd"):
        assert step in text
    assert "resumed target" in text and "done" in text
    # a real investigation on the world: the client process found, the driver's dispatch table
    # read, its IOCTL routine hit by the client's next DeviceIoControl, the stack there
    assert "Image: notmyfault64.exe" in text and "Dispatch routines:" in text
    assert "bp fffff80060da1e00" in text and "events: breakpoint" in text
    assert "myfault+0x1e00" in text and "KERNELBASE!DeviceIoControl" in text
    # Each step's header says how long it took ("╭─ break_in() — 4 ms ─"). A step that waited out
    # a timeout would show at least the shortest one the demo uses (break_in's 10 s); how fast
    # the demo is belongs to the benchmarks, not to this test.
    step_ms = [int(ms) for ms in re.findall(r"— (\d+) ms ─", text)]
    assert len(step_ms) >= 5 and max(step_ms) < 10_000, step_ms


def test_state_write_takes_the_key_from_the_environment_only(tmp_path, run_main: RunMain):
    path = tmp_path / "state" / "kd-session.json"
    env = {**os.environ, "KDMCP_KDNET_KEY": CANARY}
    done = run_main("state", "write", "--path", str(path), "--guest-host", "10.1.2.3", "--host-ip", "10.1.2.1",
               "--port", "50001", env=env)
    assert done.returncode == 0, done.stderr
    assert CANARY not in done.stdout + done.stderr
    doc = yaml.safe_load(path.read_text())
    assert doc["key"] == CANARY and doc["port"] == 50001 and doc["schema"] == "winrm-kd-session-v1"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # The file it wrote is one the server accepts.
    from kdmcp.statefile import load_state

    assert load_state(str(path)).state.key.reveal() == CANARY
    json.dumps(doc)  # plain data


CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "corpus")


def test_parse_a_transcript_gives_one_block_per_prompt_line(tmp_path, run_main: RunMain):
    transcript = tmp_path / "session.txt"
    transcript.write_text(
        "0: kd> r rip\nrip=fffff80062a05c20\n0: kd> lm m nt\nstart             end                 module name\n"
        "fffff800`62600000 fffff800`63646000   nt         (pdb symbols)          C:\\sym\\ntkrnlmp.pdb\n"
        "1: kd:x86> k\n # ChildEBP RetAddr\n00 8d5dfb4c 81a9e7d6 nt!KiSwapContext+0x19\n0:000> foo\n"
        "       ^ Syntax error in 'foo'\n"
    )
    done = run_main("parse", str(transcript))
    assert done.returncode == 0, done.stderr
    blocks = json.loads(done.stdout)
    assert [(b["prompt"], b["command"]) for b in blocks] == [
        ("0: kd> ", "r rip"), ("0: kd> ", "lm m nt"), ("1: kd:x86> ", "k"), ("0:000> ", "foo")]
    assert [b["record"]["kind"] for b in blocks] == ["registers", "modules", "stack", "error"]
    assert blocks[1]["record"]["modules"][0]["name"] == "nt"


def test_parse_one_output_from_stdin_with_its_command(run_main: RunMain):
    done = run_main("parse", "--command", "r rip", stdin=b"rip=fffff80062a05c20\n")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["kind"] == "registers" and record["registers"] == {"rip": "0xfffff80062a05c20"}


@pytest.mark.parametrize("command", ["~ 3 k", "|~[1a4] k"])
def test_parse_reads_a_selector_prefixed_command_as_the_command_it_runs(command: str, run_main: RunMain):
    """``~ 3 k`` (Thread Syntax, a blank after the tilde) and ``|~[1a4] k`` (Process Syntax, by PID)
    run ``k``: their output is a stack, as the policy, the engine and the simulator read the line."""
    listing = (" # Child-SP          RetAddr               Call Site\n"
               "00 fffff800`62c3a1e0 fffff800`62a05c20     nt!KeBugCheckEx\n"
               "01 fffff800`62c3a1e8 fffff800`62a05c28     nt!KiPageFault+0x260\n")
    done = run_main("parse", "--command", command, stdin=listing.encode())
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["kind"] == "stack" and record["command"] == command
    assert [f["call_site"] for f in record["frames"]] == ["nt!KeBugCheckEx", "nt!KiPageFault+0x260"]


def test_parse_a_corpus_sample(run_main: RunMain):
    sample = os.path.join(CORPUS, "stack", "04.txt")
    blocks = json.loads(run_main("parse", sample).stdout)
    assert blocks[0]["command"] == "k" and len(blocks[0]["record"]["frames"]) == 16


def test_transcript_show_keeps_brackets(tmp_path, run_main: RunMain):
    """rich markup would eat "[unknown_session]": the cells are plain text."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        '{"t": 1.0, "kind": "result", "tool": "stop_kd", "status": "error", "category": "unknown_session"}\n'
        '{"t": 1.5, "kind": "event", "session_id": "s1", "event": "dbgprint", "text": "[bold]x[/bold]"}\n'
    )
    done = run_main("transcript", "show", str(transcript), env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "[unknown_session]" in done.stdout
    assert "[bold]x[/bold]" in done.stdout


def test_exit_codes_in_the_readme_are_the_cli_s():
    from kdmcp.cli import EXIT_CODES

    with open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    cells = [line.strip("|").split("|", 1) for line in readme.splitlines() if line.startswith("| ")]
    rows = {int(code): meaning.strip(" |") for code, meaning in cells if code.strip().isdigit()}
    assert rows == EXIT_CODES
