"""The MCP surface of kd-mcp: tools over the session engine (module map: docs/architecture.md).

Importing the package registers every tool (``kdmcp.server.tools``), so whatever reads the
registry — the listener, the CLI's help, a test — sees all of them.
"""

from kdmcp.server.app import KdMcpApp
from kdmcp.server.mcp_server import KdMcpServer
from kdmcp.server.options import ServerOptions
from kdmcp.server.tools import build_server

__all__ = ["KdMcpApp", "KdMcpServer", "ServerOptions", "build_server"]
