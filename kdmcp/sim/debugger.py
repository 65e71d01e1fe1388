"""The simulated debugger at its prompt: the interpreter's host and what each command does.

:class:`SimDebugger` is the whole simulated kd.exe / cdb.exe: its console
(:mod:`~kdmcp.sim.console_io`), its target's run states (:mod:`~kdmcp.sim.target`), and here
what it does with a line at the prompt -- the reader's tree runs on the
:class:`~kdmcp.sim.interpreter.Interpreter`, which calls :meth:`SimDebugger.execute` for each
command: built-in commands (``.echo``, ``.outmask``, ``r $t0=``, ``~Ns``, ``.effmach``, ``q``,
``g``), then the scenario's canned responses, then kd's syntax error.

The world (:mod:`kdmcp.sim.world`) and the minidump readers (:mod:`~kdmcp.sim.minidump_reports`,
:mod:`~kdmcp.sim.minidump_context`) are imported inside the methods that use them, for start-up
alone: a process that imports this module is up in about 85 ms, the world's modules (iced-x86,
the type layouts, the command table) take some 150 ms more, and a start needs none of it until
a command asks -- a phrasebook scenario or a real minidump never loads the world at all
(``python -X importtime -c "import kdmcp.sim.debugger, kdmcp.sim.world.commands"`` shows the
split). None of them imports this module or :mod:`~kdmcp.sim.target` back.
"""

from __future__ import annotations

import os
import re
import select
import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kdmcp.command.classes import RunEffect
from kdmcp.command.lexing import strip_selectors
from kdmcp.command.tables import leaf_effect
from kdmcp.sim import bulk, texts
from kdmcp.sim.console_io import DEFAULT_OUTMASK, PROMPT_OUTPUT, WRITE_CHUNK, _Exit
from kdmcp.sim.interpreter import EvalError, Interpreter, evaluate
from kdmcp.sim.minidump_target import MemoryView
from kdmcp.sim.options import SimOptions
from kdmcp.sim.scenario import Response, Scenario
from kdmcp.sim.target import BREAK_THREAD, TargetRun

if TYPE_CHECKING:
    from kdmcp.sim.world.machine import World

__all__ = ["COMMAND_LINE_TOKEN", "SimDebugger"]

# "gu" / "gc" stop again at once here (the simulated function returns at once).
_STEP_OUT_RE = re.compile(r"g[uc](?:\s.*)?", re.IGNORECASE | re.DOTALL)
# g (Go), kernel syntax "g[a] [= StartAddress] [BreakAddress ... [; BreakCommands]]" (the start
# address is accepted and not modelled: the world's events run from where they run)
_GO_RE = re.compile(r"ga?(?:\s*=\s*(?P<start>\S+))?(?P<targets>(?:\s+\S+)*)\s*", re.IGNORECASE)
# "r $t0 = 5": a temporary register (the simulator's only registers that expressions read).
_TEMP_ASSIGN_RE = re.compile(r"r\s+@?\$t(?P<index>1[0-9]|[0-9])\s*=\s*(?P<value>.+)", re.IGNORECASE)
# ".outmask[-] [/l] Expression", ".outmask /a", ".outmask /d" (.outmask (Control Output Mask)).
_OUTMASK_RE = re.compile(r"\.outmask(?P<minus>-)?(?:\s+(?P<args>.*))?", re.IGNORECASE)
_PROCESSOR_SWITCH_RE = re.compile(r"~(\d+)s", re.IGNORECASE)
_EFFMACH_RE = re.compile(r"\.effmach(?:\s+(\S+))?", re.IGNORECASE)
_QUIT_RE = re.compile(r"q[qd]?", re.IGNORECASE)
_LOG_RE = re.compile(r"\.(?P<name>logopen|logappend|logclose)(?:\s+(?P<args>.*))?", re.IGNORECASE | re.DOTALL)
_SERVER_RE = re.compile(r"\.(?P<name>servers|server|endsrv)(?:\s+(?P<args>.*))?", re.IGNORECASE | re.DOTALL)
# In canned text, replaced by the debugger's own command line (as ``version`` prints it).
COMMAND_LINE_TOKEN = "@@COMMAND_LINE@@"  # noqa: S105 (a placeholder, not a secret)


