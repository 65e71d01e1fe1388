"""The run family of tools."""
