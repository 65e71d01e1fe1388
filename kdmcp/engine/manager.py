"""Sessions by id: creation under a limit, lookup, and the ones that ended.

A kernel debugger is a heavy, stateful thing (one KDNET port, one guest): the limit keeps an
agent from piling up debuggers it forgot. Ended sessions stay readable (their output is
kept) until pushed out by newer ones, but do not count against the limit.

Each session has an owner (the client that started it; None on stdio, where there is one
client). A session is invisible to every other owner: its id reads as unknown to them.

A session's last use (its start, and every lookup a tool makes) is kept, so a server whose
clients come and go (the HTTP listener) can stop what nobody has used for a while (``idle``).
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from collections.abc import Callable

from kdmcp.console import BackendName, Console, SpawnSpec, open_console
from kdmcp.engine.config import SessionConfig
from kdmcp.engine.events import SessionState
from kdmcp.engine.launch import LaunchPlan
from kdmcp.engine.results import SessionInfo, StopResult
from kdmcp.engine.session import DebuggerSession
from kdmcp.errors import CapacityError, UnknownSession

_log = logging.getLogger(__name__)
DEFAULT_MAX_SESSIONS = 4
_STOP_MARGIN_S = 3.0  # beyond a stop's own bound: its pump's last read and the exit's record
_ENDED_KEPT = 8


class SessionManager:
    """Owns every session of the server."""

    def __init__(
        self,
        config: SessionConfig | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        console_factory: Callable[[SpawnSpec, BackendName], Console] = open_console,
    ) -> None:
        self.config = config or SessionConfig()
        self.max_sessions = max_sessions
        self._factory = console_factory
        self._lock = threading.Lock()
        self._live: dict[str, DebuggerSession] = {}
        self._ended: collections.OrderedDict[str, DebuggerSession] = collections.OrderedDict()
        self._ids = itertools.count(1)
        self._owners: dict[str, str | None] = {}
        self._used: dict[str, float] = {}  # live session -> time.monotonic() of its last use

    def create(
        self, plan: LaunchPlan, config: SessionConfig | None = None, owner: str | None = None
    ) -> DebuggerSession:
        """Reserve a slot and make a session (not yet started: call ``start``)."""
        with self._lock:
            self._reap_locked()
            if len(self._live) >= self.max_sessions:
                raise CapacityError(self._full_locked(owner))
            session_id = f"s{next(self._ids)}"
            session = DebuggerSession(session_id, plan, config or self.config, self._factory)
            self._live[session_id] = session
            self._owners[session_id] = owner
            self._used[session_id] = time.monotonic()
            return session

    def _full_locked(self, owner: str | None) -> str:
        """Which sessions hold the slots, and what frees one: the caller's own by id, others' by count."""
        mine = [sid for sid in self._live if self._owners.get(sid) == owner]  # in creation order: s1, s2, ...
        others = len(self._live) - len(mine)
        described = (f"{sid} ({self._live[sid].plan.kind}, {self._live[sid].state.value})" for sid in mine)
        held = [f"yours: {', '.join(described)}"] if mine else []
        held += [f"{others} of another client's" if others == 1 else f"{others} of other clients'"] if others else []
        what = (f"stop_kd session_id={mine[0]} (or another of yours) frees a slot" if mine else
                "only their clients can stop them (or the server's idle stop, docs/remote-listener.md)")
        return (f"{len(self._live)} sessions are live, the limit (max_sessions {self.max_sessions}): "
                f"{'; '.join(held)}; {what}")

    def get(
        self, session_id: str | None = None, include_ended: bool = False, owner: str | None = None
    ) -> DebuggerSession:
        """The owner's session with that id; with no id, the owner's only live one."""
        with self._lock:
            if session_id is None:
                live = {sid: s for sid, s in self._live.items() if self._owners.get(sid) == owner}
                if len(live) == 1:
                    only = next(iter(live.values()))
                    self._used[only.session_id] = time.monotonic()
                    return only
                if not live:
                    raise UnknownSession("no session is live: start one first")
                raise UnknownSession(f"{len(live)} sessions are live ({', '.join(sorted(live))}): "
                                     "name one with session_id")
            if session_id in self._owners and self._owners[session_id] == owner:
                if session_id in self._live:
                    self._used[session_id] = time.monotonic()
                    return self._live[session_id]
                if include_ended and session_id in self._ended:
                    return self._ended[session_id]
            raise UnknownSession(f"no session {session_id!r}", session_id=session_id)

    def stop(self, session_id: str | None = None, resume: bool = True, owner: str | None = None) -> StopResult:
        session = self.get(session_id, owner=owner)
        result = session.stop(resume=resume)
        with self._lock:
            self._retire_locked(session)
        return result

    def infos(self, owner: str | None = None) -> list[SessionInfo]:
        with self._lock:
            sessions = [
                s for s in [*self._live.values(), *self._ended.values()] if self._owners.get(s.session_id) == owner
            ]
        return [
            SessionInfo(
                session_id=s.session_id,
                state=s.state,
                kind=s.plan.kind,
                attached_to=s.plan.attached_to,
                command_line=s.plan.display,
                pid=s.pid,
                output_bytes=s.store.size,
                started_at_unix=s.started_at,
            )
            for s in sessions
        ]

    def live(self) -> list[DebuggerSession]:
        """The live sessions, whoever owns them (server bookkeeping only)."""
        with self._lock:
            return list(self._live.values())

    def stop_all(
        self,
        keep_ended: bool = False,
        *,
        forced: threading.Event | None = None,
        on_stopped: Callable[[DebuggerSession, StopResult], None] | None = None,
    ) -> int:
        """Stop every live session (server shutdown), each as its kind requires, all at once.

        Each session's ``stop`` (resume a guest, close a dump, detach a process) runs on a
        thread of its own, so the whole takes one ``timeouts.stop`` (a stop's worst case is
        four thirds of it, when quit and terminate both go unanswered), not one per session.
        ``forced`` set meanwhile (a second signal) kills every debugger still stopping; a stop
        that has not finished by the bound is killed too. ``on_stopped`` hears each result, a
        killed one's included. Returns how many sessions were stopped. ``keep_ended``: leave
        the ended sessions' output readable (a transcript still copies it); otherwise their
        spill files are freed now.
        """
        live = self.live()
        results: dict[str, StopResult] = {}

        def stop_one(session: DebuggerSession) -> None:
            try:
                result = session.stop()
            except Exception:  # a bug must not leave the debugger running: the wedged path kills it
                _log.exception("stopping %s failed", session.session_id)
                return
            with self._lock:
                self._retire_locked(session)
                results[session.session_id] = result
            if on_stopped is not None:
                on_stopped(session, result)

        threads = [threading.Thread(target=stop_one, args=(s,), name=f"kdmcp-stop-{s.session_id}", daemon=True)
                   for s in live]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + self.config.stop_timeout * 4 / 3 + _STOP_MARGIN_S
        while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
            if forced is not None and forced.wait(0.05):
                break
            for thread in threads:
                thread.join(0.05)
        if any(t.is_alive() for t in threads) or len(results) < len(live):
            for session in live:
                session.kill_now()
            until = time.monotonic() + _STOP_MARGIN_S
            for thread in threads:
                thread.join(max(0.0, until - time.monotonic()))
        for session in live:
            if session.session_id not in results:  # its stop is wedged: say what was done
                with self._lock:
                    self._retire_locked(session)
                killed = StopResult(actions=["killed (its stop did not finish)"], state=session.state,
                                    exit_code=session.exit_code, elapsed_ms=0.0,
                                    left="killed before the stop finished: the target's state is unknown")
                results[session.session_id] = killed
                if on_stopped is not None:
                    on_stopped(session, killed)
        if not keep_ended:
            with self._lock:
                for session in self._ended.values():
                    session.store.close()
                self._ended.clear()
        return len(live)

    def idle(self, idle_s: float, now: float | None = None) -> list[tuple[str, str | None]]:
        """Live sessions of a named owner (a listener client) unused for ``idle_s`` or more: (id, owner).

        Sessions of the stdio client (owner None) are never idle here: they end with their client.
        """
        now = time.monotonic() if now is None else now
        with self._lock:
            return [(sid, self._owners.get(sid)) for sid in self._live
                    if self._owners.get(sid) is not None and now - self._used.get(sid, now) >= idle_s]

    def all_infos(self) -> list[SessionInfo]:
        """Every session, whoever owns it (for the server's own bookkeeping, never for callers)."""
        with self._lock:
            owners = set(self._owners.values())
        return [info for owner in owners for info in self.infos(owner=owner)]

    def session_of(self, session_id: str) -> DebuggerSession | None:
        """A session by id, whoever owns it (server bookkeeping only)."""
        with self._lock:
            return self._live.get(session_id) or self._ended.get(session_id)

    def _reap_locked(self) -> None:
        """Sessions whose debugger died on its own stop counting against the limit."""
        for session in [s for s in self._live.values() if s.state == SessionState.exited]:
            self._retire_locked(session)

    def _retire_locked(self, session: DebuggerSession) -> None:
        self._live.pop(session.session_id, None)
        self._used.pop(session.session_id, None)
        self._ended[session.session_id] = session
        while len(self._ended) > _ENDED_KEPT:
            old_id, old = self._ended.popitem(last=False)
            self._owners.pop(old_id, None)
            old.store.close()
