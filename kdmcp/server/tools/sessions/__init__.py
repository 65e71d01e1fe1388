"""The sessions family of tools."""
