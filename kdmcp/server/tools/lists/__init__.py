"""The lists family of tools."""
