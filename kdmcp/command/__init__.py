"""The one reader of kd/cdb command lines.

The policy (what a line may touch), the engine (whether a line lets the target run) and
the simulator (what kd would do with it) all read command lines through this package, so
they cannot disagree about where a command ends or what runs inside a block.

Pure: no I/O; stdlib and pydantic only.
"""

from kdmcp.command.policy import PROFILE_ALLOWS, CommandClass, Finding, Profile, Verdict, check, classify, launch_flags

__all__ = ["PROFILE_ALLOWS", "CommandClass", "Finding", "Profile", "Verdict", "check", "classify", "launch_flags"]
