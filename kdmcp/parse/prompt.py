"""Recognise the debugger's input prompt.

kd and cdb print the prompt with no trailing newline and wait for input, so a prompt is
only ever the *unterminated tail* of the output. Forms seen in real consoles:

- ``kd> `` (uniprocessor kernel), ``0: kd> `` (SMP kernel: current processor),
  ``1: kd:x86> `` (effective machine differs from the target's),
- ``lkd> `` (local kernel debugging, ``kd -kl``),
- ``0:000> `` (user mode: process:thread), ``0:000:x86> `` (WoW64),
  ``3:2:005> `` (multi-system: system:process:thread),
- ``?:???> `` (no target: cdb before a process exists, or a remote client whose server's
  session ended; issue 29: a session left busy for ever because nothing knew this form),
- any of them behind a remote-session tag such as ``[HOST\\user] `` (``-remote`` clients).

A prompt may also follow output that had no line end (``.printf "abc"`` then ``0: kd> ``):
``glued_prompt`` finds a prompt at the end of such a line.

A peer's regex missed ``0: kd> `` and waited 60 s on every command; the pattern below is
tested against every form above.
"""

from __future__ import annotations

import re
from typing import Literal

from kdmcp.validation import LazyModel

# [remote tag] then either the kernel form "N: kd:mach> " / "lkd> " or the user form
# "S:P:TTT:mach> " / "P:TTT> ". The trailing space is optional: some transcripts trim it.
PROMPT_PATTERN = (
    r"(?:\[[^\]\r\n]{1,200}\] ?)?"
    r"(?:"
    r"(?:(?P<cpu>\d{1,4}): )?(?P<kernel>l?kd)(?::(?P<kmachine>[A-Za-z0-9_]{2,8}))?"
    r"|"
    r"(?:(?P<system>\d{1,4}):)?(?P<process>\d{1,4}):(?P<thread>\d{3,5})(?::(?P<umachine>[A-Za-z0-9_]{2,8}))?"
    r"|"
    r"(?P<notarget>\?:\?\?\?)"
    r")> ?"
)
_PROMPT_RE = re.compile(PROMPT_PATTERN)


class Prompt(LazyModel):
    """A parsed prompt: who the debugger's next command applies to."""

    text: str
    # "no_target": ``?:???> ``; "unknown": a prompt shape nothing here knows, adopted by the engine
    # after a command saw its completion marker and then only this unterminated line (machine.py)
    mode: Literal["kernel", "local_kernel", "user", "no_target", "unknown"]
    processor: int | None = None
    system: int | None = None
    process: int | None = None
    thread: int | None = None
    machine: str | None = None


def match_prompt(text: str) -> Prompt | None:
    """Return the prompt if ``text`` is exactly one prompt (as the unterminated tail is)."""
    m = _PROMPT_RE.fullmatch(text)
    if m is None:
        return None
    if m.group("kernel") is not None:
        cpu = m.group("cpu")
        return Prompt(
            text=text,
            mode="local_kernel" if m.group("kernel") == "lkd" else "kernel",
            processor=int(cpu) if cpu is not None else None,
            machine=m.group("kmachine"),
        )
    if m.group("notarget") is not None:
        return Prompt(text=text, mode="no_target")
    system = m.group("system")
    return Prompt(
        text=text,
        mode="user",
        system=int(system) if system is not None else None,
        process=int(m.group("process")),
        thread=int(m.group("thread"), 10),
        machine=m.group("umachine"),
    )


# A glued prompt: kernel or user form with its number(s), right after non-blank output on the same line.
# The bare ``kd> `` form is left out: "...kd> " ending a line of output is too likely to be text.
_GLUED_RE = re.compile(r"(?<=\S)(?P<prompt>(?:\d{1,4}: l?kd(?::[A-Za-z0-9_]{2,8})?|(?:\d{1,4}:)?\d{1,4}:\d{3,5}"
                       r"(?::[A-Za-z0-9_]{2,8})?)> )$")


def glued_prompt(line: str) -> tuple[int, Prompt] | None:
    """A prompt printed right after output that had no line end (``abc0: kd> ``): where it starts
    and what it is. Only numbered forms count, with their trailing blank, so text that merely ends
    in ``kd> `` is not one."""
    m = _GLUED_RE.search(line)
    if m is None:
        return None
    prompt = match_prompt(m.group("prompt"))
    return (m.start("prompt"), prompt) if prompt is not None else None
