"""The batch family of tools."""
