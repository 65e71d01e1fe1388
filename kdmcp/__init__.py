"""kd-mcp: drive Microsoft's console debuggers (kd.exe, cdb.exe) from MCP clients."""

__version__ = "0.1.0"
__all__ = ["__version__"]
