"""The tools' logic, synchronous and transport-free: what each tool does to the sessions.

Tool handlers run these in worker threads; the engine blocks, with bounds, and this layer
turns its results into the served models. Every model leaves through ``redacted()``, which
masks every KDNET key this server knows by value — whatever field, event or echoed command
line it hides in.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from kdmcp.command import DEFAULT_NETWORK_ROOTS, Profile, check, launch_flags
from kdmcp.config import Config
from kdmcp.discovery import file_version, find_debugger
from kdmcp.engine import (
    DebuggerEvent,
    DebuggerSession,
    KdnetTarget,
    SessionConfig,
    SessionManager,
    SessionState,
    build_plan,
    simulator_command,
)
from kdmcp.engine.commands import validate
from kdmcp.engine.launch import Flavor, kdnet_target
from kdmcp.engine.results import CommandResult as EngineCommandResult
from kdmcp.errors import DebuggerError, InvalidArgument, KdMcpError, NotConnected, PolicyDenied
from kdmcp.parse import parse
from kdmcp.secret import Secret, SecretSet
from kdmcp.server import models
from kdmcp.server.clients import ClientRegistry
from kdmcp.server.surface import ALL_TOOLS
from kdmcp.server.transcript import FIELD_LIMIT, Transcript
from kdmcp.statefile import KdSessionState, LoadedState, load_state, resolve_state_path

ModelT = TypeVar("ModelT", bound=BaseModel)

# The simulator's default target accepts any well-formed key; this one is for demos only.
DEMO_KEY = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0"
_OUTPUT_READ_MAX = 1024 * 1024


@dataclass
class ServerOptions:
    """How this server was started."""

    config: Config
    config_path: str | None = None
    simulate: bool = False
    scenario: str | None = None  # simulator scenario file (with simulate)
    # HTTP listener clients (None on stdio, where the one client is whoever started us).
    clients: ClientRegistry | None = None
    # The tools a stdio client may use (--tools); listener clients carry their own.
    tools: frozenset[str] = ALL_TOOLS
    transcript: str | None = None  # JSONL transcript path (--transcript / KDMCP_TRANSCRIPT)


def demo_state() -> KdSessionState:
    """The state file ``--simulate`` uses when none is given: the simulator's own target."""
    return KdSessionState(
        schema="winrm-kd-session-v1",
        guest_host="127.0.0.2",
        host_ip="127.0.0.1",
        port=50000,
        key=Secret(DEMO_KEY),
        created_by="kd-mcp --simulate",
    )


