"""The output family of tools."""
