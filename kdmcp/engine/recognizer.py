"""Incremental recognition of prompts, markers and events in the debugger's byte stream.

Every chunk is scanned once: the recognizer keeps only the unterminated last line between
chunks (bounded), so 100 MB of output costs 100 MB of scanning, never a rescan of what came
before — one peer re-joined its whole buffer per character and took 93 s for 46 KB.

Event lines are matched only at line start, with the debugger's exact words. Expensive
regex work runs only on chunks that contain one of the events' keywords.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from kdmcp.parse.prompt import PROMPT_PATTERN, Prompt, glued_prompt, match_prompt

_TAIL_LIMIT = 65536  # a longer line without a newline cannot be a prompt or an event
_PROMPT_MAX = 256

_A = rb"[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?"  # an address as kd prints it: 77430000, fffff803`7f3a70e5

# One alternative per event, at line start; group names are the event kinds.
_EVENT_RE = re.compile(
    # A pty echoes each ^C sent for a break as a raw 0x03 (or "^C") before the banner; a
    # break-in request sent again (see SessionConfig.break_retry_s) adds one more.
    rb"^(?:\x03|\^C)*(?P<line>(?:"
    # corpus connect/04, connect/07: kernel "Break instruction exception - code 80000003
    # (first chance)"; user mode prefixes "(pid.tid): ".
    rb"(?P<break_in>(?:\([0-9a-fA-F]+\.[0-9a-fA-F]+\): )?Break instruction exception - code 80000003)"
    rb"|(?P<breakpoint>Breakpoint (?P<bp>\d+) hit)"  # corpus misc/05, stack/07
    rb"|(?P<bugcheck>\*\*\* Fatal System Error: 0x(?P<bc>[0-9a-fA-F]+))"
    # cdb: "(1a2c.3b4): Access violation - code c0000005 (first chance)"; "(340.17cc): C++ EH
    # exception - code e06d7363 (!!! second chance !!!)"; kd has no "(pid.tid): " and needs the
    # chance in parentheses: "Access violation - code c0000005 (!!! second chance !!!)"
    rb"|(?P<exception>(?:\([0-9a-fA-F]+\.[0-9a-fA-F]+\): [^\r\n]*? - code (?P<ex>[0-9a-fA-F]{8})"
    # (not .lastevent's report of one: "Last event: 1092.5d0: Break instruction exception - code
    # 80000003 (first chance)" names the stop already reported, below)
    rb"|(?!Last event: )[A-Z][^\r\n]*? - code (?P<kex>[0-9a-fA-F]{8}) \((?=first chance|!!! second|first/second)))"
    rb"|(?P<reboot>Shutdown occurred at)"
    rb"|(?P<waiting>Waiting to reconnect\.\.\.)"  # corpus connect/01-03
    rb"|(?P<connected>Kernel Debugger connection established)"  # corpus connect/01, 04
    # cdb launching a program prints "CommandLine: app.exe" first (corpus connect/07): with -g
    # nothing else says the debuggee runs
    rb"|(?P<launched>CommandLine: )"
    # A debugging server tells everyone, the joining client too: "MACHINE\User (tcp
    # 10.0.0.1:1234) connected at Mon Jan 01 ..." (docs: Controlling a Remote Debugging Session)
    # It arrives whenever the client connects: at a prompt, it ends the prompt's line.
    rb"|(?:[^\r\n>]{0,24}> )?(?P<joined>[^\s\\]+\\\S+ \((?:tcp|npipe)[^)\r\n]*\) connected at )"
    rb"|(?P<transport_lost>Retry sending the same data packet for \d+ times)"
    # cdb while the debuggee runs, and at its start: "ModLoad: 00007ff9`9cd70000 00007ff9`9cda0000
    # C:\WINDOWS\System32\IMM32.DLL" (fixtures/sessions: aiblog, sincon, rust-ci logs)
    rb"|(?P<module_load>ModLoad: (?P<mbase>" + _A + rb")\s+(?P<mend>" + _A + rb")\s+(?P<mname>[^\r\n]*))"
    # "Unload module WUDFRd.sys at fffff803`7fac0000" (kd, printed while the target runs once an ud
    # filter is set; before an sxe ud stop: fixtures/sessions/geocausa-kd-arm64-unload-logopen.log);
    # cdb's, after sxn ud: "Unload module C:\Windows\System32\wininet.dll at 00007ffa`0b670000"
    rb"|(?P<module_unload>Unload module (?P<uname>[^\r\n]+?) at (?P<ubase>" + _A + rb"))"
    # .lastevent, typed or an event filter's command (sxe -c ".lastevent; g" ld):
    # "Last event: Load module KmdfHelloWorld.sys at fffff806`30580000" (fixtures/sessions:
    # break-on-module-load), "Last event: 18830.55e0: Exit process 0:18830, code 0"
    rb"|(?P<last_event>Last event: (?:[0-9a-fA-F]+\.[0-9a-fA-F]+: )?(?:(?P<le_load>Load module (?P<lname>[^\r\n]+?) at "
    rb"(?P<lbase>" + _A + rb"))|(?P<le_unload>Unload module (?P<luname>[^\r\n]+?) at (?P<lubase>" + _A + rb"))"
    rb"|(?P<le_exitp>Exit process )|(?P<le_exitt>Exit thread )|(?P<le_other>)))"
    # kd's own lines that are no target's output: the target's "KDTARGET: Refreshing KD
    # connection" (at boot, before a bugcheck's break), .lastevent's second line, and cdb's
    # start-up lines after "CommandLine:" (the symbol path and its validation summary)
    rb"|(?P<kd_own>KDTARGET: Refreshing KD connection|[ \t]+debugger time: |Symbol search path is: "
    rb"|Executable search path is:|\*+ (?:Symbol )?Path validation summary \*+"
    rb"|Response\s+Time \(ms\)\s+Location|(?:Deferred|OK|Failed)\s{3,}\S"
    rb"|WARNING: (?:Whitespace at start of path element|Path element is empty|Non-directory path: )"
    # cdb's NatVis lines at start and quit, its box about shadow stacks (video-editor-cdb-logopen)
    rb"|NatVis script (?:successfully loaded|unloaded) from '|\+-{60,}\+\r?$|\|.{60,}\|\r?$"
    rb"|bp\d+ at \S+ failed)"
    # A go that kd refuses: it prints why and comes back to its prompt; the target never ran
    # (jedichou-cdb-g-bp-failed: "Unable to insert breakpoint 0 at 00da0001, Win32 error 0n998")
    rb"|(?P<go_refused>Unable to insert breakpoint \d+ at )"
    # "No runnable debuggees error in 'g'" (kd marks the failing word with a "^" line first)
    rb"|(?P<no_debuggees>[ \t]*(?:\^ )?No runnable debuggees)"
    rb")[^\r\n]*)",
    re.MULTILINE,
)
_EVENT_KINDS = ("break_in", "breakpoint", "bugcheck", "exception", "reboot", "waiting", "connected", "launched",
                "joined", "transport_lost", "module_load", "module_unload", "last_event", "kd_own", "no_debuggees",
                "go_refused")
# A chunk can hold an event line only if it holds one of these (``_may_hold_event``). Each
# keyword starts with a character kd's everyday output rarely has (capitals, punctuation): the
# regex engine skips to such characters before it tries the alternatives, so an ``r`` with no
# event costs ~6 µs instead of ~20 (with keywords starting with a space or a hex digit it
# stopped every few bytes). The two events whose words start in lower case are plain ``in``s.
_KEYWORDS = (
    b"- code ",  # "Break instruction exception - code", "(pid.tid): Access violation - code"
    b"Breakpoint ",
    b"Fatal System Error",
    b"Shutdown occurred",
    b"Waiting to reconnect",
    b"Debugger connection established",
    b"CommandLine: ",
    b") connected at ",
    b"Retry sending",
    b"ModLoad: ",
    b"Unload module ",
    b"Last event: ",
    b"KDTARGET",
    b"Symbol search path is:",
    b"Executable search path is:",
    b"Path validation",
    b"Response",
    b"Deferred ",
    b"OK   ",
    b"WARNING: ",
    b"No runnable debuggees",
    b"NatVis script",
    b"-----+",
    b"|\n",
    b"|\r\n",
    b"Failed ",
    b"Unable to insert breakpoint",
)
_KEYWORD_RE = re.compile(b"|".join(re.escape(keyword) for keyword in _KEYWORDS))
_LOWER_KEYWORDS = (b"debugger time: ", b" failed")  # .lastevent's second line, "bp1 at nt!Foo failed"


def _may_hold_event(text: bytes, end: int | None = None) -> bool:
    """Whether ``text`` (up to ``end``) may hold an event line: a keyword of every ``_EVENT_RE``
    alternative is in it."""
    end = len(text) if end is None else end
    return (_KEYWORD_RE.search(text, 0, end) is not None or text.find(_LOWER_KEYWORDS[0], 0, end) >= 0
            or text.find(_LOWER_KEYWORDS[1], 0, end) >= 0)


# A ModLoad line that follows output without its line end (a debug string with no newline, then
# cdb's "ModLoad: ..."; video-editor-cdb-logopen): found anywhere in a line.
_MIDLINE_MODLOAD_RE = re.compile(rb"(?<=[^\r\n])(?P<line>ModLoad: (?P<mbase>" + _A + rb")\s+(?P<mend>" + _A
                                 + rb")\s+(?P<mname>[^\r\n]*))")
_PROMPT_SUFFIX_RE = re.compile(("(?:" + PROMPT_PATTERN + ")$").encode())


@dataclass(frozen=True)
class EventHit:
    """An event line: its kind, absolute offsets, text and what it carries.

    ``module``/``base``/``module_end``: a module event's name and range; ``chance``: an
    exception's "first" or "second" (None where kd does not say, as in a dump);
    ``detail``: the ``.lastevent`` kind (``load``, ``unload``, ``exit_process``, ``exit_thread``, ``other``).
    """

    kind: str
    start: int
    end: int
    text: bytes
    number: int | None = None
    code: str | None = None
    module: str | None = None
    base: str | None = None
    module_end: str | None = None
    chance: str | None = None
    detail: str | None = None


class MarkerHit(NamedTuple):
    """A completion marker alone on its line (after an optional prompt).

    A named tuple, as ``machine.Transition`` is: one per command, on the reader's critical path
    (a frozen dataclass sets each field through ``object.__setattr__``).

    ``output_end`` is where the command's output stops: before the prompt that precedes the
    marker on its line (pipes) or at the line start (consoles, which echo input).
    """

    marker: bytes
    output_end: int
    line_end: int
    # Text before the marker on its line that is no prompt this module knows and no echo of
    # ".echo": on pipes, a prompt of a shape nobody here knows (the machine learns it when the
    # same text then ends the output alone).
    prompt_text: bytes | None = None


_K = TypeVar("_K")
_V = TypeVar("_V")
# The recognizer's per-text caches hold this many findings (a session sees a few prompts): a
# full one starts again, cheaper than tracking what was used last.
_CACHED = 64


def _remember(cache: dict[_K, _V], key: _K, value: _V) -> _V:
    """``value`` stored in ``cache`` under ``key`` (emptied first when full), and returned."""
    if len(cache) >= _CACHED:
        cache.clear()
    cache[key] = value
    return value


_UNSEEN = object()  # ``expect_lone``: a prompt not looked at yet (None: looked at, no lone shape)


class LoneShape(NamedTuple):
    """How the chunk that completes a lone command ends, known before the command is written
    (``StreamRecognizer.expect_lone``; one per prompt, cached): kd's prompt, the marker alone after
    it, the same prompt.

    On pipes kd answers ``r`` and ``.echo <marker>`` in one write (the simulator too): the output,
    ``0: kd> <marker>\r\n0: kd> ``. ``feed_lone`` recognises such a chunk with a few byte tests
    instead of ``feed``'s line splitting, marker search and prompt matching, and leaves the
    recognizer as ``feed`` would (docs/performance.md, "The engine: one ``r`` over pipes").
    """

    prompt_text: bytes  # the prompt's bytes: the tail before the command was sent
    after: bytes  # what follows the marker: its line end, then the prompt
    at: int  # where the prompt starts in the text before the marker (``_prompt_suffix``)
    prompt: Prompt  # what ``feed`` makes of the same tail at the end


class StreamRecognizer:
    """Feeds on chunks; reports event lines, marker lines and whether the tail is a prompt."""

    def __init__(self) -> None:
        self._tail = b""
        self._tail_start = 0
        self._tail_at_line_start = True
        self._markers: set[bytes] = set()
        self.prompt: Prompt | None = None
        self.prompt_offset: int | None = None
        self._prompt_cache: dict[bytes, Prompt | None] = {}
        self._suffix_cache: dict[bytes, int | None] = {}  # text before a marker -> where its prompt starts
        self._learned: dict[bytes, Prompt] = {}  # prompt shapes adopted after a timeout (``learn_prompt``)
        self._lone_cache: dict[tuple[bytes, bytes], LoneShape | None] = {}  # ``expect_lone``'s findings

    @property
    def end(self) -> int:
        return self._tail_start + len(self._tail)

    @property
    def open_line_start(self) -> int | None:
        """Where the unterminated last line starts, if it may still become a prompt or an event line."""
        if self._tail_at_line_start and 0 < len(self._tail) <= _PROMPT_MAX:
            return self._tail_start
        return None

    def add_marker(self, marker: bytes) -> None:
        self._markers.add(marker)

    def discard_marker(self, marker: bytes) -> None:
        self._markers.discard(marker)

    def reset_line(self) -> None:
        """Treat the current position as a line start: input was just sent.

        Under pipes kd's output after a command starts on the prompt's own line; resetting
        here keeps ``Breakpoint 0 hit`` after ``0: kd> g`` recognisable as a line start.
        """
        self._tail_start += len(self._tail)
        self._tail = b""
        self._tail_at_line_start = True
        self.prompt = None
        self.prompt_offset = None

    def expect_lone(self, marker: bytes) -> LoneShape | None:
        """Before ``reset_line`` and ``add_marker(marker)`` for a command sent at a prompt: how the
        chunk answering it ends if it holds the whole answer (``LoneShape``); None when the tail is
        no prompt of its own line (a glued one), or the prompt would not end a marker line."""
        prompt_text = self._tail
        if (self.prompt is None or self.prompt_offset != self._tail_start or not self._tail_at_line_start
                or len(prompt_text) > _PROMPT_MAX or self._markers):
            return None
        key = (prompt_text, marker.rstrip(b"0123456789"))  # the marker's counter aside: a session's few prompts
        shape = self._lone_cache.get(key, _UNSEEN)
        if shape is not _UNSEEN:
            return shape  # type: ignore[return-value]
        prompt = self._learned.get(prompt_text) or self._match_prompt(prompt_text)
        at = self._prompt_suffix(prompt_text)
        # No keyword has a digit, so none found in the ending can span the counter: without one
        # here, there is none in the ending, whatever the count (``feed_lone``).
        clean = not _may_hold_event(prompt_text + key[1] + b"\r\n" + prompt_text)
        shape = None
        if prompt is not None and at is not None and clean:
            shape = LoneShape(prompt_text, b"\r\n" + prompt_text, at, prompt)
        return _remember(self._lone_cache, key, shape)

    def feed_lone(self, data: bytes, marker: bytes, shape: LoneShape) -> MarkerHit | None:
        """``feed`` for the chunk that holds a lone command's whole answer, ending as ``shape`` says
        after ``marker``, with no event keyword in it: the marker's hit, the recognizer left as ``feed``
        leaves it. None (nothing changed) for any other chunk: ``feed`` takes it.

        Fed right after ``reset_line`` (the tail empty, at a line start) with ``marker`` the only
        marker. ``feed`` would find the same: the marker's first occurrence is on the last complete
        line, after the prompt (``_find_markers``); no event line: none in the output before the marker's
        line, none in the ending (``expect_lone``), and none across the two, as the output ends its line
        and no keyword goes on past a line end; the tail, the prompt, is matched as ``shape.prompt``.
        """
        prompt_text = shape.prompt_text
        at = len(data) - len(shape.after) - len(marker)  # where the marker is
        line = at - len(prompt_text)  # where its line starts
        if (line < 0 or not data.endswith(shape.after) or not data.startswith(prompt_text, line)
                or (line and data[line - 1] != 10)  # 10: b"\n"
                or data.find(marker) != at or _may_hold_event(data, line)):
            return None
        base = self._tail_start
        tail_start = self._tail_start = base + len(data) - len(prompt_text)
        self._tail = prompt_text
        self.prompt, self.prompt_offset = shape.prompt, tail_start
        self._markers.discard(marker)
        return MarkerHit(marker, base + line + shape.at, tail_start)

    def feed(self, data: bytes) -> tuple[list[EventHit], list[MarkerHit]]:
        """Consume the next chunk (which follows everything fed before)."""
        buf = self._tail + data
        base = self._tail_start
        cut = buf.rfind(b"\n") + 1
        complete, tail = buf[:cut], buf[cut:]
        at_line_start = self._tail_at_line_start
        events: list[EventHit] = []
        markers: list[MarkerHit] = []
        if complete:
            if at_line_start:
                events = self._events(complete, base)
            else:
                # The first line's start was dropped (over-long line): skip it.
                nl = complete.find(b"\n") + 1
                events = self._events(complete[nl:], base + nl)
            if self._markers:
                markers = self._find_markers(complete, base)
            at_line_start = True
        self._tail_start = base + cut
        if len(tail) > _TAIL_LIMIT:
            drop = len(tail) - _PROMPT_MAX
            tail = tail[drop:]
            self._tail_start += drop
            at_line_start = False
        self._tail = tail
        self._tail_at_line_start = at_line_start
        self.prompt = None
        self.prompt_offset = None
        if 0 < len(tail) <= _PROMPT_MAX:
            if at_line_start:
                self.prompt = self._learned.get(tail) or self._match_prompt(tail)
                if self.prompt is not None:
                    self.prompt_offset = self._tail_start
            if self.prompt is None:
                glued = glued_prompt(tail.decode("utf-8", errors="replace"))
                if glued is not None:
                    # "abc0: kd> ": the prompt starts where its characters do (all ASCII)
                    self.prompt = glued[1]
                    self.prompt_offset = self._tail_start + len(tail) - len(glued[1].text)
        return events, markers

    @property
    def tail(self) -> bytes:
        """The unterminated last line (at most 64 KB)."""
        return self._tail

    def learn_prompt(self, prompt: Prompt) -> None:
        """From now on an unterminated line exactly ``prompt.text`` is a prompt (a shape adopted
        after a command timed out on it: see ``SessionMachine.adopt_prompt``)."""
        self._learned[prompt.text.encode("utf-8")] = prompt
        self._lone_cache.clear()  # what a tail is has changed
        self.prompt, self.prompt_offset = prompt, self._tail_start

    def _match_prompt(self, tail: bytes) -> Prompt | None:
        """``match_prompt`` with a small cache: a session sees the same few prompts over and over."""
        if tail in self._prompt_cache:
            return self._prompt_cache[tail]
        return _remember(self._prompt_cache, tail, match_prompt(tail.decode("utf-8", errors="replace")))

    def _prompt_suffix(self, before: bytes) -> int | None:
        """Where the prompt that ends ``before`` starts (None: it ends in none), cached as
        ``_match_prompt`` is: on pipes every marker line starts with the same prompt."""
        if before in self._suffix_cache:
            return self._suffix_cache[before]
        m = _PROMPT_SUFFIX_RE.search(before)
        return _remember(self._suffix_cache, before, m.start() if m is not None else None)

    def _events(self, text: bytes, base: int) -> list[EventHit]:
        if not _may_hold_event(text):
            return []
        hits = []
        for m in _EVENT_RE.finditer(text):
            kind = next(name for name in _EVENT_KINDS if m.group(name) is not None)
            hits.append(_hit(kind, m, base))
        if b"ModLoad: " in text:
            for m in _MIDLINE_MODLOAD_RE.finditer(text):
                start = base + m.start("line")
                hits.append(EventHit("module_load", start, base + m.end(), m.group("line"),
                                     module=(_text(m, "mname") or "").strip(), base=_text(m, "mbase"),
                                     module_end=_text(m, "mend")))
            hits.sort(key=lambda h: h.start)
        return hits

    def _find_markers(self, text: bytes, base: int) -> list[MarkerHit]:
        hits = []
        for marker in list(self._markers):
            pos = text.find(marker)
            while pos >= 0:
                line_start = text.rfind(b"\n", 0, pos) + 1
                line_end = text.find(b"\n", pos) + 1
                before = text[line_start:pos]
                after = text[pos + len(marker) : line_end].rstrip(b"\r\n")
                if not after:
                    if not before:
                        hits.append(MarkerHit(marker, base + line_start, base + line_end))
                        break
                    at = self._prompt_suffix(before)
                    if at is not None:
                        hits.append(MarkerHit(marker, base + line_start + at, base + line_end))
                        break
                    # Not an echo of ".echo ", whole or cut: a pty echoes the marker line as the
                    # line discipline gets to it, and kd's answer to the command before it can
                    # come between (".echo s1\r\n." + "s1\r\n" + "echo KDMCP...\r\n").
                    if not _echo_before(before) and len(before) <= _PROMPT_MAX:
                        hits.append(MarkerHit(marker, base + line_start, base + line_end, prompt_text=before))
                        break
                pos = text.find(marker, pos + 1)
        return hits


def _echo_before(before: bytes) -> bool:
    """The text before a marker is the echo of ``.echo ``, whole or its cut-off end, after a
    prompt or an unknown prompt's text (``0: kd> .echo ``, ``ho `` of ``.ec`` + ``ho ``)."""
    if before.rstrip().endswith(b".echo"):
        return True
    for k in range(len(_ECHO_WORD), 0, -1):
        if before.endswith(_ECHO_WORD[-k:]):
            rest = before[:-k]
            return not rest or _PROMPT_SUFFIX_RE.search(rest) is not None
    return False


