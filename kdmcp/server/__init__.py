"""The MCP surface of kd-mcp: tools over the session engine."""

from kdmcp.server.app import KdMcpApp, ServerOptions
from kdmcp.server.tools import KdMcpServer, build_server

__all__ = ["KdMcpApp", "KdMcpServer", "ServerOptions", "build_server"]
