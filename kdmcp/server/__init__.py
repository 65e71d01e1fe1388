"""The MCP surface of kd-mcp: tools over the session engine (module map: docs/architecture.md).

The package's door names what others use, imported when first asked for (PEP 562): a start
imports only what answering ``initialize`` and ``tools/list`` needs. The tool families register
when the registry is first read (``registry.load_families``, through the loader set here: this
door may import ``kdmcp.server.tools``, the core may not), so whatever reads the registry — the
listener, the CLI's help, a test — sees all of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kdmcp.server.registry import set_family_loader

if TYPE_CHECKING:
    from kdmcp.server.app import KdMcpApp
    from kdmcp.server.call import build_server
    from kdmcp.server.mcp_server import KdMcpServer
    from kdmcp.server.options import ServerOptions

__all__ = ["KdMcpApp", "KdMcpServer", "ServerOptions", "build_server"]

_HOMES = {"KdMcpApp": "kdmcp.server.app", "KdMcpServer": "kdmcp.server.mcp_server",
          "ServerOptions": "kdmcp.server.options", "build_server": "kdmcp.server.call"}


def _load_families() -> None:
    import kdmcp.server.tools  # noqa: F401  (registers every tool)


set_family_loader(_load_families)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'kdmcp.server' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
