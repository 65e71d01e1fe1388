"""``python -m kdmcp``: the same as the ``kd-mcp`` command."""

from kdmcp.cli import main

raise SystemExit(main())
