"""The MCP prompts: the three workflows users start from, each a short recipe naming the tools.

A prompt is a user message a client offers as a slash command or a menu entry
(``prompts/list``, ``prompts/get``): ``kdnet_winrm_loop`` (a live guest beside the WinRM
companion), ``kernel_dump_triage`` and ``user_crash_triage``. Each recipe names the tools it
calls (``Recipe.tools``; a test holds that set equal to the tool names its text mentions, and
each a registered tool), so a client is listed only the recipes it can follow
(``Recipe.visible``): a recipe that sends the model to a tool outside its surface would end in
``policy_denied``.

Arguments arrive as strings (MCP prompt arguments are ``{name: string}``); each recipe's
pydantic model validates and converts them, and a refused value is reported without being
quoted (``validation_problems``). A value goes into the text JSON-quoted, so a path with a
quote or a newline stays one string and cannot add lines to the recipe.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.prompts.base import PromptArgument
from pydantic import AfterValidator, ConfigDict, Field, ValidationError, model_validator

from kdmcp.validation import LazyModel, validation_problems

__all__ = ["PROMPTS", "PromptArgumentError", "Recipe", "served_prompts"]


# "Naming Files, Paths, and Namespaces" (Win32): file names may not contain "characters whose
# integer representations are in the range from 1 through 31" (nor NUL), so a path with a
# control character is refused rather than quoted into the recipe.
def _no_control_character(value: str) -> str:
    if any(ord(c) < 32 for c in value):
        raise ValueError("a path has no control characters")
    return value


FilePath = Annotated[str, Field(min_length=1, max_length=4096), AfterValidator(_no_control_character)]
# A process ID is a DWORD (GetProcessId returns one).
ProcessId = Annotated[int, Field(ge=0, le=0xFFFFFFFF)]


class PromptArgumentError(ValueError):
    """A prompt's arguments were refused: the message names each and says why, never quoting it."""


