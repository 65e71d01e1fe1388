"""``kdmcp.parse.command_list``: a command line cut into the commands kd runs (the command reader's view)."""

from __future__ import annotations

from kdmcp.parse.command_list import split_command_list


def test_split_respects_quotes_and_blocks() -> None:
    assert split_command_list('bp x "k; g"; .block { r; k }; lm') == ['bp x "k; g"', ".block { r; k }", "lm"]
