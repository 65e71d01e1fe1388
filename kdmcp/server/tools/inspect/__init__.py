"""The inspect family of tools."""
