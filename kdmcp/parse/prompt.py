"""Recognise the debugger's input prompt.

kd and cdb print the prompt with no trailing newline and wait for input, so a prompt is
only ever the *unterminated tail* of the output. Forms seen in real consoles:

- ``kd> `` (uniprocessor kernel), ``0: kd> `` (SMP kernel: current processor),
  ``1: kd:x86> `` (effective machine differs from the target's),
- ``lkd> `` (local kernel debugging, ``kd -kl``),
- ``0:000> `` (user mode: process:thread), ``0:000:x86> `` (WoW64),
  ``3:2:005> `` (multi-system: system:process:thread),
- any of them behind a remote-session tag such as ``[HOST\\user] `` (``-remote`` clients).

A peer's regex missed ``0: kd> `` and waited 60 s on every command; the pattern below is
tested against every form above.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

# [remote tag] then either the kernel form "N: kd:mach> " / "lkd> " or the user form
# "S:P:TTT:mach> " / "P:TTT> ". The trailing space is optional: some transcripts trim it.
PROMPT_PATTERN = (
    r"(?:\[[^\]\r\n]{1,200}\] ?)?"
    r"(?:"
    r"(?:(?P<cpu>\d{1,4}): )?(?P<kernel>l?kd)(?::(?P<kmachine>[A-Za-z0-9_]{2,8}))?"
    r"|"
    r"(?:(?P<system>\d{1,4}):)?(?P<process>\d{1,4}):(?P<thread>\d{3,5})(?::(?P<umachine>[A-Za-z0-9_]{2,8}))?"
    r")> ?"
)
_PROMPT_RE = re.compile(PROMPT_PATTERN)


class Prompt(BaseModel):
    """A parsed prompt: who the debugger's next command applies to."""

    text: str
    mode: Literal["kernel", "local_kernel", "user"]
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
    system = m.group("system")
    return Prompt(
        text=text,
        mode="user",
        system=int(system) if system is not None else None,
        process=int(m.group("process")),
        thread=int(m.group("thread"), 10),
        machine=m.group("umachine"),
    )
