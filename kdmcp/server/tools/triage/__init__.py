"""The triage family: ``triage_dumps``, many dumps bucketed in one call (kdmcp/triage, docs/triage.md)."""
