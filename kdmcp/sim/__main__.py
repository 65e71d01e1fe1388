"""Entry point for ``python -m kdmcp.sim``."""

from kdmcp.sim.cli import main

raise SystemExit(main())
