"""Split a console transcript into ``(prompt, command, output, record)`` blocks.

A block starts at a line that begins with a prompt (any form ``match_prompt`` knows, with
an optional remote ``[server]`` tag) and runs to the next such line. Text before the first
prompt (a connect banner, a pasted event) is a block without prompt or command. The blocks'
``source`` fields concatenate back to the input exactly.

Two real-world wrinkles are handled here:

- old WinDbg appended a timestamp to the echoed command (``kb   [Local 9:50 AM]``);
- output can land on the prompt's own line (pipes, ``.scriptload`` errors), e.g.
  ``0:000> "C:\\x.js" (line 11 (@ 1)): Error (0x80004005): Syntax error`` - when the text
  after a prompt is a debugger error line, it is treated as output of an empty command.
"""

from __future__ import annotations

import re

from kdmcp.parse.dispatch import parse
from kdmcp.parse.errors import looks_like_error_line
from kdmcp.parse.models import Record
from kdmcp.parse.prompt import PROMPT_PATTERN, Prompt, match_prompt
from kdmcp.validation import LazyModel

# A prompt at the start of a line, then the command up to the end of the line. Case-
# insensitive because published transcripts contain "0: Kd>" (kd itself prints "kd>"); up
# to two blanks before it because authors paste " kd> !poolused 2" (kd prints none).
_PROMPT_LINE_RE = re.compile(
    r"^ {0,2}(?P<prompt>" + PROMPT_PATTERN + r")(?P<command>[^\r\n]*)(?P<eol>\r?\n|$)",
    re.MULTILINE | re.IGNORECASE,
)

# "kb                      [Local        9:50 AM]" -> "kb" (cut with rfind, not a pattern:
# a leading blank run in a searched pattern is quadratic on long blank runs)
_TIMESTAMP_MARK = "[Local "


class Block(LazyModel):
    """One prompt line and the output that follows it."""

    prompt: Prompt | None = None
    prompt_text: str = ""
    command: str = ""
    output: str = ""
    source: str = ""
    record: Record


def _strip_timestamp(command: str) -> str:
    """Drop old WinDbg's ``[Local 9:50 AM]`` suffix."""
    cut = command.rfind(_TIMESTAMP_MARK)
    if cut >= 0 and command.rstrip().endswith("]"):
        return command[:cut]
    return command


def _prompt_of(text: str) -> Prompt | None:
    p = match_prompt(text)
    if p is None:
        p = match_prompt(text.lower())
        if p is not None:
            p = p.model_copy(update={"text": text})
    return p


def parse_transcript(text: str) -> list[Block]:
    """Blocks of a transcript, each with its parsed record. Never raises for str input."""
    # First cut the text into spans: (start, end, prompt, command, output).
    spans: list[tuple[int, int, str, str, str]] = []
    matches = list(_PROMPT_LINE_RE.finditer(text))
    first = matches[0].start() if matches else len(text)
    if first > 0:
        spans.append((0, first, "", "", text[:first]))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        command_text = m.group("command")
        command = _strip_timestamp(command_text).strip()
        if command and looks_like_error_line(command) and spans and spans[-1][2]:
            # output printed after the prompt came back: it belongs to the previous command
            # (the repeated prompt itself is left out of the output, kept in ``source``)
            start, _, prompt, prev_command, prev_output = spans[-1]
            spans[-1] = (start, end, prompt, prev_command, prev_output + command_text + text[m.end("command") : end])
            continue
        spans.append((m.start(), end, m.group("prompt"), command, text[m.end() : end]))
    return [
        Block(
            prompt=_prompt_of(prompt) if prompt else None,
            prompt_text=prompt,
            command=command,
            output=output,
            source=text[start:end],
            record=parse(command, output),
        )
        for start, end, prompt, command, output in spans
    ]