class KdMcpApp:
    """Sessions, config and the rules of each tool."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        cfg = options.config
        self.session_config = SessionConfig(
            startup_timeout=cfg.timeouts.startup,
            command_timeout=cfg.timeouts.command,
            break_timeout=cfg.timeouts.break_in,
            stop_timeout=cfg.timeouts.stop,
            inline_output_bytes=cfg.inline_output_bytes,
            backend=cfg.console_backend,
        )
        self.manager = SessionManager(self.session_config, max_sessions=cfg.max_sessions)
        self._lock = threading.Lock()
        self._cursors: dict[str, int] = {}
        self._starting: dict[threading.Event, tuple[DebuggerSession, str | None]] = {}
        # Declared secret fields only: config connection keys (validated KdnetKey), listener tokens.
        self.secrets = SecretSet([c.key for c in cfg.connections.values()])
        if options.clients is not None:
            for token in options.clients.secrets:
                self.secrets.add(token)
        self.transcript = Transcript(options.transcript, self._redact_record) if options.transcript else None
        self._log_pos: dict[str, int] = {}

    # ------------------------------------------------------------ redaction

    def remember_secret(self, secret: Secret) -> None:
        """Mask ``secret`` from now on. Only for values of declared secret fields, validated first
        (a KDNET key, a listener token): anything a caller merely names ``key`` must never get here,
        or one call could mask ordinary text in every client's results. Shorter than any declared
        field allows raises ``ValueError``."""
        self.secrets.add(secret)

    def redact_text(self, text: str) -> str:
        return self.secrets.text(text)

    def _redact_record(self, line: str) -> str:
        """A transcript line (JSON), masked leaf by leaf so no secret can break it; a field the
        transcript capped at ``FIELD_LIMIT`` may end inside a key, so its tail is judged as cut."""
        return self.secrets.json_text(line, cut_length=FIELD_LIMIT)

    def redacted(self, model: BaseModel) -> dict[str, Any]:
        """The model as JSON data with every known secret masked, by value, in every string of it.

        Masked leaf by leaf, not as JSON text: a secret holding a quote cannot break the result.
        """
        data: dict[str, Any] = self.secrets.data(model.model_dump(mode="json"))
        return data

    # -------------------------------------------------------------- helpers

    def debugger_argv(self, flavor: Flavor) -> list[str]:
        """How to run kd/cdb: the simulator with ``--simulate``, else the discovered binary."""
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

    def _session(self, session_id: str | None, owner: str | None, include_ended: bool = False) -> DebuggerSession:
        return self.manager.get(session_id, include_ended=include_ended, owner=owner)

    def _new_events(self, session: DebuggerSession) -> list[DebuggerEvent]:
        """Events since the previous result for this session (each reported once)."""
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

        The last key-length bytes are held back until the session ends: a key still arriving
        would otherwise be written half before it could be recognised.
        """
        if self.transcript is None:
            return
        reach = self.secrets.context_bytes
        for info in self.manager.all_infos():
            session = self.manager.session_of(info.session_id)
            if session is None:
                continue
            done = final or info.state == SessionState.exited
            pos = self._log_pos.get(info.session_id, 0)
            size = session.store.size
            end = size if done else size - reach
            if end <= pos:
                continue
            text, next_pos = self._masked_range(session, pos, end)
            with self.transcript.open_session_log(info.session_id) as log:
                log.write(text)
            self._log_pos[info.session_id] = next_pos

    @staticmethod
    def _prompt(session: DebuggerSession) -> str | None:
        return session.prompt.text if session.prompt is not None else None

    @staticmethod
    def output_id(session_id: str, start: int, end: int) -> str:
        return f"{session_id}:{start}-{end}"

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

    def start_from_state(
        self,
        state_file: str | None,
        initial_break: bool,
        timeout_s: float | None,
        use_target_host: bool,
        cancel: threading.Event | None = None,
        *,
        owner: str | None = None,
    ) -> models.StartResult:
        loaded = self.load_state(state_file)
        state = loaded.state
        self.remember_secret(state.key)
        target = kdnet_target(state.port, state.key, state.guest_host if use_target_host else None,
                              host_field="guest_host")
        return self._start(target, initial_break=initial_break, timeout_s=timeout_s, state_file=str(loaded.path),
                           warnings=loaded.warnings, cancel=cancel, owner=owner)

    def start_kd(
        self,
        port: int | None,
        key: str | None,
        target_host: str | None,
        connection: str | None,
        initial_break: bool,
        timeout_s: float | None,
        cancel: threading.Event | None = None,
        *,
        owner: str | None = None,
    ) -> models.StartResult:
        if connection is not None:
            if port is not None or key is not None:
                raise InvalidArgument("give either a named connection or port/key, not both")
            named = self.options.config.connections.get(connection)
            if named is None:
                known = ", ".join(sorted(self.options.config.connections)) or "none configured"
                raise InvalidArgument(f"no connection named {connection!r} in the config ({known})")
            target = kdnet_target(named.port, named.key, target_host or named.target_host)
        else:
            if port is None or key is None:
                raise InvalidArgument("start_kd needs port and key (or a named connection)")
            target = kdnet_target(port, Secret(key), target_host)
        # Registered only now, after kdnet_target checked its format: a malformed "key" masks nothing.
        self.remember_secret(target.key)
        return self._start(target, initial_break=initial_break, timeout_s=timeout_s, state_file=None, warnings=[],
                           cancel=cancel, owner=owner)

    def _start(
        self,
        target: KdnetTarget,
        *,
        initial_break: bool,
        timeout_s: float | None,
        state_file: str | None,
        warnings: list[str],
        cancel: threading.Event | None = None,
        owner: str | None = None,
    ) -> models.StartResult:
        plan = build_plan(
            self.debugger_argv("kd"), target, symbol_path=self.options.config.symbol_path, initial_break=initial_break,
            # -noshell unless the caller's policy allows host commands: a second wall behind the policy.
            extra_args=launch_flags(self.profile_for(owner)),
        )
        session = self.manager.create(plan, owner=owner)
        if self.transcript is not None:
            self.transcript.record("session", event="created", session_id=session.session_id,
                                   command_line=plan.display, owner=owner)
        if cancel is not None:
            with self._lock:
                self._starting[cancel] = (session, owner)
        try:
            result = session.start(timeout_s)
        finally:
            if cancel is not None:
                with self._lock:
                    self._starting.pop(cancel, None)
        if result.state in (SessionState.waiting_for_target, SessionState.starting):
            # kd would wait forever; the session would hold a slot and a KDNET port.
            stop = self.manager.stop(session.session_id, resume=False, owner=owner)
            raise NotConnected(
                f"no target answered within {(timeout_s or self.session_config.startup_timeout):g}s on port "
                f"{target.port} (kd is still printing 'Waiting to reconnect...'): check the key, the port, "
                "the guest's bcdedit /dbgsettings and the host firewall. The debugger was stopped "
                f"({', '.join(stop.actions) or 'exited'}).",
                session_id=session.session_id,
                state=SessionState.exited,
            )
        if result.state == SessionState.exited:
            self.manager.stop(session.session_id, owner=owner)
            raise DebuggerError(
                f"the debugger exited during start (code {result.exit_code}): {result.banner[-500:]}",
                session_id=session.session_id,
                state=SessionState.exited,
            )
        limit = self.session_config.inline_output_bytes
        return models.StartResult(
            session_id=session.session_id,
            state=result.state,
            prompt=result.prompt.text if result.prompt is not None else None,
            events=self._new_events(session),
            elapsed_ms=result.elapsed_ms,
            command_line=result.command_line,
            banner=result.banner[:limit],
            truncated=len(result.banner) > limit,
            state_file=state_file,
            warnings=warnings,
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
        """Refuse a malformed line as such first, then anything the caller's profile denies."""
        problem = validate(command)
        if problem is not None:
            raise InvalidArgument(problem, session_id=session_id)
        roots = (*DEFAULT_NETWORK_ROOTS, *self.options.config.network_roots)
        verdict = check(command, self.profile_for(owner), roots)
        if not verdict.allowed:
            raise PolicyDenied(verdict.message, session_id=session_id)

    def kd_command(
        self, command: str, session_id: str | None, timeout_s: float | None, *, owner: str | None = None
    ) -> models.CommandResult:
        session = self._session(session_id, owner)
        self.enforce_policy(command, owner, session.session_id)
        result = session.execute(command, timeout_s)
        return self._command_result(session, result)

    def _command_result(self, session: DebuggerSession, result: EngineCommandResult) -> models.CommandResult:
        record: dict[str, Any] | None = None
        if result.kind == "immediate":
            record = parse(result.command, result.output).model_dump(mode="json", exclude={"raw"})
        return models.CommandResult(
            session_id=session.session_id,
            state=result.state,
            prompt=result.prompt.text if result.prompt is not None else None,
            events=self._new_events(session),
            elapsed_ms=result.elapsed_ms,
            command=result.command,
            output=result.output,
            truncated=result.truncated,
            output_id=self.output_id(session.session_id, result.output_offset, result.output_end),
            output_offset=result.output_offset,
            output_end=result.output_end,
            output_bytes=result.output_end - result.output_offset,
            record=record,
            record_partial=record is not None and result.truncated,
        )

    def inspect(
        self,
        command: str,
        session_id: str | None,
        limit: int,
        timeout_s: float | None = None,
        *,
        owner: str | None = None,
    ) -> models.InspectResult:
        """Run one read command and return its typed record, each list cut to ``limit`` items."""
        base = self.kd_command(command, session_id, timeout_s, owner=owner)
        record = dict(base.record or {})
        lists: dict[str, models.ListCount] = {}
        for name, value in list(record.items()):
            if isinstance(value, list) and value:
                lists[name] = models.ListCount(total=len(value), returned=min(len(value), limit))
                record[name] = value[:limit]
        return models.InspectResult(**{**base.model_dump(), "record": record, "lists": lists})

    def break_in(
        self, session_id: str | None, timeout_s: float | None, *, owner: str | None = None
    ) -> models.BreakResult:
        session = self._session(session_id, owner)
        result = session.break_in(timeout_s)
        return models.BreakResult(
            session_id=session.session_id,
            state=result.state,
            prompt=self._prompt(session),
            events=self._new_events(session),
            elapsed_ms=result.elapsed_ms,
            already_broken=result.already_broken,
        )

    def continue_go(self, session_id: str | None, command: str, *, owner: str | None = None) -> models.ContinueResult:
        session = self._session(session_id, owner)
        self.enforce_policy(command, owner, session.session_id)
        result = session.go(command)
        return models.ContinueResult(
            session_id=session.session_id,
            state=result.state,
            prompt=self._prompt(session),
            events=self._new_events(session),
            elapsed_ms=result.elapsed_ms,
            confirmed=result.confirmed,
        )

    def resume_for_winrm(
        self,
        session_id: str | None,
        wait_s: float | None,
        cancel: threading.Event | None = None,
        *,
        owner: str | None = None,
    ) -> models.ResumeResult:
        """Continue, confirm running, then watch the target for ``wait_s`` before handing back.

        WinRM on the guest cannot answer while the kernel is broken in; after this returns
        ``running``, the caller's WinRM call should succeed. The wait ends early if the target
        stops again (breakpoint, bugcheck), which the hint then says.
        """
        t0 = time.monotonic()
        session = self._session(session_id, owner)
        self.enforce_policy("g", owner, session.session_id)
        wait = self.options.config.timeouts.continue_wait_sec if wait_s is None else wait_s
        # Already running: nothing to resume.
        confirmed = "running" if session.state == SessionState.running else session.go("g").confirmed
        waited_from = time.monotonic()
        session.wait_for(
            lambda: session.state != SessionState.running or (cancel is not None and cancel.is_set()), wait
        )
        waited = time.monotonic() - waited_from
        state = session.state
        if state == SessionState.running:
            hint = (
                "The target is running: retry the WinRM call now. Call break_in when you need the "
                "debugger again (WinRM stops answering while the target is broken in)."
            )
        elif state in (SessionState.rebooting, SessionState.reconnecting, SessionState.waiting_for_target):
            hint = "The guest is rebooting: wait for it to come back (the session reconnects), then retry WinRM."
        elif state == SessionState.broken:
            hint = (
                "The target stopped again (see events: breakpoint, exception or bugcheck): WinRM will not "
                "answer until it runs. Inspect it with kd_command, then resume_for_winrm again."
            )
        else:
            hint = f"The session is {state.value}: WinRM cannot be relied on; see events."
        return models.ResumeResult(
            session_id=session.session_id,
            state=state,
            prompt=self._prompt(session),
            events=self._new_events(session),
            elapsed_ms=round((time.monotonic() - t0) * 1000, 3),
            confirmed=confirmed,
            waited_s=round(waited, 3),
            hint=hint,
        )

    # --------------------------------------------------------------- output

    def read_output(
        self, session_id: str | None, output_id: str | None, offset: int, limit: int, *, owner: str | None = None
    ) -> models.OutputChunk:
        end_cap: int | None = None
        if output_id is not None:
            sid, _, span = output_id.partition(":")
            start_text, _, end_text = span.partition("-")
            if not sid or not start_text.isdigit() or not end_text.isdigit():
                raise InvalidArgument(f"malformed output_id {output_id!r} (expected SESSION:START-END)")
            if session_id is not None and session_id != sid:
                raise InvalidArgument(f"output_id {output_id!r} belongs to session {sid}, not {session_id}")
            session_id = sid
            offset += int(start_text)
            end_cap = int(end_text)
        session = self._session(session_id, owner, include_ended=True)
        total = session.store.size
        if offset > total:
            raise InvalidArgument(f"offset {offset} is past the end of the output ({total} bytes)")
        stop = total if end_cap is None else min(end_cap, total)
        end = min(stop, offset + min(limit, _OUTPUT_READ_MAX))
        text, next_offset = self._masked_range(session, offset, end)
        return models.OutputChunk(
            session_id=session.session_id,
            state=session.state,
            offset=offset,
            next_offset=next_offset,
            total_bytes=total,
            eof=next_offset >= stop,
            text=text,
        )

    def _masked_range(self, session: DebuggerSession, offset: int, end: int) -> tuple[str, int]:
        """Bytes ``[offset, end)`` as text with every byte of every known secret masked, and where to read next.

        The store keeps raw bytes, and kd prints the key (``version`` echoes its command line).
        Each window is judged against the whole store, not against itself or an ``output_id``'s
        end: a key the window only starts, ends or sits inside is still recognised, and its
        share of the window masked (``SecretSet.byte_range``). A live session's last bytes that
        begin a key are held back until the rest arrives.
        """
        final = session.state == SessionState.exited  # nothing more will arrive to finish a key
        return self.secrets.byte_range(session.read_output, session.store.size, offset, end, final=final)

    # ----------------------------------------------------------------- stop

    def stop_kd(self, session_id: str | None, resume: bool, *, owner: str | None = None) -> models.StopResult:
        session = self._session(session_id, owner)
        result = self.manager.stop(session.session_id, resume=resume, owner=owner)
        if self.transcript is not None:
            self.transcript.record("session", event="stopped", session_id=session.session_id,
                                   actions=result.actions, exit_code=result.exit_code)
        return models.StopResult(
            session_id=session.session_id,
            state=result.state,
            actions=result.actions,
            exit_code=result.exit_code,
            elapsed_ms=result.elapsed_ms,
        )

    def list_sessions(self, *, owner: str | None = None) -> models.SessionList:
        return models.SessionList(sessions=self._summaries(owner), max_sessions=self.manager.max_sessions)

    def _summaries(self, owner: str | None) -> list[models.SessionSummary]:
        infos = self.manager.infos(owner=owner)
        live = {s.session_id for s in infos if s.state != SessionState.exited}
        return [
            models.SessionSummary(
                session_id=info.session_id,
                state=info.state,
                live=info.session_id in live,
                command_line=info.command_line,
                pid=info.pid,
                output_bytes=info.output_bytes,
                started_at_unix=info.started_at_unix,
            )
            for info in infos
        ]

    def health_check(self, *, owner: str | None = None) -> models.HealthResult:
        checks: list[models.DebuggerCheck] = []
        for flavor in ("kd", "cdb"):
            if self.options.simulate:
                checks.append(models.DebuggerCheck(
                    name=flavor, found=True, path=" ".join(simulator_command(flavor)), source="simulator",
                    version="kdmcp.sim (simulated 10.0.26100.1)",
                ))
                continue
            found = find_debugger(flavor, getattr(self.options.config.debuggers, flavor))
            checks.append(models.DebuggerCheck(
                name=flavor, found=found.path is not None, path=found.path, source=found.source,
                version=file_version(found.path) if found.path else None, looked_in=found.looked_in,
            ))
        state_path: str | None = None
        state_ok, state_error, state_warnings = False, None, []
        try:
            loaded = self.load_state(None)
            state_path, state_ok, state_warnings = str(loaded.path), True, loaded.warnings
            self.remember_secret(loaded.state.key)
        except KdMcpError as exc:
            state_error = exc.message
        return models.HealthResult(
            ok=checks[0].found and state_ok,
            simulated=self.options.simulate,
            debuggers=checks,
            config_path=self.options.config_path,
            config_ok=True,
            state_file=state_path,
            state_file_ok=state_ok,
            state_file_error=state_error,
            state_file_warnings=state_warnings,
            sessions=self._summaries(owner),
        )

    def shutdown(self) -> None:
        """Stop every session (resuming live kernel targets) as the server exits."""
        self.flush_session_logs()
        self.manager.stop_all(keep_ended=self.transcript is not None)
        if self.transcript is not None:
            self.flush_session_logs(final=True)
            self.transcript.record("stop")
            self.transcript.close()
            self.manager.stop_all()  # the session logs are copied: free the ended sessions' spill files

