"""The kobjects family of tools."""
