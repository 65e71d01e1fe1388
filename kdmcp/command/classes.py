"""What a command can touch (its class) and what it does to the target's run state (its effect).

Both are answers of the one reader (``kdmcp.command``): the policy allows or denies by class,
the engine chooses marker or no marker by effect, and the simulator is tested to behave as
the effect says. One list each, here; help texts and docs are checked against them.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Literal

__all__ = ["PROFILES", "PROFILE_ALLOWS", "SEVERITY", "CommandClass", "Profile", "RunEffect", "strongest"]


class CommandClass(str, Enum):
    """What a command can do; ``unknown`` means the reader does not understand it."""

    READ = "read"
    MEMORY_WRITE = "memory_write"
    EXECUTION = "execution"
    HOST_EXEC = "host_exec"
    CODE_LOAD = "code_load"
    FILE_WRITE = "file_write"
    HOST_FILE_READ = "host_file_read"
    NETWORK_PATH = "network_path"
    SETTINGS_CHANGE = "settings_change"
    OUTPUT_CONTROL = "output_control"
    TARGET_DESTRUCTIVE = "target_destructive"
    SESSION_ENDING = "session_ending"
    UNKNOWN = "unknown"


class RunEffect(str, Enum):
    """What a command line does to the target, as the engine must treat it.

    ``immediate``: kd returns to its prompt and reads the next input line (so the engine's
    ``.echo`` marker completes it). ``resumes``: the target may run; kd reads no input until
    the next break, so no marker is sent and the session's state confirms the run.
    ``reboots``: the target restarts. ``ends``: the debugger quits.
    """

    IMMEDIATE = "immediate"
    RESUMES = "resumes"
    REBOOTS = "reboots"
    ENDS = "ends"


_EFFECT_ORDER = (RunEffect.IMMEDIATE, RunEffect.RESUMES, RunEffect.REBOOTS, RunEffect.ENDS)


def strongest(effects: Iterable[RunEffect]) -> RunEffect:
    """The strongest of ``effects``: ends > reboots > resumes > immediate."""
    best = RunEffect.IMMEDIATE
    for effect in effects:
        if _EFFECT_ORDER.index(effect) > _EFFECT_ORDER.index(best):
            best = effect
    return best


Profile = Literal["read_only", "standard", "full"]
PROFILES: tuple[Profile, ...] = ("read_only", "standard", "full")

_C = CommandClass

# What each profile lets through. "standard" is for hands-on debugging of the guest: it may
# write guest memory, run and even crash the guest, but never touch the host (programs,
# code, files written or read, network paths), change debugger settings, blind the engine's
# output, nor end the session.
PROFILE_ALLOWS: dict[Profile, frozenset[CommandClass]] = {
    "read_only": frozenset({_C.READ}),
    "standard": frozenset({_C.READ, _C.MEMORY_WRITE, _C.EXECUTION, _C.TARGET_DESTRUCTIVE}),
    "full": frozenset(CommandClass),
}

# Most dangerous first: when several findings are denied, the verdict names the worst.
SEVERITY: tuple[CommandClass, ...] = (
    _C.HOST_EXEC,
    _C.CODE_LOAD,
    _C.NETWORK_PATH,
    _C.FILE_WRITE,
    _C.HOST_FILE_READ,
    _C.SETTINGS_CHANGE,
    _C.OUTPUT_CONTROL,
    _C.TARGET_DESTRUCTIVE,
    _C.SESSION_ENDING,
    _C.UNKNOWN,
    _C.MEMORY_WRITE,
    _C.EXECUTION,
    _C.READ,
)
