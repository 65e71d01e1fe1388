"""Score the parser on the released evaluation sets (``fixtures/released/``) and print the figures.

The rules are the sets' own (``set1/README.md``, ``set2/CHECKS.md``), implemented apart from
kdmcp in ``tests/parse/released_scorer.py``; this script only hands it kdmcp's two doors.
``tests/parse/test_released.py`` asserts the same figures (>= 99 % per set, no crash).

    python scripts/score_released.py [-v]     # -v: every missed check, with what the record holds
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kdmcp.parse import parse, parse_transcript
from tests.parse.released_scorer import SetScore, score_set1, score_set2


def kdmcp_parse(command: str, output: str) -> dict[str, Any]:
    return parse(command, output).model_dump(mode="json")


def kdmcp_transcript(text: str) -> list[tuple[str | None, dict[str, Any]]]:
    """Each block as (its command, or None for text before the first prompt; its record)."""
    return [
        (block.command if block.prompt_text else None, block.record.model_dump(mode="json"))
        for block in parse_transcript(text)
    ]


def scores() -> list[SetScore]:
    return [score_set1(kdmcp_transcript), score_set2(kdmcp_parse)]


def main(argv: list[str]) -> int:
    for score in scores():
        print(score.line())
        if "-v" in argv:
            for miss in score.misses:
                got = json.dumps(miss.got, default=str)
                print(f"  MISS {miss.file} {miss.key}: want {json.dumps(miss.expected)}\n       got {got[:600]}")
            for crash in score.crashes:
                print(f"  CRASH {crash}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
