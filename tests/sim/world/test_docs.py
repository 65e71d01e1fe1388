"""docs/simulator.md's table of what the world answers is the command table: every registered
command is in it, and it names nothing the world does not answer (one list, checked)."""

from __future__ import annotations

import re
from pathlib import Path

import kdmcp.sim.world.commands  # noqa: F401  (fills the table)
from kdmcp.sim.world.registry import COMMANDS

DOC = Path(__file__).resolve().parents[3] / "docs" / "simulator.md"


def _documented() -> set[str]:
    text = DOC.read_text("utf-8")
    section = text.split("### What the world answers", 1)[1].split("\n\n`~Ns`", 1)[0]
    names: set[str] = set()
    for row in section.splitlines():
        if row.startswith("| `"):
            first = row.split(" | ", 1)[0]
            # a table cell spells a pipe "\|" (GitHub's tables), the command is "|"
            names |= {n.replace("\\|", "|") for n in re.findall(r"`([^`]+)`", first)}
    return names


def test_the_doc_lists_every_command_the_world_answers_and_no_other() -> None:
    documented = _documented()
    # option spellings the table shows beside a command are read by that command (lmv is lm v)
    spelled = {"kb", "kv", "kp", "kn", "kL", "kc", "lmv", "lm m", "lmvm", "…"}
    assert set(COMMANDS) - documented == set()
    assert documented - spelled - set(COMMANDS) == set()
