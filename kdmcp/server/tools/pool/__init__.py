"""The pool family of tools."""
