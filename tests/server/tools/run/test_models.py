"""Fast tier: the run-control results' text lines."""

from __future__ import annotations

from kdmcp.server.tools.run.models import ClearResult, RunToResult, SetBreakpointResult, StepResult, WaitResult

BASE = {"session_id": "s1", "state": "broken", "command": "", "output": "", "output_id": "s1:0-0",
        "output_bytes": 0, "elapsed_ms": 1.0}


def test_text_lines_say_what_the_raw_output_does_not():
    assert SetBreakpointResult.text_lines({**BASE, "breakpoint": {"id": 1, "unresolved": True, "symbol": "d!E"}}) == [
        "breakpoint #1 deferred: d!E (set when its module loads)"]
    loaded = {**BASE, "breakpoint": {"id": 0, "unresolved": True, "symbol": "m!F"}, "warning": "m is loaded"}
    assert SetBreakpointResult.text_lines(loaded) == ["breakpoint #0 deferred: m!F", "warning: m is loaded"]
    assert ClearResult.text_lines({**BASE, "cleared": [0]}) == ["cleared 1 breakpoint (#0); none remaining"]
    assert ClearResult.text_lines({**BASE, "not_found": [4], "remaining": [{"id": 2}]}) == [
        "cleared 0 breakpoints; 1 remaining", "not set: #4"]
    running = {**BASE, "state": "running", "waited_s": 0.2}
    assert WaitResult.text_lines(running)[0].startswith("still running after 0.2 s (not an error")
    assert StepResult.text_lines({**BASE, "state": "running"})[0].startswith("still running")
    hit = {**BASE, "outcome": "hit", "target": "0x1", "location": {"ip": "0x1", "symbol": "nt!X", "processor": 2}}
    assert RunToResult.text_lines(hit) == ["hit 0x1", "at nt!X (processor 2)"]
    elsewhere = {**hit, "outcome": "stopped_elsewhere", "stop": {"reason": "breakpoint", "breakpoint": 3}}
    assert RunToResult.text_lines(elsewhere)[1] == "stopped: breakpoint 3"
