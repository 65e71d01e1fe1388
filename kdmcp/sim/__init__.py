"""A simulated kd.exe / cdb.exe: the debugger every test, demo and benchmark runs against.

Run as ``python -m kdmcp.sim kd ARGS...`` or ``python -m kdmcp.sim cdb ARGS...`` with the real
debuggers' command lines. Behaviour comes from a scenario (``--scenario FILE``, YAML), else
from the built-in default target.
"""