_ECHO_WORD = b".echo "


def _text(m: re.Match[bytes], group: str) -> str | None:
    value = m.group(group)
    return value.decode("utf-8", errors="replace") if value is not None else None


def _hit(kind: str, m: re.Match[bytes], base: int) -> EventHit:
    """The ``EventHit`` for one match of ``_EVENT_RE`` (``kind``: the alternative that matched)."""
    number = int(m.group("bp")) if m.group("bp") else None
    code_text = m.group("bc") or m.group("ex") or m.group("kex")
    code = f"0x{int(code_text, 16):08x}" if code_text else None
    line = m.group("line")
    fields: dict[str, str | None] = {}
    if kind == "exception":
        # "(first chance)", "(!!! second chance !!!)"; "(first/second chance not available)" in a dump
        fields["chance"] = ("first" if b"(first chance)" in line else
                            "second" if b"second chance !!!" in line else None)
    elif kind == "module_load":
        fields.update(module=(_text(m, "mname") or "").strip(), base=_text(m, "mbase"), module_end=_text(m, "mend"))
    elif kind == "module_unload":
        fields.update(module=_text(m, "uname"), base=_text(m, "ubase"))
    elif kind == "last_event":
        if m.group("le_load"):
            fields.update(detail="load", module=_text(m, "lname"), base=_text(m, "lbase"))
        elif m.group("le_unload"):
            fields.update(detail="unload", module=_text(m, "luname"), base=_text(m, "lubase"))
        elif m.group("le_exitp") is not None or m.group("le_exitt") is not None:
            fields["detail"] = "exit_process" if m.group("le_exitp") else "exit_thread"
        else:  # a stop reported when it happened (an exception, a break): no event of its own
            fields["detail"] = "other"
    return EventHit(kind, base + m.start("line"), base + m.end(), line, number, code, **fields)