class _Arguments(LazyModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KdnetLoopArguments(_Arguments):
    state_file: Annotated[
        FilePath | None,
        Field(description="the WinRM companion's state file (default: config, KDMCP_STATE_FILE, the companion's)"),
    ] = None


class KernelDumpArguments(_Arguments):
    path: Annotated[FilePath, Field(description="the kernel dump (MEMORY.DMP, a minidump of the kernel)")]


class UserCrashArguments(_Arguments):
    path: Annotated[FilePath | None, Field(description="a user-mode minidump (.dmp)")] = None
    pid: Annotated[ProcessId | None, Field(description="or the ID of a live process to attach to")] = None

    @model_validator(mode="after")
    def _one_target(self) -> UserCrashArguments:
        if self.path is not None and self.pid is not None:
            raise ValueError("give path or pid, not both")
        return self


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _kdnet_winrm_loop(args: KdnetLoopArguments) -> str:
    start = (
        f"start_from_state(state_file={_quoted(args.state_file)})"
        if args.state_file is not None
        else "start_from_state() (the state file from the config, KDMCP_STATE_FILE or the companion's default)"
    )
    return f"""\
Debug the Windows guest over KDNET beside the WinRM companion. While the kernel is broken in, the \
guest is frozen and WinRM cannot answer: break in to look, then let it run.
1. {start}: kd connects; it returns once the guest runs.
2. break_in(): freeze the guest.
3. Look: registers(), backtrace(), modules(), processes(), or kd_command(command="...") for any \
other kd command, one per call.
4. resume_for_winrm(): the guest runs again; then retry the WinRM call.
5. break_in() again when you need the debugger; repeat 3-5.
6. stop_kd() at the end: it resumes the guest and quits kd.
"""


def _kernel_dump_triage(args: KernelDumpArguments) -> str:
    path = _quoted(args.path)
    return f"""\
Triage the kernel crash dump {path} with kd. A dump only reads: nothing runs.
1. open_dump(path={path}): the result says kernel_dump, the OS build and the bugcheck.
2. analyze(): !analyze -v: bugcheck code and arguments, faulting module, bucket, stack.
3. backtrace(): the faulting thread's stack.
4. modules(pattern="X", verbose=true) for the faulting driver X (lmv m X): image path, \
timestamp, version.
5. An IRP among the bugcheck arguments or on the stack: irp(address=ADDRESS), its IOCTL decoded; \
device_object(address=ADDRESS), driver_object(name="X"); pool(address=ADDRESS) for a pool block.
6. kd_command(command="...") for the rest, one command per call: ".bugcheck", "!thread".
7. stop_kd(): closes the dump.
"""


def _user_crash_triage(args: UserCrashArguments) -> str:
    # A live process is stopped where attaching broke in, not on its exception; a dump holds the
    # exception of interest as its last event (".exr -1", ".ecxr" read it).
    if args.path is not None:
        opened = f"open_dump(path={_quoted(args.path)}): the result says user_dump and the exception."
    elif args.pid is not None:
        opened = (
            f"attach_process(pid={args.pid}); then continue_go() and wait_for_stop() until it stops on the "
            "exception (unless it already stopped in it)."
        )
    else:
        opened = (
            "open_dump(path=...) for a minidump; attach_process(pid=...) for a live process; "
            'launch(command_line="...") to start one (off under the standard policy: needs policy full '
            "or the config switch allow_launch). A live process: continue_go(), then wait_for_stop() until it stops on "
            "the exception."
        )
    return f"""\
Triage a user-mode crash with cdb.
1. {opened}
2. exception(): the exception record (.exr -1), the faulting context (.ecxr) and its stack; \
decode_error(code=...) says what its code means.
3. registers(), backtrace(): the faulting thread's registers and stack.
4. analyze(): !analyze -v: the exception, faulting module, bucket.
5. kd_command(command="~*k"): every thread's stack.
6. stop_kd(): closes a dump, detaches from an attached process, terminates a launched one.
"""


@dataclass(frozen=True)
class Recipe:
    """One prompt: what clients list, the arguments it takes, the tools its text names."""

    name: str
    title: str
    description: str
    arguments: type[_Arguments]
    text: Callable[[Any], str]
    tools: frozenset[str]

    def validate(self, arguments: Mapping[str, str] | None) -> _Arguments:
        """The arguments converted, or ``PromptArgumentError`` naming each refused one."""
        try:
            return self.arguments.model_validate(dict(arguments or {}))
        except ValidationError as exc:
            problems = "; ".join(validation_problems(exc, top="(arguments)"))
            raise PromptArgumentError(f"invalid arguments for prompt {self.name}: {problems}") from None

    def render(self, arguments: Mapping[str, str] | None) -> str:
        return self.text(self.validate(arguments))

    def visible(self, surface: Collection[str]) -> bool:
        """Listed to a client only if it may call every tool the recipe names."""
        return self.tools <= frozenset(surface)

    def served(self) -> Prompt:
        """The SDK's prompt object: arguments from the model's fields, rendering through ``render``."""

        async def render(**arguments: str) -> str:
            return self.render(arguments)

        fields = self.arguments.model_fields
        return Prompt(
            name=self.name,
            title=self.title,
            description=self.description,
            fn=render,
            context_kwarg=None,
            arguments=[
                PromptArgument(name=name, description=field.description, required=field.is_required())
                for name, field in fields.items()
            ],
        )


PROMPTS: dict[str, Recipe] = {
    recipe.name: recipe
    for recipe in (
        Recipe(
            "kdnet_winrm_loop",
            "KDNET/WinRM loop",
            "Debug a live guest over KDNET while WinRM drives it: break in, look, resume so WinRM answers.",
            KdnetLoopArguments,
            _kdnet_winrm_loop,
            frozenset(
                {
                    "start_from_state",
                    "break_in",
                    "kd_command",
                    "registers",
                    "backtrace",
                    "modules",
                    "processes",
                    "resume_for_winrm",
                    "stop_kd",
                }
            ),
        ),
        Recipe(
            "kernel_dump_triage",
            "Kernel crash-dump triage",
            "Triage a kernel crash dump: the bugcheck, the faulting driver, its stack.",
            KernelDumpArguments,
            _kernel_dump_triage,
            frozenset({"open_dump", "analyze", "backtrace", "modules", "irp", "device_object", "driver_object", "pool",
                       "kd_command", "stop_kd"}),
        ),
        Recipe(
            "user_crash_triage",
            "User-mode crash triage",
            "Triage a user-mode crash: a minidump, or a live process attached or launched under cdb.",
            UserCrashArguments,
            _user_crash_triage,
            frozenset(
                {
                    "open_dump",
                    "attach_process",
                    "launch",
                    "continue_go",
                    "wait_for_stop",
                    "exception",
                    "decode_error",
                    "kd_command",
                    "registers",
                    "backtrace",
                    "analyze",
                    "stop_kd",
                }
            ),
        ),
    )
}


def served_prompts() -> list[Prompt]:
    return [recipe.served() for recipe in PROMPTS.values()]