class SimDebugger(TargetRun):
    """Plays one scenario on stdin/stdout the way kd.exe or cdb.exe would."""

    def __init__(self, opts: SimOptions, scenario: Scenario, in_fd: int = 0, out_fd: int = 1) -> None:
        super().__init__(opts, scenario, in_fd, out_fd)
        self.machine: str | None = None
        self.last_command = ""
        self.temps: dict[int, int] = {}
        self.interpreter = Interpreter(self)
        self._world: World | None = None

    # ------------------------------------------------- the interpreter's host

    def interrupted(self) -> bool:
        return self.take_interrupt()

    def thread_ids(self) -> list[int]:
        if self.dump is not None:
            return [t.index for t in self.dump.threads]
        return list(range(BREAK_THREAD + 1))  # the canned process's threads

    def prompt_text(self) -> str:
        if self.opts.mode == "local":
            return "lkd> "
        mach = f":{self.machine}" if self.machine else ""
        if self.kernel:
            if self.sc.target.processors > 1:
                return f"{self.cpu}: kd{mach}> "
            return f"kd{mach}> "
        return f"0:{self.thread:03d}{mach}> "

    # ------------------------------------------------------------ commands

    def prompt_and_execute(self) -> None:
        if self.pending is not None:
            rest, self.pending = self.pending, None
            self._drive(rest)
            if self.state != "broken":
                return
        if self.outmask & PROMPT_OUTPUT:
            self.out_prompt(self.prompt_text())
        if self.opts.initial_commands is not None:
            line = self.opts.initial_commands
            self.opts.initial_commands = None
            self.out(line + "\n")
        else:
            maybe = self.read_line()
            if maybe is None:
                raise _Exit(0)  # end of input: the debugger quits
            line = maybe
        if not line.strip():
            if not self.last_command:
                return
            line = self.last_command  # kd repeats the last command on an empty line
        self.last_command = line
        self._drive(self.interpreter.run_line(line))

    def _drive(self, steps: Iterator[None]) -> None:
        """Run a line's commands until the line ends or one lets the target run (the rest waits)."""
        for _ in steps:
            if self.state != "broken":
                self.pending = steps
                return

    def execute(self, command: str) -> None:
        self._in_command = True
        self.command_failed = False
        try:
            self._execute(command)
        finally:
            self._in_command = False

    def _execute(self, command: str) -> None:
        if not command:
            return
        low = command.lower()
        if m := _OUTMASK_RE.fullmatch(command):
            self.set_outmask(bool(m.group("minus")), (m.group("args") or "").strip())
            return
        if m := _TEMP_ASSIGN_RE.fullmatch(command):
            try:
                self.temps[int(m.group("index"))] = evaluate(m.group("value"), self.temps)
            except EvalError as exc:
                self.out(f"Couldn't resolve error at '{exc}'\n")
            return
        if low.startswith(".echo"):
            # ".echo String" / '.echo "String"': the quotes are not printed (.echo (Echo Comment)).
            arg = command[5:].strip()
            if len(arg) >= 2 and arg[0] == arg[-1] == '"':
                arg = arg[1:-1]
            self.out(arg + "\n")
            return
        if low.startswith(".printf"):  # no line end of its own: the prompt may follow on the line
            self.out(self._printf(command))
            return
        if m := _SERVER_RE.fullmatch(command):  # debugging servers: kdmcp/sim/remoting.py
            self.remote_command(m.group("name").lower(), (m.group("args") or "").strip())
            return
        if _QUIT_RE.fullmatch(command):
            if self._line_origin is not None and low != "qq":
                # typed at a remote client: dbgeng's ErrOut for q and qd there (its source,
                # stored-index file id 8075283570); "During remote debugging, the q command has
                # no effect, but the qq command ends the debugging server" (q, qq (Quit))
                self.out("Exit a remote client with Ctrl-b<enter>.\nIf you really want the server to quit use 'qq'.\n")
                return
            self.target_note(f"quit {command.lower()}")  # qd detaches: the process lives on
            self.out("quit:\n")
            raise _Exit(0)
        if m := _LOG_RE.fullmatch(command):  # .logopen / .logappend / .logclose: session_log.py
            self.out(self.log.command(m.group("name").lower(), m.group("args") or "", self.pid))
            return
        if self.kernel and (m := _PROCESSOR_SWITCH_RE.fullmatch(command)):
            cpu = int(m.group(1))
            if cpu >= self.sc.target.processors:
                self.out(f"{cpu} is not a valid processor number\n")
            else:
                self.cpu = cpu
                self.out(self._processor_switch(cpu))
            return
        if m := _EFFMACH_RE.fullmatch(command):
            arg = (m.group(1) or "").lower()
            if arg in ("x86", "amd64", "arm64", "arm"):
                self.machine = None if arg == self.sc.target.arch.replace("x64", "amd64") else arg
            elif arg in (".", "#"):
                self.machine = None
            name = {"x86": "x86 compatible (x86)", "arm64": "ARM 64-bit (AArch64) (arm64)"}.get(
                self.machine or "", "x64 (AMD64)")
            self.out(f"Effective machine: {name}\n")
            return
        if self._exited() and leaf_effect(command) is RunEffect.RESUMES:
            # the process has ended: nothing can run (user_program.py)
            self.out(f"       ^ No runnable debuggees error in '{command}'\n")
            return
        if self.dump is not None and (answer := self._from_dump(command)) is not None:
            self.out(answer)
            return
        if self.analyze_reload_pending and low.startswith("!analyze"):
            self.analyze_reload_pending = False  # the first analysis after a live bugcheck reloads
            self.out(texts.analyze_reload(self.sc))
        response = self.sc.response_for(command)
        if response is not None:
            self.respond(command, response)
            return
        if (answer := self._from_world(command)) is not None:
            # version names the debugger's own command line, as a canned response would
            self.out(answer.replace(COMMAND_LINE_TOKEN, self.opts.command_line_echo))
            return
        if self.bugchecked and leaf_effect(command) is RunEffect.RESUMES:
            # a machine in a bugcheck cannot go on: kd breaks again at once (texts.bugcheck_again)
            self.out(texts.bugcheck_again(self.sc))
            return
        if self.kernel and self.has_world() and strip_selectors(command).lower() == "gc":
            # gc "resumes execution ... in the same fashion that was used to hit the breakpoint"
            # (gc (Go from Conditional Breakpoint)): after g, as g; a breakpoint's "...; gc" goes on
            self.go()
            return
        if _STEP_OUT_RE.fullmatch(strip_selectors(command)):
            self.out(texts.break_location(self.sc))
            return
        if leaf_effect(command) is RunEffect.RESUMES and strip_selectors(command)[:1].lower() == "g":
            if self.opts.mode in ("dump", "local"):
                self.out("No runnable debuggees error in 'g'\n" if self.opts.mode == "dump"
                         else "Go is not supported in local kernel debugging\n")
                return
            if not self._go_targets(strip_selectors(command)):
                return
            self.go()
            return
        if low == ".reboot" and self.kernel and self.opts.mode == "kdnet":
            self.reboot()
            return
        if low == ".crash" and self.kernel and self.opts.mode == "kdnet":
            self.bugcheck_stop(0xE2, [0, 0, 0, 0], None)  # MANUALLY_INITIATED_CRASH
            return
        self.out(texts.syntax_error(command))

    def _exited(self) -> bool:
        """Whether cdb's process has ended (user_program.py): then nothing can run."""
        if not self.user_world():
            return False
        from kdmcp.sim.world.user import user_state

        state = user_state(self.world)
        return state is not None and state.exited

    def _printf(self, command: str) -> str:
        """``.printf``'s text (kdmcp/sim/printf.py), or kd's error for the line."""
        from kdmcp.sim.printf import PrintfError, printf

        def value(expression: str) -> int:
            if self.has_world():
                from kdmcp.sim.world.symbols import ExprError

                try:
                    return self.world.evaluate(expression)
                except ExprError as exc:
                    raise EvalError(str(exc)) from None
            return evaluate(expression, self.temps)

        try:
            return printf(command, value)
        except PrintfError:
            return texts.syntax_error(command)
        except EvalError as exc:
            return f"Couldn't resolve error at '{exc}'\n"

    def _go_targets(self, command: str) -> bool:
        """``g [= StartAddress] [BreakAddress ...]`` on the kernel world: the run stops where an
        event reaches a BreakAddress (activity.go_to); ``False``: an address did not resolve
        (kd's "Couldn't resolve error at", and the target stays where it is)."""
        m = _GO_RE.fullmatch(command)
        # (the user world's process stops there too: user_activity reads the same go_to list)
        if m is None or not self.has_world() or not m.group("targets").strip():
            return True
        from kdmcp.sim.world import activity
        from kdmcp.sim.world.symbols import ExprError

        try:
            activity.go_to(self.world, m.group("targets").split()[:10])  # "Up to ten break addresses"
        except ExprError as exc:
            self.out(f"Couldn't resolve error at '{exc}'\n")
            return False
        return True

    @property
    def world(self) -> World:
        """The machine behind the prompt, built on first use (start-up stays fast: building
        the world and loading the disassembler take longer than the banner does)."""
        if self._world is None:
            import kdmcp.sim.world.commands  # noqa: F401  (the command table, with the world)
            from kdmcp.sim.world.build import build
            from kdmcp.sim.world.user import build_user

            if self.kernel:
                self._world = build(self.sc.world.seed, self.sc.target.processors)
            else:
                user = build_user(self.sc.world.seed, self.pid, self.opts.command_line or "")
                user.user.program = self.sc.world.program
                self._world = user
            self._world.temps = self.temps
        return self._world

    def dump_location(self) -> str | None:
        """``kd -z`` on a kernel dump: the world stopped in the D1 bugcheck myfault causes (the
        scenario !analyze -v explains), and where processor 0 is."""
        if not self.has_world():
            return None
        from kdmcp.sim.world.cmd_cpu import processor_switch_text
        from kdmcp.sim.world.cmd_report import crash

        crash(self.world)
        self.cpu = self.world.cpu
        return processor_switch_text(self.world, self.world.cpu)

    def world_bugcheck(self, code: int, args: list[int], cpu: int) -> None:
        if not (self.kernel and self.has_world()):
            return
        if code == 0xD1:  # the world's own bug: myfault's read at DISPATCH_LEVEL
            from kdmcp.sim.world.cmd_report import crash

            crash(self.world, cpu, live=True)
        else:
            from kdmcp.sim.world.cmd_bugcheck import set_bugcheck

            self.world.cpu = cpu % len(self.world.processors)
            set_bugcheck(self.world, code, tuple(args))

    def _processor_switch(self, cpu: int) -> str:
        """``~Ns``: the world's processor N becomes current; kd shows where its thread is."""
        if not self.has_world():
            return texts.processor_switch(self.sc, cpu)
        from kdmcp.sim.world.cmd_cpu import processor_switch_text

        self.world.cpu = cpu
        self.world.context_thread = self.world.context_process = None  # kd drops .thread/.process
        return processor_switch_text(self.world, cpu)

    def _from_world(self, command: str) -> str | None:
        """What the world answers (``None``: the world does not take this command)."""
        if not self.has_world():
            return None
        from kdmcp.sim.world.commands import answer

        text = answer(self.world, command, kernel=self.kernel)
        if not self.kernel and text is not None:
            from kdmcp.sim.world.cmd_user import current_index

            self.thread = current_index(self.world)  # ~Ns: the prompt names the current thread
        return text

    def _from_dump(self, command: str) -> str | None:
        """What a real minidump answers (``lm``, ``~``, ``|``, ``.exr -1``, ``db``/``dd``/``dq``/``dp``);
        ``None``: not from the dump."""
        assert self.dump is not None
        words = command.split()
        if words == ["lm"]:
            return self.dump.lm()
        if words == ["~"]:
            return self.dump.thread_list(self.thread)
        if words == [".exr", "-1"]:
            return self.dump.exception_record()
        if words == ["|"]:
            return self.dump.process_list()
        from kdmcp.sim import minidump_reports  # vertarget, version, .lastevent, !analyze -v
        from kdmcp.sim.minidump_context import DumpContexts  # r, ~Ns, .ecxr, k (iced-x86 decodes)

        contexts = DumpContexts(self.dump)
        if (report := minidump_reports.answer(self.dump, contexts, command, self.thread, self.sc)) is not None:
            return report.replace(COMMAND_LINE_TOKEN, self.opts.command_line_echo)
        if (answer := contexts.answer(command, self.thread)) is not None:
            text, self.thread = answer
            return text
        return MemoryView(self.dump, contexts.register_values(self.thread)).display(command)

    def remote_command(self, name: str, args: str) -> None:
        """``.server Options``, ``.servers``, ``.endsrv ServerID``."""
        if name == "servers":
            self.out(self.remoting.listing())
        elif name == "endsrv":
            self.out(self.remoting.end(args))
        elif not args:
            self.out("Usage: .server tcp:port=<Socket>  OR  .server npipe:pipe=<PipeName>\n")
        else:
            self.start_server(args)

    def set_outmask(self, minus: bool, args: str) -> None:
        """``.outmask``: add (or with ``-`` remove) mask bits; ``/a`` all, ``/d`` the default."""
        words = [w for w in args.split() if w.lower() != "/l"]
        if words and words[0].lower() == "/a":
            self.outmask = 0xFFFFFFFF
        elif words and words[0].lower() == "/d":
            self.outmask = DEFAULT_OUTMASK
        elif words:
            try:
                bits = evaluate(" ".join(words), self.temps) & 0xFFFFFFFF
            except EvalError as exc:
                self.out(f"Couldn't resolve error at '{exc}'\n")
                return
            self.outmask = self.outmask & ~bits if minus else self.outmask | bits
        # kd answers with the client's mask; the exact wording is not in the documentation.
        self.out(f"Client mask is {self.outmask:X}\n")

    def respond(self, command: str, r: Response) -> None:
        del command
        if r.latency_ms and self.wait(r.latency_ms / 1000, want_input=False) == "interrupt":
            return
        text = r.text.replace(COMMAND_LINE_TOKEN, self.opts.command_line_echo)
        data = text.replace("\n", "\r\n") if self.crlf else text
        payload = data.encode("utf-8")
        if r.binary_hex:
            payload += bytes.fromhex(r.binary_hex)
        if r.die_after_bytes is not None:
            self.out_bytes(payload[: r.die_after_bytes])
            self.flush()
            os._exit(r.exit_code)
        if not self.write_interruptible(payload):
            return
        if r.bulk_mb:
            for block in bulk.blocks(r.bulk_mb):
                encoded = (block.replace("\n", "\r\n") if self.crlf else block).encode("ascii")
                if not self.write_interruptible(encoded):
                    return
        if r.hang == "soft":
            self.wait(None, want_input=False)  # until Ctrl+C
            return
        if r.hang == "hard":  # deaf to Ctrl+C and to input: only a kill ends it
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            self.flush()
            while True:
                select.select([], [], [], 3600)
        if r.effect == "go":
            self.go()
        elif r.effect == "reboot":
            self.reboot()
        elif r.effect == "bugcheck":
            self.out(texts.bugcheck(self.sc, 0x0A, [0, 2, 0, 0]))
        elif r.effect == "transport_loss":
            self.transport_loss()

    def write_interruptible(self, payload: bytes) -> bool:
        """Write in chunks, stopping at a Ctrl+C (kd cancels long output that way)."""
        for start in range(0, len(payload), WRITE_CHUNK):
            if self.take_interrupt():
                self.out("\n")
                return False
            self.out_bytes(payload[start:start + WRITE_CHUNK])
        return True
