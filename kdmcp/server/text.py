"""The text block's pieces: the header line, the event lines, a command's output under its header,
and the whole blocks of the session results (a start, a dump, a share, the sessions, the health check).

Every result model renders its own text block from its masked dump (``models.Served``) with
these; nothing here knows a model. The text block is for the model reading the result
(docs/results.md): a header (session, state, prompt, elapsed, and what was cut and where the
rest is), the debugger's own output as it printed it, and one line per event.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "EVENTS_HEAD",
    "EVENTS_TAIL",
    "EVENT_LINE_CHARS",
    "Data",
    "collapse_recursion",
    "command_extras",
    "command_text",
    "count",
    "cut_events",
    "dump_text",
    "event_lines",
    "fallback_text",
    "header",
    "health_text",
    "ids",
    "join",
    "module_rows",
    "ms",
    "process_rows",
    "sessions_text",
    "share_text",
    "start_text",
    "summary_line",
    "symbol_summary",
    "tidy",
]

# An event's line in the text block shows at most this much of its first line.
EVENT_LINE_CHARS = 200
# A flood (a driver's DbgPrint loop while the guest ran) is served as its first and last few
# events, the count, and where the rest are: one ``read_output`` range (``cut_events``).
EVENTS_HEAD = 3
EVENTS_TAIL = 2

Data = dict[str, Any]


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 session``, ``0 sessions``, ``2 entries`` (``plural`` where ``s`` is not it)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def ids(numbers: list[int]) -> str:
    """Breakpoint ids as ids (``#0, #3``), never to be read as a count."""
    return ", ".join(f"#{n}" for n in numbers)


def ms(value: float) -> str:
    return f"{value:.0f} ms" if value >= 100 else f"{value:.1f} ms"


def header(data: Data, *extra: str) -> str:
    """``[s1 broken "0: kd> " 3.1 ms …]``: the fields a model needs before reading the output."""
    parts = [data.get("session_id", ""), data.get("state", "")]
    if "prompt" in data:
        parts.append(json.dumps(data["prompt"]))
    if "elapsed_ms" in data:
        parts.append(ms(data["elapsed_ms"]))
    return "[" + " ".join([p for p in parts if p] + [e for e in extra if e]) + "]"


def tidy(text: str) -> str:
    """The debugger's output as a model reads it: ``\\n`` line ends, no trailing blanks (kd pads
    ``lm``'s and ``!process``'s columns and ends lines with ``\\r\\n``: bytes that say nothing)."""
    if "\r" not in text and " \n" not in text and not text.endswith(" "):
        return text.rstrip("\n")
    return "\n".join(line.rstrip() for line in text.splitlines())


def cut_events(data: Data) -> Data:
    """``data`` with a flood of events cut to the first ``EVENTS_HEAD`` and last ``EVENTS_TAIL``,
    and ``events_cut``: how many there were and the ``output_id`` of the ones left out (every
    event's text lies in the session's output; ``read_output`` reads them all)."""
    events = data.get("events")
    if not events or len(events) <= EVENTS_HEAD + EVENTS_TAIL + 1:
        return data
    left_out = events[EVENTS_HEAD:-EVENTS_TAIL]
    rest = f"{data.get('session_id', '')}:{left_out[0]['offset']}-{left_out[-1]['end_offset']}"
    return {**data, "events": events[:EVENTS_HEAD] + events[-EVENTS_TAIL:],
            "events_cut": {"total": len(events), "left_out": len(left_out), "output_id": rest}}


def _event_line(event: Data) -> str:
    first, _, rest = event["text"].strip("\r\n").partition("\n")
    first = first.rstrip("\r ")
    if rest or len(first) > EVENT_LINE_CHARS:
        first = first[:EVENT_LINE_CHARS] + "…"
    return f"[event {event['kind']}] {first}".rstrip()


def event_lines(data: Data) -> list[str]:
    """One line per event: its kind and the first line of its text; a cut flood (``cut_events``)
    says how many were left out between its first and last few, and where they are."""
    lines = [_event_line(event) for event in data.get("events", ())]
    cut = data.get("events_cut")
    if cut:
        kinds = sorted({e["kind"] for e in data["events"]})
        lines.insert(EVENTS_HEAD, f"[{cut['left_out']} more of {cut['total']} events ({', '.join(kinds)}): "
                                  f"read_output output_id={cut['output_id']}]")
    return lines


def join(head: str, body: str | None, tail: list[str]) -> str:
    pieces = [head]
    if body:
        pieces.append(body.rstrip("\r\n"))
    return "\n".join(pieces + tail)


def command_extras(data: Data) -> list[str]:
    """What a command's header says after the session, state, prompt and elapsed time: what was cut
    and where the rest is, and ``unparsed`` when no parser knew the command."""
    extra = []
    if data.get("truncated"):
        extra.append(f"truncated, {data['output_bytes']} B in all: read_output output_id={data['output_id']}")
    elif data.get("record_partial"):
        extra.append(f"record partial: read_output output_id={data['output_id']}")
    cut = [f"{name} {c['returned']}/{c['total']}" for name, c in data.get("lists", {}).items()
           if c["returned"] < c["total"]]
    if cut:
        extra.append("lists cut: " + ", ".join(cut))
    if data.get("record", {}).get("kind") == "text":
        extra.append("unparsed")
    return extra


# A stack frame line of k/kb/kv/kn: frame number, then addresses and arguments, the call site last.
_FRAME = re.compile(r"^[0-9a-f]{2,} (?:[0-9a-f`]{8,} ){2,}.*?(\S+)$")
# The same, over a whole text: it matches the lines ``_FRAME`` matches (``.``, ``\S`` and a
# multi-line ``$`` stop at each ``\n``), so one pass counts them.
_FRAMES = re.compile(_FRAME.pattern, re.MULTILINE)
# A recursion (a stack overflow's thousands of identical frames) shows this many of its frames.
RECURSION_SHOWN = 3


def collapse_recursion(text: str, output_id: str | None) -> str:
    """``text`` with each run of more than ``RECURSION_SHOWN`` + 1 consecutive frames at the same
    call site cut to its first ``RECURSION_SHOWN`` and its last, and how many were left out and
    where they are: kd's own output, one ``read_output`` away."""
    if "\n" not in text or not any(c.isdigit() for c in text[:4096]):
        return text
    if len(_FRAMES.findall(text)) <= RECURSION_SHOWN + 1:
        return text  # too few frames for a run to cut (the common case: no stack, or a short one)
    lines = text.split("\n")
    sites = [(m.group(1) if (m := _FRAME.match(line)) else None) for line in lines]
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i
        while sites[i] is not None and j + 1 < len(lines) and sites[j + 1] == sites[i]:
            j += 1
        run = j - i + 1
        if run > RECURSION_SHOWN + 1:
            where = f": read_output output_id={output_id}" if output_id else ""
            out += lines[i:i + RECURSION_SHOWN]
            out.append(f"[{run - RECURSION_SHOWN - 1} more frames at {sites[i]}{where}]")
            out.append(lines[j])
        else:
            out += lines[i:j + 1]
        i = j + 1
    return "\n".join(out)


def command_text(data: Data, lines: list[str] | None = None, *, raw: bool = True) -> str:
    """The header, ``lines`` (what the raw output lacks), then the raw output unless ``raw`` is
    false (a typed tool whose ``lines`` say it all: the output is one ``read_output`` away); a
    recursion in it cut (``collapse_recursion``)."""
    output = collapse_recursion(tidy(data.get("output", "")), data.get("output_id")) if raw else ""
    body = "\n".join([*(lines or ()), output]).strip("\n")
    return join(header(data, *command_extras(data)), body, event_lines(data))


def fallback_text(data: Data) -> str:
    """A model without a rendering of its own (none should be served): compact JSON."""
    return json.dumps(data, separators=(",", ":"))


# ------------------------------------------------------------------- typed listings
# A listing's text block is its count, then one row per item (``models.InspectResult``): kd's own
# rows take three lines and a blank per process and pad lm's columns, for fields an agent rarely
# asks about; those stay in the raw output, one read_output away.

def process_rows(record: Data) -> list[str]:
    """``!process 0 0``'s rows, one line each (kd's take three and a blank): the fields an agent
    asks about; DirBase, ObjectTable and Peb are in the raw output, one ``read_output`` away."""
    rows = []
    for p in record.get("processes", ()):
        handles = f" handles {p['handle_count']}" if "handle_count" in p else ""
        rows.append(f"{p.get('address', '?')} cid {p.get('cid', '?')} parent {p.get('parent_cid', '?')}{handles} "
                    f"{p.get('image', '?')}")
    return rows


def module_rows(record: Data) -> list[str]:
    """``lm``'s rows without the pdb paths and the column padding."""
    return [f"{m['start']} {m['end']} {m['name']}" + (f" ({m['symbol_status']})" if "symbol_status" in m else "")
            for m in record.get("modules", ())]


def symbol_summary(counts: Data) -> str:
    parts = [f"symbols loaded: {', '.join(counts.get('loaded', [])) or 'none'}"]
    if counts.get("without"):
        parts.append(f"WITHOUT symbols: {', '.join(counts['without'])}")
    if counts.get("deferred"):
        parts.append(f"{counts['deferred']} deferred (load on first use; .reload /f MODULE to know)")
    return "; ".join(parts)


# ------------------------------------------------------- whole text blocks of the session results

def start_text(data: Data, extras: list[str], *first: str) -> str:
    """A start: the header, ``first`` lines (a kind's own summary), the command line, the banner."""
    lines = [*first, f"command line: {data['command_line']}"]
    if "state_file" in data:
        lines.append(f"state file: {data['state_file']}")
    lines += [f"warning: {w}" for w in data.get("warnings", ())]
    return join(header(data, *extras), "\n".join([*lines, data.get("banner", "")]), event_lines(data))


def dump_text(data: Data, extras: list[str]) -> str:
    """A start, with the dump's summary on one line before the banner."""
    d = data.get("dump", {})
    what = ", ".join(str(v) for v in (d.get("os"), d.get("build_lab")) if v)
    if "bugcheck" in d:
        what += f"; bugcheck {d['bugcheck'].get('code')} ({', '.join(d['bugcheck'].get('args', []))})"
    if "exception" in d:
        e = d["exception"]
        what += f"; exception {e.get('code')} {e.get('description', '')} at {e.get('symbol') or e.get('address')}"
    if "modules" in d:
        what += f"; {d['modules']} modules"
    return start_text(data, extras, f"dump: {what.strip('; ')}")


def share_text(data: Data) -> str:
    lines = [f"listening on {data['listener']}; join with:", *data["join"]]
    return join(header(data), "\n".join(lines), event_lines(data))


def summary_line(s: Data) -> str:
    live = "live" if s["live"] else "ended"
    pid = f" pid {s['pid']}" if "pid" in s else ""
    shared = f" shared {s['shared']}" if "shared" in s else ""
    # what it is attached to says the target; the full command line is in structuredContent
    return f"{s['session_id']} {s['state']} {live} {s['kind']}{pid} {s['output_bytes']} B: {s['attached_to']}{shared}"


def sessions_text(data: Data) -> str:
    sessions = data.get("sessions", [])
    lines = [summary_line(s) for s in sessions]
    return "\n".join([f"[{count(len(sessions), 'session')}, at most {data['max_sessions']}]", *lines])


def health_text(data: Data) -> str:
    lines = [f"[{'ok' if data['ok'] else 'not ok'}{' simulated' if data.get('simulated') else ''}]"]
    for d in data["debuggers"]:
        if d["found"]:
            version = f" {d['version']}" if "version" in d else ""
            lines.append(f"{d['name']}: {d.get('path', '')}{version}")
        else:
            lines.append(f"{d['name']}: not found (looked in: {', '.join(d.get('looked_in', [])) or 'nothing'})")
    config = data.get("config_path", "none")
    lines.append(f"config {config}: " + ("ok" if data["config_ok"] else data.get("config_error", "invalid")))
    state = data.get("state_file", "none")
    lines.append(f"state file {state}: " + ("ok" if data["state_file_ok"] else data.get("state_file_error", "invalid")))
    lines += [f"warning: {w}" for w in data.get("state_file_warnings", ())]
    lines += [f"local kernel: {p}" for p in data.get("local_kernel", ())]
    lines += [summary_line(s) for s in data.get("sessions", ())]
    return "\n".join(lines)
