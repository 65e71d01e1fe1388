"""Summarise a conformance run (``scripts/conformance.sh``) and record it for the docs.

    python scripts/conformance_summary.py RESULTS_DIR --pending "a b" [--record FILE] [--meta JSON] SCENARIO...

Prints one line per scenario (PASS/FAIL, pending marked) with every check that did not succeed,
then ``active scenarios passed: N of M``; exits 0 only when every active scenario passed. With
``--record``, writes the run as JSON (suite version, node, commit, date, duration, and per
scenario its suite, verdict and failed checks): ``docs/conformance-run.json`` is that file for the
run docs/conformance.md reports, and tests/test_conformance_doc.py holds the page to it, so the
page's figures are a run's, not a memory of one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

OK = ("SUCCESS", "WARNING", "INFO")  # a check that did not fail


def summarise(out: Path, pending: set[str], scenarios: list[str]) -> dict[str, Any]:
    record: dict[str, Any] = {"scenarios": {}}
    for name in scenarios:
        files = sorted((out / name).glob("*/checks.json"))
        checks = json.loads(files[-1].read_text(encoding="utf-8")) if files else []
        ok = bool(checks) and all(c.get("status") in OK for c in checks)
        record["scenarios"][name] = {
            "suite": "pending" if name in pending else "active",
            "passed": ok,
            "checks": [{"id": c.get("id"), "status": c.get("status"),
                        "why": (c.get("errorMessage") or c.get("description") or "")[:240]}
                       for c in checks if c.get("status") != "SUCCESS"],
        }
    for suite in ("active", "pending"):
        mine = [s for s in record["scenarios"].values() if s["suite"] == suite]
        record[suite] = {"passed": sum(s["passed"] for s in mine), "total": len(mine)}
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("results", type=Path)
    parser.add_argument("--pending", default="", help="the pending suite's scenario names, space-separated")
    parser.add_argument("--record", type=Path, help="write the run as JSON here")
    parser.add_argument("--meta", default="{}", help="JSON: suite, node, commit, date, seconds")
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args(argv)
    record = summarise(args.results, set(args.pending.split()), args.scenarios)
    for name, scenario in record["scenarios"].items():
        print(f"{'PASS' if scenario['passed'] else 'FAIL'}  {name}"
              f"{'  (pending)' if scenario['suite'] == 'pending' else ''}")
        if not scenario["checks"] and not scenario["passed"]:
            print(f"      no checks recorded: see {args.results / (name + '.log')}")
        for check in scenario["checks"]:
            print(f"      {check['status']} {check['id']}: {check['why']}")
    active, pending = record["active"], record["pending"]
    print(f"\nactive scenarios passed: {active['passed']} of {active['total']}; "
          f"pending: {pending['passed']} of {pending['total']}")
    if args.record is not None:
        args.record.write_text(json.dumps({**json.loads(args.meta), **record}, indent=1) + "\n", encoding="utf-8")
    return 0 if active["passed"] == active["total"] else 1


if __name__ == "__main__":
    sys.exit(main())
