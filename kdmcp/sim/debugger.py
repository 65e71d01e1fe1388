"""The simulated debugger's event loop.

One thread, one ``select``: on the debugger's input when it is at a prompt, on a self-pipe
woken by SIGINT (Ctrl+C from a pty or a signal to the process group), and on the deadline of
the next scripted target event. Like kd, it does not read input while the target runs: typed
lines wait in the pipe until the next stop.

Line ends: kd on Windows writes ``\\r\\n``. Under a pty the terminal turns ``\\n`` into
``\\r\\n`` itself, so the simulator writes bare ``\\n`` there and ``\\r\\n`` to pipes; either way
the reader sees what it would see from kd.exe.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import time
from collections.abc import Callable, Iterator
from typing import Literal

from kdmcp.command.classes import RunEffect
from kdmcp.command.lexing import strip_selectors
from kdmcp.command.tables import leaf_effect
from kdmcp.sim import bulk, texts
from kdmcp.sim.interpreter import EvalError, Interpreter, evaluate
from kdmcp.sim.options import KDNET_KEY_RE, SimOptions
from kdmcp.sim.scenario import Response, RunEvent, Scenario

State = Literal["waiting", "running", "broken", "rebooting", "lost"]

# "gu" / "gc" stop again at once here (the simulated function returns at once).
_STEP_OUT_RE = re.compile(r"g[uc](?:\s.*)?", re.IGNORECASE | re.DOTALL)
# "r $t0 = 5": a temporary register (the simulator's only registers that expressions read).
_TEMP_ASSIGN_RE = re.compile(r"r\s+@?\$t(?P<index>1[0-9]|[0-9])\s*=\s*(?P<value>.+)", re.IGNORECASE)
# ".outmask[-] [/l] Expression", ".outmask /a", ".outmask /d" (.outmask (Control Output Mask)).
_OUTMASK_RE = re.compile(r"\.outmask(?P<minus>-)?(?:\s+(?P<args>.*))?", re.IGNORECASE)
_DEFAULT_OUTMASK = 0x3F7  # ".outmask /d ... is equivalent to .outmask 0x3F7"
_NORMAL_OUTPUT, _PROMPT_OUTPUT = 0x1, 0x10
_PROCESSOR_SWITCH_RE = re.compile(r"~(\d+)s", re.IGNORECASE)
_EFFMACH_RE = re.compile(r"\.effmach(?:\s+(\S+))?", re.IGNORECASE)
_QUIT_RE = re.compile(r"q[qd]?", re.IGNORECASE)
_WRITE_CHUNK = 65536
_BREAK_THREAD = 2
# In canned text, replaced by the debugger's own command line (as ``version`` prints it).
COMMAND_LINE_TOKEN = "@@COMMAND_LINE@@"  # noqa: S105 (a placeholder, not a secret)
# Set to a path: every byte written to stdout is also appended there (fault tests' ground truth).
EMIT_LOG_ENV = "KDMCP_SIM_EMIT_LOG"


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class SimDebugger:
    """Plays one scenario on stdin/stdout the way kd.exe or cdb.exe would."""

    def __init__(self, opts: SimOptions, scenario: Scenario, in_fd: int = 0, out_fd: int = 1) -> None:
        self.opts = opts
        self.sc = scenario
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.crlf = not os.isatty(out_fd)
        self.state: State = "waiting"
        self.kernel = opts.flavor == "kd"
        self.cpu = 0
        # cdb's current thread: the attach break runs on its own thread (2 in the canned
        # process); a launch stops on the main thread (0).
        self.thread = _BREAK_THREAD if opts.mode == "attach" else 0
        self.machine: str | None = None
        self.last_command = ""
        self.break_pending = False
        self.lost_break_ins = scenario.lost_break_ins
        self.pending_input = b""
        self.input_eof = False
        self.interrupts = 0
        self.script: list[RunEvent] = []
        self.script_deadline: float | None = None
        self.pid = opts.pid if opts.pid is not None else 0x1A2C
        self._outbuf = bytearray()
        self.temps: dict[int, int] = {}
        self.outmask = _DEFAULT_OUTMASK
        self._in_command = False
        self._captured: list[str] | None = None
        self.interpreter = Interpreter(self)
        # The rest of a command line whose command let the target run: kd runs it at the next stop.
        self.pending: Iterator[None] | None = None
        # Tests of "nothing lost" compare what the engine stored with what was really written.
        emit_path = os.environ.get(EMIT_LOG_ENV)
        self._emit_log = open(emit_path, "ab") if emit_path else None  # noqa: SIM115 (lives with the process)
        # A Ctrl+C wakes the select() in wait(): the C-level signal handler writes to this
        # pipe (signal.set_wakeup_fd), so a signal that lands just before select() blocks is
        # not lost; both ends non-blocking, the read end drained by wait().
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    # ----------------------------------------------------------------- output

    def out(self, text: str) -> None:
        """Write text as the console would show it (line ends per pty/pipe).

        A command's output is normal output: with bit 1 cleared by ``.outmask-`` it is not shown.
        """
        if self._in_command and not self.outmask & _NORMAL_OUTPUT:
            return
        if self._captured is not None:
            self._captured.append(text)
            return
        if self.crlf:
            text = text.replace("\n", "\r\n")
        self.out_bytes(text.encode("utf-8", errors="replace"))

    def out_bytes(self, data: bytes) -> None:
        """Queue output; it goes out when the debugger next waits (or the queue is large).

        One write per burst, as a console program's buffered stdout does: a command's output,
        the prompt and the next queued command's output leave together.
        """
        self._outbuf += data
        if len(self._outbuf) >= _WRITE_CHUNK:
            self.flush()

    def flush(self) -> None:
        data, self._outbuf = bytes(self._outbuf), bytearray()
        if self._emit_log is not None and data:
            # Logged *before* it is written: a SIGKILL between the two leaves the log ahead of
            # the pipe (what the engine stored is then a prefix of it), never behind.
            self._emit_log.write(data)
            self._emit_log.flush()
        view = memoryview(data)
        while view:
            n = os.write(self.out_fd, view)
            view = view[n:]

    # ------------------------------------------------- the interpreter's host

    def interrupted(self) -> bool:
        return self.take_interrupt()

    def thread_ids(self) -> list[int]:
        return list(range(_BREAK_THREAD + 1))  # the canned process's threads

    def capture(self, run: Callable[[], None]) -> str:
        """What ``run`` prints, kept instead of shown (``.foreach``'s input commands)."""
        saved, self._captured = self._captured, []
        try:
            run()
            return "".join(self._captured)
        finally:
            self._captured = saved

    def prompt_text(self) -> str:
        if self.opts.mode == "local":
            return "lkd> "
        mach = f":{self.machine}" if self.machine else ""
        if self.kernel:
            if self.sc.target.processors > 1:
                return f"{self.cpu}: kd{mach}> "
            return f"kd{mach}> "
        return f"0:{self.thread:03d}{mach}> "

    # --------------------------------------------------------------- signals

    def _on_sigint(self, signum: int, frame: object) -> None:
        del signum, frame
        self.interrupts += 1

    def take_interrupt(self) -> bool:
        if self.interrupts:
            self.interrupts = 0
            return True
        return False

    def _drain_wake(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._wake_r, 4096):
                pass

    def wait(self, timeout: float | None, want_input: bool) -> Literal["input", "interrupt", "timeout"]:
        """Block until an input line (if wanted), a Ctrl+C, or the timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.take_interrupt():
                return "interrupt"
            self._check_quit_key()
            if want_input and (b"\n" in self.pending_input or self.input_eof):
                return "input"
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if remaining == 0.0:
                return "timeout"
            # Input is read even while the target runs (kd's input thread sees Ctrl+B), but
            # lines are only executed at a prompt.
            fds = [self._wake_r] + ([] if self.input_eof else [self.in_fd])
            if self._outbuf:
                self.flush()
            ready, _, _ = select.select(fds, [], [], remaining)
            if self._wake_r in ready:
                self._drain_wake()  # the interrupt itself is counted by _on_sigint
            if self.in_fd in ready:
                data = os.read(self.in_fd, 65536)
                if data:
                    self.pending_input += data
                else:
                    self.input_eof = True

    def _check_quit_key(self) -> None:
        """Ctrl+B then Enter quits kd/cdb at once, whatever the target is doing."""
        head, nl, _ = self.pending_input.rpartition(b"\n")
        if nl and b"\x02" in head:
            raise _Exit(0)

    def read_line(self) -> str | None:
        """The next typed line, or None at end of input."""
        while self.wait(None, want_input=True) == "interrupt":
            pass  # Ctrl+C at a prompt: nothing to break into, kd keeps waiting
        if b"\n" not in self.pending_input:
            return None
        line, _, self.pending_input = self.pending_input.partition(b"\n")
        return line.decode("utf-8", errors="replace").rstrip("\r")

    # ------------------------------------------------------------------ run

    def run(self) -> int:
        signal.signal(signal.SIGINT, self._on_sigint)
        signal.set_wakeup_fd(self._wake_w)
        try:
            self.start()
            while True:
                self.step()
        except _Exit as done:
            self.flush()
            return done.code
        except (BrokenPipeError, ConnectionResetError):
            return 1

    def start(self) -> None:
        o = self.opts
        if o.server:
            self.out(f"Server started.  Client can connect with any of these command lines\n"
                     f"0: <debugger>.exe -remote {o.server}\n")
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
                self.out(texts.VERSION_BANNER + f"\nLoading Dump File [{path}]\n"
                         f"Could not open dump file [{path}], Win32 error 0n2\n"
                         '    "The system cannot find the file specified."\n')
                raise _Exit(1)
            self.out(texts.dump_loaded(self.sc, path, self.kernel, o.symbol_path))
            self.enter_broken()
            return
        if o.mode == "attach":
            self.out(texts.cdb_attach(self.pid))
            self.enter_broken()
            return
        if o.mode == "launch":
            self.out(texts.cdb_launch(o.command_line or "", self.pid))
            self.enter_broken()
            return
        # remote client: joins a session whose target is already stopped
        self.out(f"Connected to server with '{o.remote}'\n")
        self.enter_broken()

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
                if self.kernel:
                    self.out(texts.kernel_break_in(self.sc))
                else:
                    self.out(texts.user_break_in(self.pid, 0x5D0))
                    self.thread = _BREAK_THREAD  # Ctrl+C injects a thread that breaks
                self.enter_broken()
            else:
                self.break_pending = True  # kd breaks in as soon as the target is back
            return
        if what == "timeout" and self.script:
            event = self.script.pop(0)
            self.script_deadline = (
                time.monotonic() + self.script[0].after_ms / 1000 if self.script else None
            )
            self.play(event)

    def play(self, event: RunEvent) -> None:
        if event.kind == "exit" and event.exit_code == -1:
            self.connected()
        elif event.kind == "dbgprint":
            text = event.text if event.text.endswith("\n") else event.text + "\n"
            self.out(text)
        elif event.kind == "breakpoint":
            self.out(texts.breakpoint_hit(event.breakpoint))
            self.enter_broken()
        elif event.kind == "bugcheck":
            self.out(texts.bugcheck(self.sc, event.bugcheck_code, event.bugcheck_args))
            self.enter_broken()
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
        if self.opts.initial_break or self.break_pending:
            self.break_pending = False
            self.out(texts.kernel_break_in(self.sc))
            self.enter_broken()

    def enter_broken(self) -> None:
        self.state = "broken"
        self.script, self.script_deadline = [], None
        self.interrupts = 0

    def go(self) -> None:
        self.state = "running"
        self.script = list(self.sc.on_go)
        self.script_deadline = time.monotonic() + self.script[0].after_ms / 1000 if self.script else None

    def reboot(self) -> None:
        self.pending = None  # the rest of the line is lost with the target
        self.out(texts.shutdown())
        self.state = "rebooting"
        self._schedule_connect(self.sc.reboot_delay_ms)

    def transport_loss(self) -> None:
        self.out(texts.TRANSPORT_LOSS)
        self.state = "lost"
        self.script, self.script_deadline = [], None
        if self.sc.reconnect_after_loss_ms is not None:
            self.out("Waiting to reconnect...\n")
            self._schedule_connect(self.sc.reconnect_after_loss_ms)

    # ------------------------------------------------------------ commands

    def prompt_and_execute(self) -> None:
        if self.pending is not None:
            rest, self.pending = self.pending, None
            self._drive(rest)
            if self.state != "broken":
                return
        if self.outmask & _PROMPT_OUTPUT:
            self.out(self.prompt_text())
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
        if _QUIT_RE.fullmatch(command):
            self.out("quit:\n")
            raise _Exit(0)
        if self.kernel and (m := _PROCESSOR_SWITCH_RE.fullmatch(command)):
            cpu = int(m.group(1))
            if cpu >= self.sc.target.processors:
                self.out(f"{cpu} is not a valid processor number\n")
            else:
                self.cpu = cpu
                self.out(texts.processor_switch(self.sc, cpu))
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
        response = self.sc.response_for(command)
        if response is not None:
            self.respond(command, response)
            return
        if _STEP_OUT_RE.fullmatch(strip_selectors(command)):
            self.out(texts.break_location(self.sc))
            return
        if leaf_effect(command) is RunEffect.RESUMES and strip_selectors(command)[:1].lower() == "g":
            if self.opts.mode in ("dump", "local"):
                self.out("No runnable debuggees error in 'g'\n" if self.opts.mode == "dump"
                         else "Go is not supported in local kernel debugging\n")
                return
            self.go()
            return
        if low == ".reboot" and self.kernel and self.opts.mode == "kdnet":
            self.reboot()
            return
        if low == ".crash" and self.kernel and self.opts.mode == "kdnet":
            self.out(texts.bugcheck(self.sc, 0xE2, [0, 0, 0, 0]))
            return
        self.out(texts.syntax_error(command))

    def set_outmask(self, minus: bool, args: str) -> None:
        """``.outmask``: add (or with ``-`` remove) mask bits; ``/a`` all, ``/d`` the default."""
        words = [w for w in args.split() if w.lower() != "/l"]
        if words and words[0].lower() == "/a":
            self.outmask = 0xFFFFFFFF
        elif words and words[0].lower() == "/d":
            self.outmask = _DEFAULT_OUTMASK
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
        for start in range(0, len(payload), _WRITE_CHUNK):
            if self.take_interrupt():
                self.out("\n")
                return False
            self.out_bytes(payload[start:start + _WRITE_CHUNK])
        return True
