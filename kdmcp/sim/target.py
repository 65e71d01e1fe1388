"""The simulated target's run states: connecting, running, broken, rebooting, lost.

kd prints nothing when the target resumes; it prints a banner when the target stops (a
break-in, a breakpoint, a bugcheck), when it reboots ("Shutdown occurred at") and when the
transport fails ("Retry sending the same data packet for 64 times"). :class:`TargetRun`
plays those transitions -- the start-up banners per connection mode, the scenario's
scripted events while the target runs, Ctrl+C as a break-in -- and leaves what happens at
a prompt to :class:`~kdmcp.sim.debugger.SimDebugger`.

The world's run (:mod:`~kdmcp.sim.world.activity`, :mod:`~kdmcp.sim.world.user_activity`) is
imported inside the methods that drive it, for start-up alone, as the debugger imports the rest
of the world (:mod:`~kdmcp.sim.debugger`): those modules add some 60 ms of imports (iced-x86,
the type layouts) to a start that may never run the world.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from kdmcp.sim import texts
from kdmcp.sim.console_io import ConsoleIO, _Exit
from kdmcp.sim.dump_files import open_error
from kdmcp.sim.minidump_target import MinidumpTarget, is_minidump
from kdmcp.sim.options import KDNET_KEY_RE, SimOptions
from kdmcp.sim.remoting import ServerError
from kdmcp.sim.scenario import RunEvent, Scenario

if TYPE_CHECKING:
    from kdmcp.sim.interpreter import Interpreter
    from kdmcp.sim.world.machine import World

__all__ = ["BREAK_THREAD", "TARGET_LOG_ENV", "State", "TargetRun"]

State = Literal["waiting", "running", "broken", "rebooting", "lost"]

BREAK_THREAD = 2  # the canned process's break-in thread: cdb stops there after an attach or a Ctrl+C
# Set to a path: the target's run state is appended there at every change (``PID running``,
# ``PID broken``..., PID the debugger's) and how the debugger ended (``PID exit CODE``): the guest
# outlives its debugger, so what a shutdown left it doing is read from this file after every
# process is gone.
TARGET_LOG_ENV = "KDMCP_SIM_TARGET_LOG"


class TargetRun(ConsoleIO):
    """The target's state and the loop that waits for its next event or the next prompt."""

    interpreter: Interpreter  # the subclass's: runs a breakpoint's commands at the stop

    def __init__(self, opts: SimOptions, scenario: Scenario, in_fd: int = 0, out_fd: int = 1) -> None:
        super().__init__(in_fd, out_fd)
        self.opts = opts
        self.sc = scenario
        self._state: State = "waiting"
        log_path = os.environ.get(TARGET_LOG_ENV)
        # lives with the process, like the emit log
        self._target_log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115
        self.kernel = opts.flavor == "kd"
        self.cpu = 0
        # cdb's current thread: the attach break runs on its own thread (2 in the canned
        # process); a launch stops on the main thread (0).
        self.thread = BREAK_THREAD if opts.mode == "attach" else 0
        # a real minidump behind "cdb -z": its modules, threads and exception answer for it
        self.dump: MinidumpTarget | None = None
        self.break_pending = False
        self.lost_break_ins = scenario.lost_break_ins
        self.script: list[RunEvent] = []
        self.script_deadline: float | None = None
        self.pid = opts.pid if opts.pid is not None else 0x1A2C
        # The rest of a command line whose command let the target run: kd runs it at the next stop.
        self.pending: Iterator[None] | None = None
        # the world's own activity plays while the target runs (a scenario without on_go events)
        self.world_running = False
        # "KDTARGET: Refreshing KD connection" is owed before the next stop (a connect's first)
        self.refresh_pending = False
        # a live bugcheck: g breaks again at once, the first !analyze reloads first (texts.py)
        self.bugchecked = False
        self.analyze_reload_pending = False
        self.rebooted = False  # the next connect is a reboot's: the boot images are reported

    @property
    def state(self) -> State:
        return self._state

    @state.setter
    def state(self, value: State) -> None:
        if value != self._state:
            self.target_note(value)
        self._state = value

    def target_note(self, line: str) -> None:
        """One line of the target log (``TARGET_LOG_ENV``), written through at once: a SIGKILL
        right after must not lose what the target was last doing."""
        if self._target_log is not None:
            self._target_log.write(f"{os.getpid()} {line}\n")
            self._target_log.flush()

    @property
    def world(self) -> World:
        """The machine behind the target (the subclass builds it)."""
        raise NotImplementedError

    def has_world(self) -> bool:
        """Whether the simulated machine answers: the scenario enables it and no real minidump
        does instead."""
        return self.sc.world.enabled and self.dump is None

    def user_world(self) -> bool:
        """Whether the user-mode world answers for this cdb."""
        return not self.kernel and self.has_world()

    def dump_location(self) -> str | None:
        """A kernel dump's stop, from the world (the subclass); ``None``: the canned one."""
        return None

    def world_bugcheck(self, code: int, args: list[int], cpu: int) -> None:
        """A bugcheck stop puts the world in it (the subclass); the base has no world."""

    def prompt_and_execute(self) -> None:
        """At a prompt: show it, read a line and run it (the command side, in the subclass)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ run

    def run(self) -> int:
        self.catch_interrupts()
        try:
            self.start()
            while True:
                self.step()
        except _Exit as done:
            self.flush()
            self.target_note(f"exit {done.code}")
            return done.code
        except (BrokenPipeError, ConnectionResetError):
            return 1
        finally:
            self.end_remoting()  # clients see the end; a named pipe's socket file goes
            self.log.close()  # .logopen's file is complete

    def start_server(self, spec: str) -> None:
        """``-server`` / ``.server``: open a debugging server, or say why not (the session goes
        on either way: "Unable to start server, <status>" is an error line, not an exit)."""
        try:
            self.out(self.remoting.start(spec))
        except ServerError as exc:
            self.out(f"Unable to start server, {exc}\n")

    def start(self) -> None:
        o = self.opts
        if o.server:
            self.start_server(o.server)
        if o.mode == "kdnet":
            self.out(texts.kdnet_waiting(o.symbol_path))
            if self._kdnet_accepts():
                self._schedule_connect(self.sc.connect.delay_ms)
            return
        if o.mode == "kdcom":
            self.out(texts.VERSION_BANNER + "Opened \\\\.\\com1\nWaiting to reconnect...\n")
            return  # no serial target is ever simulated
        if o.mode == "local":
            self.out(texts.local_kernel(self.sc, o.symbol_path))
            self.enter_broken()
            return
        if o.mode == "dump":
            path = o.dump_path or ""
            if not os.path.exists(path):
                self.out(
                    texts.VERSION_BANNER + f"\nLoading Dump File [{path}]\n"
                    f"Could not open dump file [{path}], Win32 error 0n2\n"
                    '    "The system cannot find the file specified."\n'
                )
                raise _Exit(1)
            if (refusal := open_error(path)) is not None:  # no dump dbgeng knows: it says so and ends
                self.out(texts.VERSION_BANNER + refusal)
                raise _Exit(1)
            if not self.kernel and is_minidump(path):
                try:
                    self.dump = MinidumpTarget(path)
                except Exception:  # any reader failure is a dump cdb cannot open
                    # cdb on a cut or corrupt dump: the open fails and the debugger ends
                    self.out(
                        texts.VERSION_BANNER + f"\nLoading Dump File [{path}]\n"
                        f"Could not open dump file [{path}], HRESULT 0x8007000d\n"
                        '    "The data is invalid."\n'
                    )
                    raise _Exit(1) from None
                self.thread = self.dump.event_index  # cdb stops on the thread of the stored event
                self.out(self.dump.banner(texts.VERSION_BANNER, o.symbol_path))
            else:
                location = self.dump_location() if self.kernel else None
                self.out(texts.dump_loaded(self.sc, path, self.kernel, o.symbol_path, location))
            self.enter_broken()
            return
        if o.mode == "attach":
            self.out(texts.cdb_attach(self.pid))
            self.enter_broken()
            return
        if o.mode == "launch":
            launched = texts.cdb_launch(o.command_line or "", self.pid)
            if o.ignore_initial_break:
                # -g: no stop at ntdll!LdrpDoDebuggerBreak; the program runs (into its fault, in the world)
                self.out(launched[: launched.index(f"({self.pid:x}.1a8)")])
                self.go()
                return
            self.out(launched)
            self.enter_broken()
            return
        # "-remote" never gets here: cli.py runs the client relay (remote_client.py) instead
        raise _Exit(2)

    def _kdnet_accepts(self) -> bool:
        o, want = self.opts, self.sc.connect
        if o.key is None or not KDNET_KEY_RE.fullmatch(o.key):
            return False
        if o.port is None or not 1 <= o.port <= 65535:
            return False
        if want.key is not None and o.key.lower() != want.key.lower():
            return False
        return want.port is None or o.port == want.port

    # ------------------------------------------------------------ the loop

    def _schedule_connect(self, delay_ms: int) -> None:
        self.script = [RunEvent(after_ms=delay_ms, kind="exit", exit_code=-1)]  # -1: connect marker
        self.script_deadline = time.monotonic() + delay_ms / 1000

    def step(self) -> None:
        if self.state == "broken":
            self.prompt_and_execute()
            return
        timeout = None if self.script_deadline is None else max(0.0, self.script_deadline - time.monotonic())
        what = self.wait(timeout, want_input=False)
        if what == "interrupt":
            if self.state == "running" and self.lost_break_ins:
                self.lost_break_ins -= 1  # lost on the wire: the target never heard it
                return
            if self.state == "running":
                if self.world_running:
                    from kdmcp.sim.world import activity

                    activity.break_in(self.world)  # processor 0, in nt!DbgBreakPointWithStatus
                    self.cpu = self.world.cpu
                if self.kernel:
                    self.out(self.refreshed() + texts.kernel_break_in(self.sc))
                elif self.user_world():
                    from kdmcp.sim.world import user_activity
                    from kdmcp.sim.world.cmd_user import current_index

                    self.out(user_activity.break_in(self.world))  # cdb's break-in thread joins the process
                    self.thread = current_index(self.world)
                else:
                    self.out(texts.user_break_in(self.pid, 0x5D0))
                    self.thread = BREAK_THREAD  # Ctrl+C injects a thread that breaks
                self.enter_broken()
            else:
                self.break_pending = True  # kd breaks in as soon as the target is back
            return
        if what == "timeout" and self.world_running:
            self.play_world()
            return
        if what == "timeout" and self.script:
            event = self.script.pop(0)
            self.script_deadline = time.monotonic() + self.script[0].after_ms / 1000 if self.script else None
            self.play(event)

    def play(self, event: RunEvent) -> None:
        if event.kind == "exit" and event.exit_code == -1:
            self.connected()
        elif event.kind == "dbgprint":
            # DbgPrint without a line end: what follows is glued to it (the scenario's newline: false)
            text = event.text if event.text.endswith("\n") or not event.newline else event.text + "\n"
            self.out(text)
        elif event.kind == "breakpoint":
            if self.kernel and self.has_world():
                from kdmcp.sim.world import activity

                # the world stops in the routine the scripted stop names: k, r and u agree with it
                self.out(self.refreshed() + activity.scripted_stop(self.world, event.breakpoint))
                self.cpu = self.world.cpu
            else:
                self.out(self.refreshed() + texts.breakpoint_hit(event.breakpoint))
            self.enter_broken()
        elif event.kind == "bugcheck":
            self.bugcheck_stop(event.bugcheck_code, event.bugcheck_args, event.processor)
        elif event.kind == "reboot":
            self.reboot()
        elif event.kind == "transport_loss":
            self.transport_loss()
        else:
            raise _Exit(event.exit_code)

    def connected(self) -> None:
        self.out(texts.kdnet_connected(self.sc, self.opts.port or 0, self.opts.initial_break, self.opts.symbol_path))
        self.state = "running"
        self.script, self.script_deadline = [], None
        self.refresh_pending = self.sc.refresh_kd_connection
        self.bugchecked = self.analyze_reload_pending = False
        if self.rebooted and self.kernel and self.has_world():
            self.rebooted = False
            from kdmcp.sim.world import activity

            activity.boot_loads(self.world)  # an ld filter stops at the boot images' notices
            if (stop := activity.boot_notice(self.world)) is not None:
                self.out(self.refreshed() + stop.text)
                self.cpu = self.world.cpu
                self.enter_broken()
                if stop.commands:
                    self.pending = self.interpreter.run_line(stop.commands)
                return
        if self.opts.initial_break or self.break_pending:
            self.break_pending = False
            self.out(self.refreshed() + texts.kernel_break_in(self.sc))
            self.enter_broken()

    def refreshed(self) -> str:
        """``KDTARGET: Refreshing KD connection`` if a connect still owes it (texts.KD_REFRESH)."""
        if not self.refresh_pending:
            return ""
        self.refresh_pending = False
        return texts.KD_REFRESH

    def bugcheck_stop(self, code: int, args: list[int], cpu: int | None) -> None:
        """The target bugchecks on processor ``cpu`` (the current one if ``None``): the world goes
        into the bugcheck, kd prints the sequence (texts.bugcheck) and the prompt names the
        crashing processor -- "0: kd> g" ... "1: kd> " in set1 exceptions_errors/a_14."""
        cpu = self.cpu if cpu is None else cpu % max(1, self.sc.target.processors)
        self.world_bugcheck(code, args, cpu)
        self.cpu = cpu
        self.bugchecked = True
        self.analyze_reload_pending = self.opts.mode == "kdnet"
        self.out(self.refreshed() + texts.bugcheck(self.sc, code, args))
        self.enter_broken()

    def enter_broken(self) -> None:
        self.state = "broken"
        self.prompt_everyone()  # a stop prompts every client, not only the last one to type
        self.script, self.script_deadline = [], None
        self.world_running = False
        self.interrupts = 0

    def go(self) -> None:
        self.state = "running"
        self.script = list(self.sc.on_go)
        self.script_deadline = time.monotonic() + self.script[0].after_ms / 1000 if self.script else None
        if self.kernel and self.has_world():
            from kdmcp.sim.world import activity

            activity.resume(self.world)  # the stopped threads go back to what they were doing
            # the world's own events play unless the scenario scripts what the run does
            self.world_running = not self.script
            if self.world_running:
                self.script_deadline = time.monotonic() + activity.EVENT_MS / 1000
        elif self.user_world() and not self.script:
            from kdmcp.sim.world import activity, user_activity

            # the process's threads run (user_activity.py): a launched app into its access
            # violation, an attached one through its worker's cycle, until a breakpoint stops it
            user_activity.go(self.world)
            self.world_running = True
            self.script_deadline = time.monotonic() + activity.EVENT_MS / 1000

    def play_world(self) -> None:
        """The world's next event: its DbgPrint line, and the stop when a breakpoint caught it."""
        from kdmcp.sim.world import activity

        if not self.kernel:
            from kdmcp.sim.world import user_activity
            from kdmcp.sim.world.cmd_user import current_index

            played = user_activity.play(self.world)
            self.out(played.text)
            if not played.stopped:
                self.script_deadline = time.monotonic() + activity.EVENT_MS / 1000
                return
            self.thread = current_index(self.world)
            self.enter_broken()
            if played.commands:  # the breakpoint's commands run at the stop
                commands = self.interpreter.run_line(played.commands)
                self.pending = commands if self.pending is None else itertools.chain(commands, self.pending)
            return

        printed, stop = activity.play(self.world)
        if printed:
            self.out(printed)
        if stop is None:
            self.script_deadline = time.monotonic() + activity.EVENT_MS / 1000
            return
        self.out(self.refreshed() + stop.text)
        self.cpu = self.world.cpu  # the prompt names the processor the breakpoint hit on
        self.enter_broken()
        if stop.commands:  # the breakpoint's commands run at the stop, before the rest of the line
            commands = self.interpreter.run_line(stop.commands)
            self.pending = commands if self.pending is None else itertools.chain(commands, self.pending)

    def reboot(self) -> None:
        self.pending = None  # the rest of the line is lost with the target
        self.bugchecked = self.analyze_reload_pending = False
        self.rebooted = True
        self.out(texts.shutdown(self.opts.mode == "kdnet"))
        self.state = "rebooting"
        self._schedule_connect(self.sc.reboot_delay_ms)

    def transport_loss(self) -> None:
        self.out(texts.TRANSPORT_LOSS)
        self.state = "lost"
        self.script, self.script_deadline = [], None
        if self.sc.reconnect_after_loss_ms is not None:
            self.out("Waiting to reconnect...\n")
            self._schedule_connect(self.sc.reconnect_after_loss_ms)
