"""docs/conformance.md reports the recorded run (docs/conformance-run.json), and the server as it is.

The conformance suite downloads, so CI does not run it (scripts/conformance.sh); the page's
figures were once written from memory and went stale (issue 31: "5 of 30, 16 tools, no prompts"
while the server had 50 tools and 3 prompts). Now ``CONFORMANCE_RECORD`` writes the run, and this
test holds the page to it: the suite, the date, the commit, the pass counts, each scenario's
verdict in the table, and the tool and prompt counts to the server's own registries (a tool added
since the run fails here until the suite is run again).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kdmcp.server.prompts import PROMPTS
from kdmcp.server.registry import all_tools

ROOT = Path(__file__).resolve().parents[1]
RUN = json.loads((ROOT / "docs" / "conformance-run.json").read_text(encoding="utf-8"))
PAGE = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
LAST = PAGE.split("## Last run\n", 1)[1].split("\n## ", 1)[0]


def test_the_page_names_the_recorded_run() -> None:
    assert f"`@modelcontextprotocol/conformance` {RUN['suite']}, Node {RUN['node']}" in LAST
    assert f"**Date** {RUN['date']}, {RUN['seconds']} s for the {len(RUN['scenarios'])} scenarios" in LAST
    assert f"**kd-mcp** commit `{RUN['commit']}`" in LAST
    active, pending = RUN["active"], RUN["pending"]
    assert f"**Result: {active['passed']} of {active['total']} active scenarios pass**" in LAST
    assert f"of the {pending['total']} pending scenarios, {pending['passed']} pass" in LAST
    assert f"the other {active['total'] - active['passed']} active" in LAST


def test_every_scenario_is_in_the_table_with_its_verdict() -> None:
    rows = [line for line in LAST.splitlines() if line.startswith("| `")]
    for name, scenario in RUN["scenarios"].items():
        (row,) = [row for row in rows if f"`{name}`" in row.split("|")[1]]
        verdict = row.split("|")[2].strip()
        assert verdict.startswith("pass") == scenario["passed"], (name, verdict)


def test_the_counts_are_the_servers() -> None:
    tools = re.search(r"the (\d+) tools", LAST)
    prompts = re.search(r"the (\d+) prompts", LAST)
    assert tools is not None and int(tools.group(1)) == len(all_tools())
    assert prompts is not None and int(prompts.group(1)) == len(PROMPTS)
    for name in PROMPTS:
        assert f"`{name}`" in LAST
