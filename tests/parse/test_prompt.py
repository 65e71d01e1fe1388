"""Prompt recognition (``match_prompt``) and transcript splitting on every prompt form."""

from __future__ import annotations

import re

import pytest

from kdmcp.parse import PROMPT_PATTERN, match_prompt, parse_transcript
from kdmcp.parse.prompt import glued_prompt


@pytest.mark.parametrize(
    ("text", "mode", "processor", "system", "process", "thread", "machine"),
    [
        ("kd> ", "kernel", None, None, None, None, None),
        ("kd>", "kernel", None, None, None, None, None),
        ("0: kd> ", "kernel", 0, None, None, None, None),
        ("13: kd> ", "kernel", 13, None, None, None, None),
        ("1: kd:x86> ", "kernel", 1, None, None, None, "x86"),
        ("lkd> ", "local_kernel", None, None, None, None, None),
        ("0:000> ", "user", None, None, 0, 0, None),
        ("0:011> ", "user", None, None, 0, 11, None),
        ("0:000:x86> ", "user", None, None, 0, 0, "x86"),
        ("3:2:005> ", "user", None, 3, 2, 5, None),
        ("[HOST\\user] 0:000> ", "user", None, None, 0, 0, None),
        ("[server1] 2: kd> ", "kernel", 2, None, None, None, None),
    ],
)
def test_match_prompt_forms(
    text: str,
    mode: str,
    processor: int | None,
    system: int | None,
    process: int | None,
    thread: int | None,
    machine: str | None,
) -> None:
    p = match_prompt(text)
    assert p is not None, text
    assert (p.text, p.mode, p.processor, p.system, p.process, p.thread, p.machine) == (
        text,
        mode,
        processor,
        system,
        process,
        thread,
        machine,
    )


@pytest.mark.parametrize(
    "text",
    ["", "kd> kb", "0:00> ", "C:\\Debuggers> ", "kd", "0: kd >", "Breakpoint 0 hit", "0:000>> ", "\n0:000> "],
)
def test_match_prompt_rejects(text: str) -> None:
    assert match_prompt(text) is None


def test_prompt_pattern_is_embeddable() -> None:
    # the engine embeds PROMPT_PATTERN in larger expressions; it must compile as a fragment
    assert re.compile(r"(?:^|\n)" + PROMPT_PATTERN + r"$").search("output\n0: kd> ") is not None


def test_transcript_recognises_every_form() -> None:
    text = (
        "kd> k\n"
        "0: kd> r\n"
        "1: kd:x86> u\n"
        "lkd> lm\n"
        "0:000> ~\n"
        "0:000:x86> dx @$curprocess\n"
        "3:2:005> kb\n"
        "[HOST\\user] 0:001> g\n"
    )
    blocks = parse_transcript(text)
    assert [b.command for b in blocks] == ["k", "r", "u", "lm", "~", "dx @$curprocess", "kb", "g"]
    assert [b.prompt.mode for b in blocks if b.prompt] == ["kernel"] * 3 + ["local_kernel"] + ["user"] * 4
    assert blocks[7].prompt.text == "[HOST\\user] 0:001> "
    assert "".join(b.source for b in blocks) == text


def test_transcript_preamble_blank_lines_crlf_and_trailing_prompt() -> None:
    text = (
        "Waiting to reconnect...\r\n\r\n"
        "0: kd> k\r\n"
        " # Child-SP          RetAddr           Call Site\r\n\r\n"
        "00 ffffd001`51978110 fffff801`0942f55b nt!Foo+0x66\r\n"
        "0: kd> "
    )
    blocks = parse_transcript(text)
    assert [b.command for b in blocks] == ["", "k", ""]
    assert blocks[0].prompt is None and blocks[0].record.kind == "events"
    assert blocks[1].record.kind == "stack" and blocks[1].record.frames[0].function == "Foo"
    assert blocks[2].output == ""
    assert "".join(b.source for b in blocks) == text


def test_transcript_uppercase_kd_and_timestamp() -> None:
    blocks = parse_transcript("0: Kd> lm                      [Local        9:50 AM]\nstart end module name\n")
    (b,) = blocks
    assert b.command == "lm"
    assert b.prompt is not None and b.prompt.processor == 0 and b.prompt.text == "0: Kd> "


def test_transcript_without_prompt_is_one_block() -> None:
    text = "ModLoad: 00000000`4a1e0000 00000000`4a239000   cmd.exe\n"
    (b,) = parse_transcript(text)
    assert b.prompt is None and b.command == "" and b.record.kind == "events"


def test_output_on_prompt_line_goes_to_previous_command() -> None:
    text = (
        "0:000> .scriptload C:\\x.js\n"
        '0:000> "C:\\x.js" (line 11 (@ 1)): Error (0x80004005): Syntax error\n'
        "Error: Unable to execute JavaScript script 'C:\\x.js'\n"
    )
    (b,) = parse_transcript(text)
    assert b.command == ".scriptload C:\\x.js"
    assert b.record.kind == "error" and b.record.category == "script"
    assert b.source == text


def test_prompt_pasted_after_a_blank_still_opens_a_block() -> None:
    # seen in a published !poolused write-up: the author's paste starts " kd> "
    text = " kd> !poolused 2\n   Sorting by NonPaged Pool Consumed\n"
    (b,) = parse_transcript(text)
    assert b.command == "!poolused 2" and b.prompt is not None and b.prompt.mode == "kernel"
    assert b.source == text
    # output indented deeper than a pasted blank or two is never taken for a prompt
    (only,) = parse_transcript("0: kd> dt x\n     kd> is not a prompt here\n")
    assert only.command == "dt x"


def test_no_target_prompt() -> None:
    # cdb with no process yet, a remote client whose server's session ended (issue 29)
    p = match_prompt("?:???> ")
    assert p is not None and p.mode == "no_target" and p.process is None


@pytest.mark.parametrize(
    ("line", "prompt", "start"),
    [("abc0: kd> ", "0: kd> ", 3), ("done.0:000> ", "0:000> ", 5), ("x1: kd:x86> ", "1: kd:x86> ", 1),
     ("out0:000:x86> ", "0:000:x86> ", 3)],
)
def test_glued_prompt_after_output_without_a_line_end(line: str, prompt: str, start: int) -> None:
    found = glued_prompt(line)
    assert found is not None and found[0] == start and found[1].text == prompt


@pytest.mark.parametrize("line", ["0: kd> ", "text kd> ", "abc0: kd>", "a 0: kd> ", "abc0: kd> x"])
def test_glued_prompt_needs_output_before_a_numbered_prompt_at_the_end(line: str) -> None:
    assert glued_prompt(line) is None
