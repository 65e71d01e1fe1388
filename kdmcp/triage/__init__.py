"""Fleet triage: many crash dumps read with a fixed read set, bucketed, stored as JSONL (docs/triage.md).

Between the server (the ``triage_dumps`` tool) and the cli (``kd-mcp triage``), which share
``run.triage_run``; below them, the engine starts the debuggers and parse reads their answers.
"""
