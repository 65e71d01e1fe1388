"""The server's state and the rules every tool shares, synchronous and transport-free.

The sessions (the engine's manager), the caller's policy, the events each result reports once,
the bounded start of a debugger, the session logs, the masked byte ranges, and the shutdown.
What each tool does is its family's (``kdmcp/server/tools/``); the tools run in worker threads
(``call.py``) and every served byte is masked on the way out by the server's ``Redactor``.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kdmcp.errors import ConfigError, DebuggerError, InvalidArgument, KdMcpError, NotConnected
from kdmcp.server.options import ServerOptions, demo_state
from kdmcp.server.redaction import Redactor
from kdmcp.server.transcript import Transcript
from kdmcp.statefile import LoadedState, load_state, resolve_state_path

if TYPE_CHECKING:
    # The engine, the command reader and the served models are imported by the first call that
    # needs them, not at start-up: a start answers initialize and tools/list without them
    # (docs/performance.md, "Cold start"). The parsers and record models are built on the first
    # command (kdmcp.parse's lazy attributes).
    from kdmcp.command import Profile
    from kdmcp.engine import DebuggerEvent, DebuggerSession, SessionConfig, SessionManager
    from kdmcp.engine.launch import Flavor, Target
    from kdmcp.engine.results import StartResult as EngineStart
    from kdmcp.engine.results import StopResult as EngineStop
    from kdmcp.server import models

__all__ = ["KdMcpApp"]

log = logging.getLogger(__name__)

StateT = TypeVar("StateT")
# A ``key=``/``password=``/``token=`` whose value runs to the end of what arrived: the value may
# go on, so a log holds it back (kdmcp.secret masks such values by the same words).
_OPEN_ASSIGNMENT = re.compile(rb"(?i)\b(?:key|password|token)=([^,\s\"']*)\Z")


class KdMcpApp:
    """Sessions, config and the rules of each tool."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        cfg = options.config
        if cfg.allow_commands:  # the config's additions to the allowlist: none may re-class a command kd-mcp knows
            from kdmcp.command.allowlist import config_entries

            try:
                config_entries(tuple(cfg.allow_commands))
            except ValueError as exc:
                raise ConfigError(str(exc)) from exc
        self._manager: SessionManager | None = None  # made on first use (``manager``): it imports the engine
        self._lock = threading.Lock()
        self._cursors: dict[str, int] = {}
        self._starting: dict[threading.Event, tuple[DebuggerSession, str | None]] = {}
        # Declared secret fields only: config connection keys (validated KdnetKey), listener tokens.
        tokens = options.clients.secrets if options.clients is not None else []
        self.redactor = Redactor([*(c.key for c in cfg.connections.values()), *tokens])
        self.transcript = (Transcript(options.transcript, self.redactor.transcript_line)
                           if options.transcript else None)
        self._log_pos: dict[str, int] = {}
        self._shutdown_started = False
        self._forced = threading.Event()
        self._forced_by: str | None = None
        self._family_state: dict[type[Any], Any] = {}
        # Listener clients' sessions outlive their connections: the idle stop reclaims the slots
        # (and the guests) of clients that went away (docs/remote-listener.md, "Sessions and clients").
        self._stopping = threading.Event()
        self._idle_stopper: threading.Thread | None = None
        if options.clients is not None and cfg.idle_stop_minutes > 0:
            self._idle_stopper = threading.Thread(target=self._stop_idle_sessions, args=(cfg.idle_stop_minutes * 60,),
                                                  name="kdmcp-idle-stop", daemon=True)
            self._idle_stopper.start()

    # -------------------------------------------------------------- helpers

    @property
    def manager(self) -> SessionManager:
        """The sessions (the engine's manager), made on first use: a start that only lists the
        tools never imports the engine."""
        manager = self._manager
        if manager is None:
            from kdmcp.engine import SessionManager

            with self._lock:
                if self._manager is None:
                    self._manager = SessionManager(self._engine_config(), max_sessions=self.options.config.max_sessions)
                manager = self._manager
        return manager

    def _engine_config(self) -> SessionConfig:
        from kdmcp.engine import SessionConfig

        cfg = self.options.config
        return SessionConfig(
            startup_timeout=cfg.timeouts.startup,
            command_timeout=cfg.timeouts.command,
            break_timeout=cfg.timeouts.break_in,
            stop_timeout=cfg.timeouts.stop,
            inline_output_bytes=cfg.inline_output_bytes,
            backend=cfg.console_backend,
        )

    @property
    def session_config(self) -> SessionConfig:
        """How the engine runs every session, from the config (the manager's)."""
        return self.manager.config

    def state_of(self, kind: type[StateT]) -> StateT:
        """The app's one ``kind()``, made on first use: what a tool family keeps across calls (the
        breakpoints it set, the sessions it shared) lives as long as the app, without the core
        knowing the families."""
        with self._lock:
            state = self._family_state.get(kind)
            if state is None:
                state = self._family_state[kind] = kind()
            return typing.cast(StateT, state)

    def debugger_argv(self, flavor: Flavor) -> list[str]:
        """How to run kd/cdb: the simulator with ``--simulate``, else the discovered binary."""
        from kdmcp.discovery import find_debugger
        from kdmcp.engine import simulator_command

        if self.options.simulate:
            return simulator_command(flavor, self.options.scenario)
        found = find_debugger(flavor, getattr(self.options.config.debuggers, flavor))
        if found.path is None:
            places = "; ".join(found.looked_in)
            raise DebuggerError(
                f"{flavor}.exe not found (looked in: {places}). Install the Debugging Tools for Windows "
                "(Windows SDK) or set debuggers.{flavor} in the config; kd-mcp --simulate needs none."
            )
        return [found.path]

    def session(self, session_id: str | None, owner: str | None, include_ended: bool = False) -> DebuggerSession:
        return self.manager.get(session_id, include_ended=include_ended, owner=owner)

    def new_events(self, session: DebuggerSession) -> list[DebuggerEvent]:
        """Events since the previous result for this session (each reported once).

        The one way events reach a caller: this cursor also covers what arrived *between* calls
        (DbgPrint while the target ran), which the events an engine result lists for its own
        call do not, so those lists are not served.
        """
        with self._lock:
            cursor = self._cursors.get(session.session_id, 0)
            events = session.events_since(cursor)
            if events:
                self._cursors[session.session_id] = events[-1].seq
        if self.transcript is not None:
            for event in events:
                fields = event.model_dump(mode="json")
                fields["event"] = fields.pop("kind")
                self.transcript.record("event", session_id=session.session_id, **fields)
        return events

    def flush_session_logs(self, final: bool = False) -> None:
        """Append each session's new console output to its transcript log, keys masked.

        Each session's log is also written as its output arrives (``_copy_log``, from the
        session's reader): this catches up whatever is left, and with ``final`` masks and
        writes the held-back tail of every session.
        """
        if self.transcript is None or self._manager is None:
            return
        for info in self.manager.all_infos():
            session = self.manager.session_of(info.session_id)
            if session is not None:
                self._copy_log(session, final=final)

    def _copy_log(self, session: DebuggerSession, final: bool = False) -> None:
        """Write the session's output that is safe to show to its log, now, and flush it.

        Safe: everything but a tail that may be a secret still arriving -- the start of a known
        key (``Redactor.byte_range`` holds it back) or a ``key=`` whose value runs to the last
        byte. Usually that is nothing (output ends at a prompt), so a server killed with -9
        leaves a log complete to kd's last byte. Once the session has ended (or ``final``) the
        held-back tail is written masked.
        """
        transcript = self.transcript
        if transcript is None:
            return
        from kdmcp.engine import SessionState

        # The LogFlusher and every session's reader copy too: one copy at a time, or two would
        # both start at the same position and write the same bytes twice.
        with transcript.session_logs_lock:
            sid = session.session_id
            done = final or session.state == SessionState.exited
            pos = self._log_pos.get(sid, 0)
            end = session.store.size
            if not done:
                reach = self.redactor.context_bytes
                tail_at = max(0, end - reach)
                unfinished = _OPEN_ASSIGNMENT.search(session.read_output(tail_at, end - tail_at))
                if unfinished is not None:
                    end = max(pos, tail_at + unfinished.start(1))
            if end <= pos:
                return
            text, next_pos = self.redactor.byte_range(session.read_output, session.store.size, pos, end, final=done)
            if next_pos <= pos:
                return
            log = transcript.session_log(sid)
            log.write(text)
            log.flush()
            self._log_pos[sid] = next_pos

    # ---------------------------------------------------------------- start

    def load_state(self, state_file: str | None) -> LoadedState:
        """The state file (re-read on every call: the companion may have rotated the key).

        With ``--simulate`` and no state file named anywhere, the simulator's demo state is
        used, so the server can be tried with no companion and no Windows.
        """
        cfg = self.options.config
        path, source = resolve_state_path(state_file, cfg.state_file)
        if self.options.simulate and source == "default" and not path.exists():
            return LoadedState(state=demo_state(), path=Path("<embedded demo state>"), source="default",
                               warnings=["--simulate: no state file given, using the simulator's demo state"])
        return load_state(state_file, cfg.state_file, cfg.state_file_max_age_hours * 3600)

    def start_session(
        self,
        target: Target,
        *,
        initial_break: bool,
        timeout_s: float | None,
        cancel: threading.Event | None = None,
        owner: str | None = None,
    ) -> tuple[DebuggerSession, EngineStart]:
        """Start a debugger on ``target`` and wait (bounded) for it; one that never gets there is stopped.

        Host safety (docs/architecture.md, "Host safety"): a debugger is never left behind waiting
        for a target that does not come, and every session keeps its console's input open until
        it is stopped.
        """
        from kdmcp import command as reader
        from kdmcp.engine import KdnetTarget, SessionState, build_plan
        from kdmcp.engine.kinds import KINDS
        from kdmcp.engine.launch import flavor_for

        plan = build_plan(
            self.debugger_argv(flavor_for(target)), target, symbol_path=self.options.config.symbol_path,
            initial_break=initial_break,
            # -noshell unless the caller's policy allows host commands: a second wall behind the policy.
            extra_args=reader.launch_flags(self.profile_for(owner)),
        )
        session = self.manager.create(plan, owner=owner)
        if self.transcript is not None:
            self.transcript.record("session", event="created", session_id=session.session_id,
                                   command_line=plan.display, target_kind=plan.kind,
                                   attached_to=plan.attached_to, owner=owner,
                                   log_offset=self.transcript.log_offset(session.session_id))
            session.on_output = lambda: self._copy_log(session)
        if cancel is not None:
            with self._lock:
                self._starting[cancel] = (session, owner)
        try:
            result = session.start(timeout_s)
        finally:
            if cancel is not None:
                with self._lock:
                    self._starting.pop(cancel, None)
        waited = timeout_s or self.session_config.startup_timeout
        if result.state in (SessionState.waiting_for_target, SessionState.starting):
            # kd would wait forever; the session would hold a slot (and a KDNET port).
            stop = self.manager.stop(session.session_id, resume=False, owner=owner)
            stopped = f"The debugger was stopped ({', '.join(stop.actions) or 'exited'})."
            if isinstance(target, KdnetTarget):
                raise NotConnected(
                    f"no target answered within {waited:g}s on port {target.port} (kd is still printing "
                    "'Waiting to reconnect...'): check the key, the port, the guest's bcdedit /dbgsettings and "
                    f"the host firewall. {stopped}", session_id=session.session_id, state=SessionState.exited)
            raise NotConnected(f"{KINDS[plan.kind].title} did not reach a prompt within {waited:g}s. {stopped}",
                               session_id=session.session_id, state=SessionState.exited)
        if result.state == SessionState.exited:
            self.manager.stop(session.session_id, owner=owner)
            raise DebuggerError(
                f"the debugger exited during start (code {result.exit_code}): {result.banner[-500:]}",
                session_id=session.session_id,
                state=SessionState.exited,
            )
        return session, result

    def served_start(
        self, session: DebuggerSession, result: EngineStart, model: type[models.StartT], *,
        state_file: str | None = None, warnings: list[str] | None = None, **own: object,
    ) -> models.StartT:
        """The served ``model`` (a ``StartResult`` or a kind's own, with its ``own`` fields) of a start."""
        limit = self.session_config.inline_output_bytes
        return model.serve(
            result, session_id=session.session_id, prompt=result.prompt, events=self.new_events(session),
            banner=result.banner[:limit], truncated=len(result.banner) > limit, state_file=state_file,
            warnings=warnings or [], kind=session.plan.kind, **own,
        )

    def abort_start(self, cancel: threading.Event) -> None:
        """The client cancelled a start: stop the debugger it was waiting on."""
        with self._lock:
            starting = self._starting.pop(cancel, None)
        if starting is not None:
            session, owner = starting
            self.manager.stop(session.session_id, owner=owner)

    # ------------------------------------------------------------- commands

    def profile_for(self, owner: str | None) -> Profile:
        """The command policy of the caller: its listener client's, else the config's."""
        clients = self.options.clients
        if clients is not None:
            for client in clients.clients:
                if client.name == owner:
                    return client.policy
            return "read_only"
        return self.options.config.policy

    def enforce_policy(self, command: str, owner: str | None, session_id: str | None = None) -> None:
        """Refuse a malformed line as such first, then anything the caller's profile denies and
        the person, if asked, does not allow once."""
        from kdmcp import command as reader
        from kdmcp.engine.commands import validate
        from kdmcp.server.asking import settle

        problem = validate(command)
        if problem is not None:
            raise InvalidArgument(problem, session_id=session_id)
        roots = (*reader.DEFAULT_NETWORK_ROOTS, *self.options.config.network_roots)
        profile = self.profile_for(owner)
        verdict = reader.check(command, profile, roots, tuple(self.options.config.allow_commands))
        if not verdict.allowed:  # refused, unless the person allows it once (docs/security.md, "Asking the human")
            settle(self, command, verdict, profile, roots, owner, session_id)

    # --------------------------------------------------------------- output

    def masked_range(self, session: DebuggerSession, offset: int, end: int) -> tuple[str, int]:
        """Bytes ``[offset, end)`` of the session's output, masked (``Redactor.byte_range``)."""
        from kdmcp.engine import SessionState

        final = session.state == SessionState.exited  # nothing more will arrive to finish a key
        return self.redactor.byte_range(session.read_output, session.store.size, offset, end, final=final)

    # ----------------------------------------------------------------- stop

    def _stop_idle_sessions(self, idle_s: float) -> None:
        """Every so often, stop the listener clients' sessions unused for ``idle_s`` (guests resumed)."""
        while not self._stopping.wait(min(60.0, max(idle_s / 4, 1.0))):
            self.stop_idle(idle_s)

    def stop_idle(self, idle_s: float, now: float | None = None) -> list[str]:
        """Stop the sessions ``manager.idle`` names, each as ``stop_kd`` would; the ids stopped."""
        stopped = []
        for session_id, owner in self.manager.idle(idle_s, now):
            session = self.manager.session_of(session_id)
            try:
                result = self.manager.stop(session_id, owner=owner)
            except KdMcpError as exc:  # it ended or was stopped meanwhile
                log.info("idle stop of %s: %s", session_id, exc.message)
                continue
            stopped.append(session_id)
            log.warning("stopped %s of client %s: unused for %.0f minutes (%s)", session_id, owner, idle_s / 60,
                        ", ".join(result.actions) or "exited")
            if session is not None:
                self._record_stop(session, result, f"idle for {idle_s / 60:g} minutes")
        return stopped

    def shutdown(self, reason: str = "end of input") -> None:
        """Stop every session as its kind requires, at once and bounded, as the server exits.

        One path for every way out (end of input, a signal, a console event): each session's
        stop and how it left the target are recorded (``session stopped``), then ``stop`` with
        the reason. A second request meanwhile (``force_shutdown``) kills what is still
        stopping, and that is recorded too. Runs once; a later call returns at once.
        """
        self._stopping.set()  # the idle stop's thread ends too
        with self._lock:
            if self._shutdown_started:
                return
            self._shutdown_started = True
            # None: no tool ever asked for a session, so there is none to stop (nor an engine to import)
            manager = self._manager
        t0 = time.monotonic()
        self.flush_session_logs()
        stopped = 0 if manager is None else manager.stop_all(
            keep_ended=self.transcript is not None, forced=self._forced,
            on_stopped=lambda session, result: self._record_stop(session, result, reason))
        if self.transcript is not None:
            self.flush_session_logs(final=True)
            self.transcript.record("stop", reason=reason, forced_by=self._forced_by, sessions=stopped,
                                   elapsed_ms=round((time.monotonic() - t0) * 1000, 3))
            self.transcript.close()
            if manager is not None:
                manager.stop_all()  # the session logs are copied: free the ended sessions' spill files

    def force_shutdown(self, reason: str) -> None:
        """The forced path (a second signal during shutdown): kill every debugger still running
        now. ``shutdown`` then records each as killed and ends at once."""
        self._forced_by = reason
        self._forced.set()
        for session in self.manager.live() if self._manager is not None else ():
            session.kill_now()

    def _record_stop(self, session: DebuggerSession, result: EngineStop, reason: str) -> None:
        self._copy_log(session, final=True)
        actions = result.actions
        if self._forced.is_set() and result.exit_code != 0 and not any(a.startswith("killed") for a in actions):
            actions = [*actions, f"killed (forced: {self._forced_by})"]
        if self.transcript is not None:
            self.transcript.record("session", event="stopped", session_id=session.session_id, how=result.left,
                                   actions=actions, exit_code=result.exit_code, reason=reason,
                                   elapsed_ms=result.elapsed_ms)
