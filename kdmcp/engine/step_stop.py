"""A stop kd announces with no reason line: a step, a return (``gu``) or ``g ADDRESS`` ending.

A breakpoint, an exception or a break-in comes with its own line ("Breakpoint 0 hit", "...
- code 80000003"). A step does not: after ``p``, ``t``, ``pt``, ``gu`` or ``g ADDRESS``
kd prints the register block (``p``/``t`` and ``gu`` in kd, corpus ``misc/08``) and then
only the new location and its instruction (``0: kd> p`` / ``nt!NtCreateFile+0x5:`` /
``fffff800`62c3a1e5 57 push rdi``), then its prompt. Read as target output, that block was a
``dbgprint`` event (issue 15: "continue_go with gu reported the step-out location as a
dbgprint event"). The machine holds such lines back while the target runs; when the prompt
follows them and the last two are a location and an instruction, they are a ``step`` event.
"""

from __future__ import annotations

import re

__all__ = ["HELD_LINES", "held_start", "step_location", "stop_line"]

HELD_LINES = 24  # a register block is 8-10 lines (x64), then the location and the instruction

# "rax=0000000000000000 rbx=..." / " r8=..." / "iopl=0         nv up ei pl zr na pe nc" /
# "cs=0010  ss=0018 ... efl=00000246" / "eax=00000001 ebx=..." (x86): name=hex first.
_REGISTER_LINE = re.compile(rb"\s*[a-z][a-z0-9]{1,4}=[0-9a-f]+(?:\s|$)")
# "nt!NtCreateFile+0x5:" / "app!main:" / "image00400000+0x1234:": one word ending in a colon.
_LOCATION_LINE = re.compile(rb"[^\s:][^\s]*:")
# "fffff800`62c3a1e5 57              push    rdi" / "77f0a1b2 cc int 3": address, bytes, mnemonic.
_INSTRUCTION_LINE = re.compile(rb"[0-9a-f]{8}(?:`[0-9a-f]{8})? [0-9a-f]+ +\S.*")


def stop_line(line: bytes) -> bool:
    """A line a stop prints (a register line, a location, an instruction): not the target's output.
    Blanks after the line are not its (a console that pads its lines, a transcript pasted with
    them: "ntdll!NtTerminateProcess+0xa:  " in fixtures/sessions/msmania-cdb-launch-exit.txt)."""
    text = line.rstrip(b" \t\r\n")
    return bool(_REGISTER_LINE.match(text) or _LOCATION_LINE.fullmatch(text)
                or _INSTRUCTION_LINE.fullmatch(text))


def held_start(text: bytes) -> int:
    """Where the trailing run of complete lines of ``text`` that may be a step stop begins
    (``len(text)`` when the last complete line cannot be one). ``text`` ends at a line end."""
    pos = len(text)
    for _ in range(HELD_LINES):
        if pos == 0:
            break
        start = text.rfind(b"\n", 0, pos - 1) + 1
        if not stop_line(text[start:pos]):
            break
        pos = start
    return pos


def step_location(block: bytes) -> bytes | None:
    """The location and instruction lines when ``block`` (held lines, a prompt after them) is a
    step stop, else None (target output that only looked like one)."""
    lines = [line.rstrip(b" \t\r") for line in block.split(b"\n") if line.strip()]
    if len(lines) >= 2 and _LOCATION_LINE.fullmatch(lines[-2]) and _INSTRUCTION_LINE.fullmatch(lines[-1]):
        return lines[-2] + b"\n" + lines[-1]
    if lines and _INSTRUCTION_LINE.fullmatch(lines[-1]) and any(_REGISTER_LINE.match(x) for x in lines[:-1]):
        return lines[-1]  # no symbol for the new address: kd prints the instruction alone
    return None
